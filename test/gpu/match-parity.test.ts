// GPU counts equal CPU counts exactly: the match kernel (shaders/match.wgsl) against fallback/engine.ts,
// counter for counter (the event-driven sampler: simulateRange), over fixtures, lineup kinds, seeds, draw
// offsets and counts that are not multiples of the workgroup size, alone and packed into one dispatch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulateRange } from '../../fallback/engine.js';
import { chooseAdapter } from '../../gpu/adapter.js';
import { type OpenedDevice, openDevice } from '../../gpu/device.js';
import {
  createMatchDispatcher,
  MATCH_DEVICE_NEEDS,
  MATCH_WORKGROUP_SIZE,
  type MatchDispatcher,
  type MatchRun,
} from '../../gpu/match-dispatch.js';
import { compileFixture } from '../../src/engine/compile.js';
import {
  AWAY,
  C_TEAM,
  COUNTER_WORDS,
  type CompiledFixture,
  type EngineSeed,
  HOME,
  TEAM_COUNTERS,
  TEAM_REDS,
  TEAM_YELLOWS,
} from '../../src/engine/contract/layout.js';
import type { MatchInputs, SideInputs } from '../../src/engine/contract/match-inputs.js';
import { defaultModelParams, type ModelParams } from '../../src/engine/contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from '../engine/plausible-teams.js';

const chosen = await chooseAdapter({ mode: 'gpu' });
if (!chosen) console.warn('GPU parity tests skipped: no WebGPU adapter (not even llvmpipe) on this host');

function cpuCounters(
  tables: CompiledFixture,
  seed: EngineSeed,
  firstDraw: number,
  drawCount: number,
): Uint32Array {
  const counters = new Uint32Array(COUNTER_WORDS);
  simulateRange(tables, seed, firstDraw, firstDraw + drawCount, counters);
  return counters;
}

/** A run of a compiled fixture, with the tables the kernel reads. */
interface ParityRun extends MatchRun {
  tables: CompiledFixture;
}

/** No labelled positions: predicted XIs are 11 picks over the whole squad. */
function unlabelled(side: SideInputs): SideInputs {
  return { ...side, players: side.players.map((player) => ({ ...player, position: null })) };
}

/** A custom XI with a short bench that starts with a goalkeeper (skipped when substituting). */
function customLineup(side: SideInputs): SideInputs {
  const announced = withAnnouncedLineup(side).lineup;
  const keeperOnBench = side.players.find(
    (player) => player.position === 'goalkeeper' && !announced.xi.includes(player.player_id),
  );
  const bench = [
    keeperOnBench!.player_id,
    ...announced.bench.filter((id) => id !== keeperOnBench!.player_id),
  ];
  return { ...side, lineup: { ...announced, source: 'custom', bench: bench.slice(0, 4) } };
}

/** Cards, red cards and substitutions far more often than in football, to exercise those paths. */
const eventfulParams: ModelParams = {
  ...defaultModelParams,
  cards: {
    ...defaultModelParams.cards,
    yellow_per_match: { home: 7, away: 8 },
    straight_red_per_match: { home: 1.5, away: 2 },
  },
};

function fixture(id: number, homeAttack: number, awayAttack: number): MatchInputs {
  return plausibleFixture(
    id,
    { teamId: 2 * id, attack: homeAttack, defence: -homeAttack / 2 },
    { teamId: 2 * id + 1, attack: awayAttack, defence: -awayAttack / 2 },
  );
}

const even = fixture(1, 0, 0);
const mismatch = fixture(2, 1.2, -0.8); // many home goals: the 10+ cells and goal squares
const lineupKinds = fixture(3, 0.3, 0.1);

const compiled = {
  predicted: compileFixture(even, defaultModelParams),
  announced: compileFixture(
    {
      ...lineupKinds,
      home: withAnnouncedLineup(lineupKinds.home),
      away: withAnnouncedLineup(lineupKinds.away),
    },
    defaultModelParams,
  ),
  mixed: compileFixture({ ...lineupKinds, home: customLineup(lineupKinds.home) }, defaultModelParams),
  unlabelled: compileFixture(
    { ...even, home: unlabelled(even.home), away: unlabelled(even.away) },
    defaultModelParams,
  ),
  mismatch: compileFixture(mismatch, defaultModelParams),
  eventful: compileFixture({ ...lineupKinds, away: customLineup(lineupKinds.away) }, eventfulParams),
};

describe.skipIf(!chosen)(`match kernel parity on ${chosen?.description ?? 'no adapter'}`, () => {
  let opened: OpenedDevice;
  beforeAll(async () => {
    opened = await openDevice(chosen!, MATCH_DEVICE_NEEDS);
  });
  afterAll(() => {
    opened?.device.destroy();
  });
  kernelParity(() => opened);
});

function kernelParity(device: () => OpenedDevice): void {
  let dispatcher: MatchDispatcher;
  beforeAll(async () => {
    dispatcher = await createMatchDispatcher(device());
  });
  afterAll(() => {
    dispatcher?.destroy();
  });
  const expected = (run: ParityRun) => cpuCounters(run.tables, run.seed, run.firstDraw, run.drawCount);

  const single: [string, CompiledFixture, EngineSeed, number, number][] = [
    ['predicted lineups', compiled.predicted, { lo: 0x12345678, hi: 0x9abcdef0 }, 0, 1000],
    ['announced lineups, from draw 5', compiled.announced, { lo: 7, hi: 0 }, 5, 777],
    ['custom home lineup, predicted away', compiled.mixed, { lo: 0xffffffff, hi: 0xffffffff }, 0, 321],
    ['unlabelled goalkeepers', compiled.unlabelled, { lo: 1, hi: 0 }, 0, MATCH_WORKGROUP_SIZE + 1],
    ['lopsided ratings', compiled.mismatch, { lo: 99, hi: 3 }, 1_000_000, 300],
    ['frequent cards and red cards', compiled.eventful, { lo: 5, hi: 8 }, 0, 700],
    ['a single draw', compiled.predicted, { lo: 2, hi: 2 }, 41, 1],
  ];
  for (const [name, tables, seed, firstDraw, drawCount] of single) {
    it(`${name}: ${drawCount} draws`, async () => {
      const run: ParityRun = { tables, seed, firstDraw, drawCount };
      const result = await dispatcher.dispatch([run]);
      expect(result.counters[0]).toEqual(expected(run));
    });
  }

  it('a batch of fixtures packed into one dispatch', async () => {
    const runs: ParityRun[] = [
      { tables: compiled.predicted, seed: { lo: 11, hi: 0 }, firstDraw: 0, drawCount: 63 },
      { tables: compiled.announced, seed: { lo: 12, hi: 0 }, firstDraw: 0, drawCount: 64 },
      { tables: compiled.mismatch, seed: { lo: 13, hi: 0 }, firstDraw: 0, drawCount: 65 },
      { tables: compiled.eventful, seed: { lo: 14, hi: 0 }, firstDraw: 0, drawCount: 200 },
      { tables: compiled.predicted, seed: { lo: 15, hi: 0 }, firstDraw: 0, drawCount: 1 },
      { tables: compiled.unlabelled, seed: { lo: 16, hi: 1 }, firstDraw: 3, drawCount: 150 },
    ];
    const result = await dispatcher.dispatch(runs);
    expect(result.counters).toHaveLength(runs.length);
    runs.forEach((run, index) => {
      expect(result.counters[index]).toEqual(expected(run));
    });
  });

  it('2-D grids: rows of 4 workgroups, the last row overhanging', async () => {
    const narrow = await createMatchDispatcher(device(), { gridWidth: 4 });
    try {
      // 16 workgroups: a full 4 x 4 grid.
      const square: ParityRun = {
        tables: compiled.predicted,
        seed: { lo: 31, hi: 0 },
        firstDraw: 0,
        drawCount: 16 * MATCH_WORKGROUP_SIZE,
      };
      expect((await narrow.dispatch([square])).counters[0]).toEqual(expected(square));
      // 2 + 9 + 6 = 17 workgroups: a 4 x 5 grid whose last three workgroups have no run.
      const packed: ParityRun[] = [
        { tables: compiled.announced, seed: { lo: 32, hi: 0 }, firstDraw: 0, drawCount: 100 },
        {
          tables: compiled.eventful,
          seed: { lo: 33, hi: 0 },
          firstDraw: 0,
          drawCount: 9 * MATCH_WORKGROUP_SIZE,
        },
        {
          tables: compiled.mixed,
          seed: { lo: 34, hi: 0 },
          firstDraw: 0,
          drawCount: 5 * MATCH_WORKGROUP_SIZE + 1,
        },
      ];
      const overhang = await narrow.dispatch(packed);
      packed.forEach((run, index) => {
        expect(overhang.counters[index]).toEqual(expected(run));
      });
    } finally {
      narrow.destroy();
    }
  });

  it('sixteen seeds across the 32-bit range, each its own run in one dispatch', async () => {
    const fixtures = [compiled.eventful, compiled.mismatch, compiled.mixed, compiled.unlabelled];
    const runs: ParityRun[] = Array.from({ length: 16 }, (_, i) => ({
      tables: fixtures[i % fixtures.length]!,
      // Spread over both words by a multiplicative hash of i (Knuth's 2654435761).
      seed: { lo: Math.imul(i + 1, 0x9e3779b1) >>> 0, hi: Math.imul(i + 7, 0x85ebca6b) >>> 0 },
      firstDraw: i * 1000,
      drawCount: 40 + 7 * i,
    }));
    const result = await dispatcher.dispatch(runs);
    runs.forEach((run, index) => {
      expect(result.counters[index]).toEqual(expected(run));
    });
  });

  it('draw ranges add up: [0, 300) equals [0, 170) + [170, 300)', async () => {
    const seed = { lo: 21, hi: 22 };
    const result = await dispatcher.dispatch([
      { tables: compiled.eventful, seed, firstDraw: 0, drawCount: 170 },
      { tables: compiled.eventful, seed, firstDraw: 170, drawCount: 130 },
    ]);
    const [first, second] = result.counters;
    const summed = first!.map((value, index) => (value + second![index]!) >>> 0);
    expect(summed).toEqual(expected({ tables: compiled.eventful, seed, firstDraw: 0, drawCount: 300 }));
  });

  it('the eventful model really sends players off and books them twice, so those paths are compared', () => {
    const counters = expected({
      tables: compiled.eventful,
      seed: { lo: 5, hi: 8 },
      firstDraw: 0,
      drawCount: 200,
    });
    const reds = (side: number) => counters[C_TEAM + side * TEAM_COUNTERS + TEAM_REDS]!;
    const yellows = (side: number) => counters[C_TEAM + side * TEAM_COUNTERS + TEAM_YELLOWS]!;
    expect(reds(HOME) + reds(AWAY)).toBeGreaterThan(200);
    expect(yellows(HOME) + yellows(AWAY)).toBeGreaterThan(2000);
  });
}
