// The engine the workers run: documents for good jobs, a failure only for the job that cannot run.
import { afterAll, describe, expect, it } from 'vitest';
import { chooseAdapter } from '../../gpu/adapter.js';
import { createSimulationEngine, type EngineJob } from '../../src/engine/runner.js';
import { POOL_RUNS_AT_ONCE } from '../../src/engine/start-gate.js';
import { documentText, type StoredDocument } from '../../src/engine/stored-document.js';
import { plausibleFixture } from './plausible-teams.js';

const engine = createSimulationEngine({ mode: 'cpu', cpuThreads: 0 });
afterAll(() => engine.close());

/** A document without its timing (engine, milliseconds), for comparing what was simulated. */
const strip = (o: unknown) => {
  const { timing: _timing, ...rest } = documentOf(o) as Record<string, unknown>;
  return rest;
};

/** The document an outcome carries, parsed from its wire text. */
function documentOf(outcome: unknown) {
  return JSON.parse(documentText((outcome as { document: StoredDocument }).document)) as {
    basis: { draws: number; as_of: string };
    timing: { engine: string };
  };
}

function job(id: string, payload: unknown, mode: 'live' | 'test' = 'live'): EngineJob {
  return {
    id,
    mode,
    draws: 500,
    seed: '00000000000000ab',
    payloadJson: JSON.stringify(payload),
    dataVersion: 'dv_test',
    queuedMs: 0,
  };
}

describe('engine runner', () => {
  it('fails only the job whose inputs cannot be compiled', async () => {
    const good = job('good', {
      match: plausibleFixture(
        1,
        { teamId: 1, attack: 0.1, defence: 0 },
        { teamId: 2, attack: 0, defence: 0.1 },
      ),
      as_of: '2026-11-21T10:00:00.000Z',
    });
    const bad = job('bad', { match: { nonsense: true }, as_of: '2026-11-21T10:00:00.000Z' });
    const progress: number[] = [];
    const outcomes = await engine.runBatch([good, bad], {
      progress: async (_id, done) => void progress.push(done),
      signal: new AbortController().signal,
    });
    const byId = new Map(outcomes.map((o) => [o.jobId, o]));
    expect(byId.get('bad')).toMatchObject({ error: { code: 'simulation_failed' } });
    const document = documentOf(byId.get('good'));
    expect(document.basis).toMatchObject({ draws: 500, as_of: '2026-11-21T10:00:00.000Z' });
    expect(document.timing.engine).toBe('cpu');
    expect(progress.at(-1)).toBe(500);
  });

  it('fails a job whose draws are out of range alone, before an engine runs it', async () => {
    const payload = {
      match: plausibleFixture(5, { teamId: 5, attack: 0, defence: 0 }, { teamId: 6, attack: 0, defence: 0 }),
      as_of: '2026-11-21T10:00:00.000Z',
    };
    const progress: string[] = [];
    const outcomes = await engine.runBatch(
      [
        { ...job('few', payload), draws: 99 },
        { ...job('many', payload), draws: 1_000_001 },
        { ...job('fraction', payload), draws: 150.5 },
        { ...job('fewest', payload), draws: 100 },
      ],
      { progress: async (id) => void progress.push(id), signal: new AbortController().signal },
    );
    const byId = new Map(outcomes.map((o) => [o.jobId, o]));
    for (const id of ['few', 'many', 'fraction']) {
      expect(byId.get(id)).toMatchObject({
        error: {
          code: 'simulation_failed',
          message: expect.stringMatching(/^draws must be an integer from 100 to 1000000/),
        },
      });
    }
    expect(byId.get('fewest')).toHaveProperty('document');
    expect(new Set(progress)).toEqual(new Set(['fewest']));
  });

  it('gives the same document for the same job twice (seed from the job)', async () => {
    const a = job('a', {
      match: plausibleFixture(
        3,
        { teamId: 3, attack: 0.2, defence: -0.1 },
        { teamId: 4, attack: -0.1, defence: 0 },
      ),
      as_of: '2026-11-21T10:00:00.000Z',
    });
    const context = { progress: async () => {}, signal: new AbortController().signal };
    const [first] = await engine.runBatch([a], context);
    const [second] = await engine.runBatch([a], context);
    expect(strip(second)).toEqual(strip(first));
  });

  it('holds no compiled fixture beyond its cache once a batch is done, finished or aborted', async () => {
    const threaded = createSimulationEngine({ mode: 'cpu', cpuThreads: 2 });
    const payload = (n: number) => ({
      match: plausibleFixture(
        n,
        { teamId: n, attack: 0.1, defence: 0 },
        { teamId: n + 1, attack: 0, defence: 0 },
      ),
      as_of: '2026-11-21T10:00:00.000Z',
    });
    /** Compiled fixtures acquired and never released, and slots in use that the cache does not hold. */
    const held = () => {
      const cache = threaded.health().compile_cache as Record<string, number>;
      return [cache.inUse, cache.slots! - cache.slotsFree! - cache.entries!];
    };
    try {
      const jobs = [
        ...Array.from({ length: 12 }, (_, i) => job(`small${i}`, payload(20 + 2 * i))),
        { ...job('large', payload(60)), draws: 30_000 },
        job('test', payload(62), 'test'),
        job('bad', { match: { nonsense: true }, as_of: '2026-11-21T10:00:00.000Z' }),
      ];
      const outcomes = await threaded.runBatch(jobs, {
        progress: async () => {},
        signal: new AbortController().signal,
      });
      expect(outcomes).toHaveLength(jobs.length);
      expect(held()).toEqual([0, 0]);
      const aborted = new AbortController();
      aborted.abort();
      await threaded.runBatch(
        jobs.map((j) => ({ ...j, id: `again-${j.id}` })),
        { progress: async () => {}, signal: aborted.signal },
      );
      expect(held()).toEqual([0, 0]);
    } finally {
      await threaded.close();
    }
  });
});

describe('when the runner begins jobs (RunContext.start, src/engine/start-gate.ts)', () => {
  const payload = (n: number) => ({
    match: plausibleFixture(
      n,
      { teamId: n, attack: 0.1, defence: 0 },
      { teamId: n + 1, attack: 0, defence: 0 },
    ),
    as_of: '2026-11-21T10:00:00.000Z',
  });

  it('asks before it begins jobs, small ones together, and runs only those it may', async () => {
    const jobs = Array.from({ length: 20 }, (_, i) => job(`j${i}`, payload(70 + 2 * i)));
    const asked: string[][] = [];
    const progressed = new Set<string>();
    const outcomes = await engine.runBatch(jobs, {
      progress: async (id) => void progressed.add(id),
      signal: new AbortController().signal,
      start: async (ids) => {
        asked.push([...ids]);
        return new Set(ids.filter((id) => id !== 'j3'));
      },
    });
    // 20 jobs of 500 draws: one question for all of them, not one per job.
    expect(asked).toEqual([jobs.map((j) => j.id)]);
    const ran = jobs.map((j) => j.id).filter((id) => id !== 'j3');
    expect(outcomes.map((o) => o.jobId).sort()).toEqual([...ran].sort());
    expect(outcomes.every((o) => 'document' in o)).toBe(true);
    expect(progressed.has('j3')).toBe(false);
  });

  it(`begins runs over the CPU pool ${POOL_RUNS_AT_ONCE} at a time across the batches it runs`, async () => {
    const threaded = createSimulationEngine({ mode: 'cpu', cpuThreads: 2 });
    const draws = 30_000;
    /** Pool runs begun whose draws are not all counted yet, at each question and at most. */
    const counting = new Set<string>();
    let most = 0;
    const context = {
      progress: async (id: string, done: number) => {
        if (done >= draws) counting.delete(id);
      },
      signal: new AbortController().signal,
      start: async (ids: readonly string[]) => {
        expect(ids).toHaveLength(1);
        expect(counting.size).toBeLessThan(POOL_RUNS_AT_ONCE);
        counting.add(ids[0]!);
        most = Math.max(most, counting.size);
        return new Set(ids);
      },
    };
    const batch = (prefix: string, from: number) =>
      Array.from({ length: 3 }, (_, i) => ({ ...job(`${prefix}${i}`, payload(from + 2 * i)), draws }));
    try {
      const [a, b] = await Promise.all([
        threaded.runBatch(batch('a', 110), context),
        threaded.runBatch(batch('b', 120), context),
      ]);
      expect([...a!, ...b!].every((o) => 'document' in o)).toBe(true);
      expect(most).toBe(POOL_RUNS_AT_ONCE);
    } finally {
      await threaded.close();
    }
  });
});

describe('the engine\'s fair shares of its draws (docs/decisions.md §6 "Fair shares")', () => {
  const payload = (n: number) => ({
    match: plausibleFixture(
      n,
      { teamId: n, attack: 0.1, defence: 0 },
      { teamId: n + 1, attack: 0, defence: 0 },
    ),
    as_of: '2026-11-21T10:00:00.000Z',
  });

  it("counts another lane's pool run beside a lane's batch, with the document it gives alone", async () => {
    const threaded = createSimulationEngine({ mode: 'cpu', cpuThreads: 2 });
    const lone: EngineJob = {
      ...job('b', payload(140)),
      draws: 40_000,
      share: { lane: 'B', weight: 1, interactive: true },
    };
    const batch = Array.from({ length: 3 }, (_, i) => ({
      ...job(`a${i}`, payload(150 + 2 * i)),
      draws: 60_000,
      share: { lane: 'A', weight: 1, interactive: false },
    }));
    const ended: string[] = [];
    let aBegan: () => void = () => {};
    const began = new Promise<void>((resolve) => (aBegan = resolve));
    const context = {
      progress: async (id: string) => void (id === 'a0' && aBegan()),
      signal: new AbortController().signal,
      onOutcome: (outcome: { jobId: string }) => void ended.push(outcome.jobId),
    };
    try {
      const [alone] = await threaded.runBatch([lone], { ...context, onOutcome: undefined });
      const a = threaded.runBatch(batch, context);
      // A's first two runs hold both of its lane's pool slots, and their ranges queue ahead of B's.
      await began;
      const [beside] = await threaded.runBatch([lone], context);
      await a;
      // B's run takes turns with A's: it ends before A's second run, where in the order of arrival
      // (and with one set of pool slots) it ended after it.
      expect(ended.indexOf('b')).toBeLessThan(ended.indexOf('a1'));
      expect(ended).toHaveLength(4);
      expect(strip(beside)).toEqual(strip(alone));
    } finally {
      await threaded.close();
    }
  });
});

const adapter = await chooseAdapter({ mode: 'gpu' });
if (!adapter) console.warn('GPU runner test skipped: no WebGPU adapter (not even llvmpipe) on this host');

describe.skipIf(!adapter)('engine runner on the GPU', () => {
  it('gives the same document as the CPU engine', async () => {
    const a = job('events', {
      match: plausibleFixture(
        7,
        { teamId: 7, attack: 0.3, defence: 0 },
        { teamId: 8, attack: 0, defence: 0.1 },
      ),
      as_of: '2026-11-21T10:00:00.000Z',
    });
    const context = { progress: async () => {}, signal: new AbortController().signal };
    const onGpuEngine = createSimulationEngine({ mode: 'gpu', cpuThreads: 0 });
    try {
      await onGpuEngine.ready();
      const asked: string[][] = [];
      const start = async (ids: readonly string[]) => {
        asked.push([...ids]);
        return new Set(ids);
      };
      const [onGpu] = await onGpuEngine.runBatch([a], { ...context, start });
      // A dispatch's jobs are begun together, asked once.
      expect(asked).toEqual([['events']]);
      const [onCpu] = await engine.runBatch([a], context);
      expect(documentOf(onGpu).timing.engine).toBe('gpu');
      expect(strip(onGpu)).toEqual(strip(onCpu));
      // The GPU path gives its compiled fixtures back too: every slot in use is one the cache holds.
      const cache = onGpuEngine.health().compile_cache as Record<string, number>;
      expect(cache.inUse).toBe(0);
      expect(cache.slots! - cache.slotsFree!).toBe(cache.entries);
    } finally {
      await onGpuEngine.close();
    }
  });
});
