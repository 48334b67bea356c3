// The GPU engine's watchdog (docs/gpu.md "Watchdog"): a dispatch that runs past its deadline counts as a
// lost device. Forced on llvmpipe with a deadline far below any dispatch's time: the jobs are re-run on
// the CPU engine with identical counts, the worker is abandoned (not destroyed, not terminated) and a
// new one starts.
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
import { plausibleFixture } from '../engine/plausible-teams.js';

const chosen = await chooseAdapter({ mode: 'gpu' });
if (!chosen) console.warn('GPU watchdog test skipped: no WebGPU adapter (not even llvmpipe) on this host');

function cpuCounts(compiled: CompiledFixture, seed: EngineSeed, draws: number): Uint32Array {
  const counters = new Uint32Array(COUNTER_WORDS);
  simulateRange(compiled, seed, 0, draws, counters);
  finalizeCounters(counters);
  return counters;
}

const fixture = compileFixture(
  plausibleFixture(7, { teamId: 70, attack: 0.2, defence: 0 }, { teamId: 71, attack: 0, defence: 0.1 }),
  defaultModelParams,
);

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!chosen)(`GPU watchdog on ${chosen?.description ?? 'no adapter'}`, () => {
  let engine: GpuEngine;
  beforeAll(async () => {
    // A 1 ms deadline: no dispatch of 2,000 draws ends that fast, on llvmpipe or any GPU.
    engine = createGpuEngine({
      mode: 'gpu',
      fallback: createCpuEngine({ threads: 0 }),
      restartDelayMs: 20,
      watchdog: { floorMs: 1, multiple: 0 },
    });
    await engine.started();
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('takes a dispatch past its deadline for a lost device: CPU counts, worker abandoned, a new one started', async () => {
    expect(engine.state().state).toBe('ready');
    const seed = { lo: 0xdead, hi: 0xbeef };
    const jobs = [
      { compiled: fixture, draws: 2_000, seed },
      { compiled: fixture, draws: 300, seed: { lo: 1, hi: 0 } },
    ];
    const results = await engine.runBatch(jobs);
    results.forEach((result, index) => {
      expect(result.engine).toBe('cpu');
      expect(result.timing).toBe('cpu');
      expect(result.gpuMs).toBe(0);
      expect(result.counts).toEqual(cpuCounts(fixture, jobs[index]!.seed, jobs[index]!.draws));
    });
    const state = engine.state();
    expect(state.watchdogFirings).toBe(1);
    expect(state.abandonedWorkers).toBe(1);
    expect(state.cpuRetries).toBe(2);
    expect(state.reason).toMatch(
      /^watchdog: dispatch 1 of 2300 draws ran \d+ ms, past its deadline of 1 ms$/,
    );
    await waitFor(() => engine.state().restarts === 1 && engine.state().state === 'ready');
  });
});
