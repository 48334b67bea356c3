// The CPU engine's pool shares its threads between lanes by turns of one range (fallback/cpu-engine.ts on
// src/engine-contract/fair-slices.ts): a run of another lane that arrives while a lane's large runs hold
// the pool is counted beside them, not after them, and every run counts what it counts alone.
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../fallback/cpu-engine.js';
import { simulateRange } from '../../fallback/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import { COUNTER_WORDS, type EngineSeed, finalizeCounters } from '../../src/engine-contract/layout.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { plausibleFixture } from './plausible-teams.js';

const compiled = compileFixture(
  plausibleFixture(7, { teamId: 1, attack: 0.15, defence: 0.05 }, { teamId: 2, attack: -0.05, defence: 0 }),
  defaultModelParams,
);

/** What a run counts alone, on this thread, in one range. */
function alone(draws: number, seed: EngineSeed): Uint32Array {
  const counters = new Uint32Array(COUNTER_WORDS);
  simulateRange(compiled, seed, 0, draws, counters);
  finalizeCounters(counters);
  return counters;
}

describe('the CPU pool’s fair shares', () => {
  it("counts another lane's run beside a lane's large runs, and each run as it counts alone", async () => {
    const engine = createCpuEngine({ threads: 2 });
    const ended: string[] = [];
    const seeds = { a1: { lo: 1, hi: 2 }, a2: { lo: 3, hi: 4 }, b: { lo: 5, hi: 6 } };
    try {
      let bStarted: (() => void) | undefined;
      const aStarted = new Promise<void>((resolve) => (bStarted = resolve));
      const runA = (name: 'a1' | 'a2') =>
        engine
          .run(compiled, {
            draws: 100_000,
            seed: seeds[name],
            share: { lane: 'A', weight: 1, interactive: false },
            onProgress: () => bStarted?.(),
          })
          .then((run) => {
            ended.push(name);
            return run;
          });
      const a = [runA('a1'), runA('a2')];
      // B's run comes once A's first range is counted: A's 20 ranges are queued ahead of it.
      await aStarted;
      const b = await engine.run(compiled, {
        draws: 30_000,
        seed: seeds.b,
        share: { lane: 'B', weight: 1, interactive: true },
      });
      ended.push('b');
      const [a1, a2] = await Promise.all(a);
      // In the order the runs came, B would end last; by turns, it ends first.
      expect(ended).toEqual(['b', 'a1', 'a2']);
      expect(b.counts).toEqual(alone(30_000, seeds.b));
      expect(a1!.counts).toEqual(alone(100_000, seeds.a1));
      expect(a2!.counts).toEqual(alone(100_000, seeds.a2));
    } finally {
      await engine.close();
    }
  });

  it('fails the runs still waiting for a thread when the pool closes', async () => {
    const engine = createCpuEngine({ threads: 1 });
    const runs = [1, 2, 3].map((lo) => engine.run(compiled, { draws: 50_000, seed: { lo, hi: 0 } }));
    const settled = Promise.allSettled(runs);
    await engine.close();
    expect((await settled).map((run) => run.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });
});
