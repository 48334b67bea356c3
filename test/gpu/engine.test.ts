// The GPU engine end to end: worker thread, packed batches, state object, and a real device loss
// (the device destroyed under a dispatch) with the jobs retried on the CPU and the worker restarted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../fallback/cpu-engine.js';
import { simulateRange } from '../../fallback/engine.js';
import { chooseAdapter } from '../../gpu/adapter.js';
import { createGpuEngine, type GpuEngine } from '../../gpu/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import {
  COUNTER_WORDS,
  type CompiledFixture,
  type EngineSeed,
  finalizeCounters,
} from '../../src/engine-contract/layout.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from '../engine/plausible-teams.js';

const chosen = await chooseAdapter({ mode: 'gpu' });
if (!chosen) console.warn('GPU engine tests skipped: no WebGPU adapter (not even llvmpipe) on this host');

function cpuCounts(compiled: CompiledFixture, seed: EngineSeed, draws: number): Uint32Array {
  const counters = new Uint32Array(COUNTER_WORDS);
  simulateRange(compiled, seed, 0, draws, counters);
  finalizeCounters(counters);
  return counters;
}

/** The real CPU engine, inline (no threads), as the GPU engine's fallback for device losses. */
const cpuEngine = createCpuEngine({ threads: 0 });

const fixtures: CompiledFixture[] = [0, 1, 2].map((index) => {
  const inputs = plausibleFixture(
    100 + index,
    { teamId: 20 + 2 * index, attack: 0.1 * index, defence: -0.05 * index },
    { teamId: 21 + 2 * index, attack: -0.1 * index, defence: 0.1 },
  );
  // One predicted, one announced on both sides, one mixed.
  if (index === 0) return compileFixture(inputs, defaultModelParams);
  const home = withAnnouncedLineup(inputs.home);
  const away = index === 1 ? withAnnouncedLineup(inputs.away) : inputs.away;
  return compileFixture({ ...inputs, home, away }, defaultModelParams);
});

describe.skipIf(!chosen)(`GPU engine on ${chosen?.description ?? 'no adapter'}`, () => {
  let engine: GpuEngine;
  beforeAll(async () => {
    engine = createGpuEngine({ mode: 'gpu', fallback: cpuEngine, restartDelayMs: 50 });
    await engine.started();
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('reports a ready state with the adapter it chose', () => {
    const state = engine.state();
    expect(state.state).toBe('ready');
    expect(state.adapter).toBe(chosen!.description);
    expect(state.restarts).toBe(0);
  });

  it('packs a batch of fixtures into one dispatch with counts equal to the CPU engine', async () => {
    const before = engine.state().dispatches;
    const jobs = [
      { compiled: fixtures[0]!, draws: 1000, seed: { lo: 1, hi: 2 } },
      { compiled: fixtures[1]!, draws: 129, seed: { lo: 0xfffffffe, hi: 0x80000000 } },
      { compiled: fixtures[2]!, draws: 1100, seed: { lo: 42, hi: 0 } },
      { compiled: fixtures[0]!, draws: 1, seed: { lo: 9, hi: 9 } },
    ];
    const results = await engine.runBatch(jobs);
    expect(engine.state().dispatches - before).toBe(1);
    results.forEach((result, index) => {
      const job = jobs[index]!;
      expect(result.engine).toBe('gpu');
      expect(result.gpuMs).toBeGreaterThan(0);
      expect(result.counts).toEqual(cpuCounts(job.compiled, job.seed, job.draws));
    });
    // Shares of one dispatch, split by draws.
    expect(results[2]!.gpuMs / results[0]!.gpuMs).toBeCloseTo(1.1, 6);
  });

  it("keeps two dispatches in flight, buffers growing under a running one, with the CPU engine's counts", async () => {
    // 400 draws a dispatch: four dispatches of 1, 4, 2 and 1 runs, the second growing every table
    // buffer while the first may still run.
    const small = createGpuEngine({ mode: 'gpu', fallback: cpuEngine, maxDrawsPerDispatch: 400 });
    try {
      await small.started();
      const jobs = [
        { compiled: fixtures[0]!, draws: 390, seed: { lo: 1, hi: 0 } },
        { compiled: fixtures[0]!, draws: 100, seed: { lo: 2, hi: 0 } },
        { compiled: fixtures[1]!, draws: 100, seed: { lo: 3, hi: 0 } },
        { compiled: fixtures[2]!, draws: 100, seed: { lo: 4, hi: 0 } },
        { compiled: fixtures[1]!, draws: 100, seed: { lo: 5, hi: 0 } },
        { compiled: fixtures[2]!, draws: 250, seed: { lo: 6, hi: 0 } },
        { compiled: fixtures[0]!, draws: 150, seed: { lo: 7, hi: 0 } },
        { compiled: fixtures[1]!, draws: 1, seed: { lo: 8, hi: 0 } },
      ];
      const results = await small.runBatch(jobs);
      expect(small.state().dispatches).toBe(4);
      results.forEach((result, index) => {
        const job = jobs[index]!;
        expect(result.engine).toBe('gpu');
        expect(result.counts).toEqual(cpuCounts(job.compiled, job.seed, job.draws));
      });
    } finally {
      await small.close();
    }
  });

  it("puts another lane's job into the next dispatch, ahead of a lane's jobs queued before it", async () => {
    // One job a dispatch: A's first two go out at once (two in flight); B's, queued after all of A's,
    // goes into the next (src/engine-contract/fair-slices.ts), where in the order of arrival it went last.
    const one = createGpuEngine({ mode: 'gpu', fallback: cpuEngine, maxDrawsPerDispatch: 400 });
    const ended: string[] = [];
    try {
      await one.started();
      const aShare = { lane: 'A', weight: 1, interactive: false };
      const a = one.runBatch(
        Array.from({ length: 5 }, (_, i) => ({
          compiled: fixtures[i % 3]!,
          draws: 400,
          seed: { lo: 20 + i, hi: 0 },
          share: aShare,
          onProgress: () => void ended.push(`a${i}`),
        })),
      );
      const seed = { lo: 30, hi: 0 };
      const b = await one.run(fixtures[1]!, {
        draws: 400,
        seed,
        share: { lane: 'B', weight: 1, interactive: true },
        onProgress: () => void ended.push('b'),
      });
      await a;
      expect(ended).toEqual(['a0', 'a1', 'b', 'a2', 'a3', 'a4']);
      expect(b.counts).toEqual(cpuCounts(fixtures[1]!, seed, 400));
    } finally {
      await one.close();
    }
  });

  it('gives the same counts for the same seed and different counts for another seed', async () => {
    const [a, b, c] = await Promise.all([
      engine.run(fixtures[1]!, { draws: 300, seed: { lo: 5, hi: 5 } }),
      engine.run(fixtures[1]!, { draws: 300, seed: { lo: 5, hi: 5 } }),
      engine.run(fixtures[1]!, { draws: 300, seed: { lo: 6, hi: 5 } }),
    ]);
    expect(a.counts).toEqual(b.counts);
    expect(a.counts).not.toEqual(c.counts);
  });

  it('retries jobs on the CPU when the device is lost and restarts the worker', async () => {
    const seed = { lo: 77, hi: 1 };
    const pending = engine.run(fixtures[2]!, { draws: 2_000, seed });
    engine.loseDevice();
    const result = await pending;
    expect(result.counts).toEqual(cpuCounts(fixtures[2]!, seed, 2_000));
    // Either the dispatch finished before the device went, or the CPU redid it: never lost, never wrong.
    expect(['gpu', 'cpu']).toContain(result.engine);
    await waitFor(() => engine.state().restarts === 1 && engine.state().state === 'ready');
    const after = await engine.run(fixtures[0]!, { draws: 200, seed });
    expect(after.engine).toBe('gpu');
    expect(after.counts).toEqual(cpuCounts(fixtures[0]!, seed, 200));
  });

  it('sends jobs to the CPU while the device is lost', async () => {
    engine.loseDevice();
    await waitFor(() => engine.state().state === 'lost');
    const seed = { lo: 3, hi: 4 };
    const result = await engine.run(fixtures[1]!, { draws: 100, seed });
    expect(result.engine).toBe('cpu');
    expect(result.counts).toEqual(cpuCounts(fixtures[1]!, seed, 100));
    await waitFor(() => engine.state().state === 'ready');
    expect(engine.state().restarts).toBe(2);
  });
});

describe.skipIf(!chosen?.software)('ENGINE=auto on a host with only a software adapter', () => {
  it('reports unavailable and runs jobs on the CPU engine', async () => {
    const engine = createGpuEngine({ mode: 'auto', fallback: cpuEngine });
    try {
      const state = await engine.started();
      expect(state.state).toBe('unavailable');
      // Why, in the words an operator acts on (/healthz shows it): the Vulkan side and the device files.
      expect(state.reason).toMatch(/^no hardware GPU adapter: .*(driver manifest|Vulkan offers only).*/);
      expect(state.reason).toMatch(/\/dev(\/nvidia\*|: nvidia)|Vulkan offers only/);
      const seed = { lo: 1, hi: 1 };
      const result = await engine.run(fixtures[0]!, { draws: 100, seed });
      expect(result.engine).toBe('cpu');
      expect(result.counts).toEqual(cpuCounts(fixtures[0]!, seed, 100));
    } finally {
      await engine.close();
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
