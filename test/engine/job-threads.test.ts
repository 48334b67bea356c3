// The job threads (src/engine/job-threads.ts): the host's share of a job done on worker threads gives
// the same document as on the calling thread; a fixture version is compiled once however many jobs ask;
// the compile cache is bounded in bytes.
import { afterAll, describe, expect, it } from 'vitest';
import { compileKey } from '../../src/engine/compile.js';
import { defaultModelParams } from '../../src/engine/contract/model-params.js';
import { documentWireText } from '../../src/engine/document-schema.js';
import { createJobThreads } from '../../src/engine/job-threads.js';
import type { HostJob } from '../../src/engine/job-work.js';
import { loadModelStatus } from '../../src/engine/model-status.js';
import { plausibleFixture } from './plausible-teams.js';

const setting = { params: defaultModelParams, modelStatus: loadModelStatus(defaultModelParams) };
const onThreads = createJobThreads({ setting, threads: 2 });
const here = createJobThreads({ setting, threads: 0 });
afterAll(async () => {
  await onThreads.close();
  await here.close();
});

function hostJob(n: number, draws = 2000): HostJob {
  const inputs = plausibleFixture(
    n,
    { teamId: 2 * n, attack: 0.1, defence: 0 },
    { teamId: 2 * n + 1, attack: 0, defence: 0.1 },
  );
  return {
    key: compileKey(inputs, defaultModelParams),
    inputs,
    draws,
    seed: { lo: n, hi: 0xabc },
    basis: { as_of: '2026-11-26T12:00:00.000Z', data_version: 'dv' },
    queuedMs: 3,
  };
}

/** A document's wire text parsed, without its timing (run_ms and backend differ from run to run). */
function withoutTiming(documentJson: string) {
  const { timing: _timing, ...rest } = JSON.parse(documentJson) as Record<string, unknown>;
  return rest;
}

describe('job threads', () => {
  it('run a whole job to the same document as the calling thread, in the wire text of the schema', async () => {
    const job = hostJob(1);
    const threaded = await onThreads.whole(job, await onThreads.compiled(job));
    const inline = await here.whole(job, await here.compiled(job));
    expect(withoutTiming(threaded.documentJson)).toEqual(withoutTiming(inline.documentJson));
    expect(threaded.documentJson).toBe(documentWireText(JSON.parse(threaded.documentJson)));
    const result = JSON.parse(threaded.documentJson).result;
    expect(threaded.summary).toMatchObject({ homeWin: result.home_win, draw: result.draw });
  });

  it('finish a run counted elsewhere to the document of the whole job', async () => {
    const job = hostJob(2);
    const compiled = await onThreads.compiled(job);
    const whole = await onThreads.whole(job, compiled);
    const counted = await here.whole(job, await here.compiled(job));
    // The counters of the same draws, taken from a run on the calling thread, finished on a thread.
    const { simulateRange } = await import('../../fallback/engine.js');
    const { COUNTER_WORDS, finalizeCounters } = await import('../../src/engine/contract/layout.js');
    const counts = new Uint32Array(COUNTER_WORDS);
    simulateRange(compiled, job.seed, 0, job.draws, counts);
    finalizeCounters(counts);
    const finished = await onThreads.finish(job, compiled, counts, {
      engine: 'cpu',
      backend: 'elsewhere',
      runMs: 1,
    });
    expect(withoutTiming(finished.documentJson)).toEqual(withoutTiming(whole.documentJson));
    expect(withoutTiming(counted.documentJson)).toEqual(withoutTiming(whole.documentJson));
  });

  it('compile a fixture version once however many jobs ask, on shared memory', async () => {
    const before = onThreads.cacheStats();
    const job = hostJob(3);
    const [a, b] = await Promise.all([onThreads.compiled(job), onThreads.compiled({ ...job, draws: 5000 })]);
    expect(a).toBe(b);
    expect(a.thresholds.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(a.eventTables.buffer).toBeInstanceOf(SharedArrayBuffer);
    const after = onThreads.cacheStats();
    expect(after.misses - before.misses).toBe(1);
    expect(after.hits - before.hits).toBe(1);
  });

  it('keep the compile cache within its bytes, least recently used first', async () => {
    const small = createJobThreads({ setting, threads: 0, cacheBytes: 2_000_000 });
    try {
      const jobs = [4, 5, 6].map((n) => hostJob(n));
      const first = await small.compiled(jobs[0]!);
      await small.compiled(jobs[1]!);
      await small.compiled(jobs[0]!);
      await small.compiled(jobs[2]!);
      const stats = small.cacheStats();
      expect(stats.bytes).toBeLessThanOrEqual(2_000_000);
      expect(stats.entries).toBe(2);
      // Job 0 was used after job 1: job 1 went, job 0 is still there.
      expect(await small.compiled(jobs[0]!)).toBe(first);
      expect(small.cacheStats().misses).toBe(3);
    } finally {
      await small.close();
    }
  });
});
