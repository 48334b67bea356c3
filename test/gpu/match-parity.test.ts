// GPU counts equal CPU counts exactly: the match kernel (shaders/match.wgsl) against fallback/engine.ts,
// counter for counter (the event-driven sampler: simulateRange), over fixtures, lineup kinds, seeds, draw
// offsets and counts that are not multiples of the workgroup size, alone and packed into one dispatch.
// The cases live in src/cli/gpu-check/parity-cases.ts, which `matchsim gpu-check` runs on GPU hosts too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseAdapter } from '../../gpu/adapter.js';
import { type OpenedDevice, openDevice } from '../../gpu/device.js';
import { createMatchDispatcher, MATCH_DEVICE_NEEDS, type MatchDispatcher } from '../../gpu/match-dispatch.js';
import {
  comparableCounters,
  cpuCounters,
  expectedCounters,
  parityCases,
  parityFixtures,
} from '../../src/cli/gpu-check/parity-cases.js';
import {
  AWAY,
  C_TEAM,
  HOME,
  TEAM_COUNTERS,
  TEAM_REDS,
  TEAM_YELLOWS,
} from '../../src/engine-contract/layout.js';

const chosen = await chooseAdapter({ mode: 'gpu' });
if (!chosen) console.warn('GPU parity tests skipped: no WebGPU adapter (not even llvmpipe) on this host');

const fixtures = parityFixtures();

describe.skipIf(!chosen)(`match kernel parity on ${chosen?.description ?? 'no adapter'}`, () => {
  let opened: OpenedDevice;
  let dispatcher: MatchDispatcher;
  /** Dispatchers with narrowed grid rows, by width. */
  const narrow = new Map<number, MatchDispatcher>();
  beforeAll(async () => {
    opened = await openDevice(chosen!, MATCH_DEVICE_NEEDS);
    dispatcher = await createMatchDispatcher(opened);
  });
  afterAll(() => {
    dispatcher?.destroy();
    for (const each of narrow.values()) each.destroy();
    opened?.device.destroy();
  });

  for (const parityCase of parityCases(fixtures)) {
    it(parityCase.name, async () => {
      const { gridWidth } = parityCase;
      let chosenDispatcher = dispatcher;
      if (gridWidth !== undefined) {
        if (!narrow.has(gridWidth)) narrow.set(gridWidth, await createMatchDispatcher(opened, { gridWidth }));
        chosenDispatcher = narrow.get(gridWidth)!;
      }
      const result = await chosenDispatcher.dispatch(parityCase.runs);
      expect(result.counters).toHaveLength(parityCase.runs.length);
      expect(comparableCounters(parityCase, result.counters)).toEqual(expectedCounters(parityCase));
    });
  }

  it('opens the device with all the workgroup memory the adapter offers, and refuses an adapter offering less than the kernel needs', async () => {
    const offered = chosen!.adapter.limits.maxComputeWorkgroupStorageSize;
    expect(offered).toBeGreaterThanOrEqual(MATCH_DEVICE_NEEDS.workgroupStorageBytes);
    expect(opened.device.limits.maxComputeWorkgroupStorageSize).toBe(offered);
    await expect(
      openDevice(chosen!, { ...MATCH_DEVICE_NEEDS, workgroupStorageBytes: offered + 4 }),
    ).rejects.toThrow(/maxComputeWorkgroupStorageSize/);
  });

  it('the eventful model really sends players off and books them twice, so those paths are compared', () => {
    const counters = cpuCounters(fixtures.eventful, { lo: 5, hi: 8 }, 0, 200);
    const reds = (side: number) => counters[C_TEAM + side * TEAM_COUNTERS + TEAM_REDS]!;
    const yellows = (side: number) => counters[C_TEAM + side * TEAM_COUNTERS + TEAM_YELLOWS]!;
    expect(reds(HOME) + reds(AWAY)).toBeGreaterThan(200);
    expect(yellows(HOME) + yellows(AWAY)).toBeGreaterThan(2000);
  });
});
