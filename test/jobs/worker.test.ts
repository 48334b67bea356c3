// Workers (docs/decisions.md §6): claim in batches, complete exactly once even when workers race or a lease
// runs out mid-run, drain on stop, rescue lapsed leases and sweep ended holds as chores.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunBatch } from '../../src/engine/runner.js';
import { documentText } from '../../src/engine/stored-document.js';
import type { Job } from '../../src/jobs/types.js';
import { PROGRESS_INTERVAL_MS, startWorker, type Worker } from '../../src/jobs/worker.js';
import { getResult } from '../../src/results/result-store.js';
import { insertOrg, manualClock } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase, usingServer } from '../helpers/database.js';
import {
  chargeRows,
  deliver,
  deterministicEngine,
  documentFor,
  HOLD_TTL_SECONDS,
  makeSimParts,
  type SimParts,
  submitJob,
  submitLiveBatch,
} from './setup.js';

let db: TestDatabase;
let parts: SimParts;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ max: 8 });
  parts = makeSimParts(db);
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});

afterAll(async () => {
  await parts.queue.close();
  await db.close();
});

function worker(options: Partial<Parameters<typeof startWorker>[0]> & { workerId: string }): Worker {
  const started = startWorker({
    queue: parts.queue,
    sql: parts.sql,
    knownResults: parts.knownResults,
    runBatch: deterministicEngine(),
    concurrency: 4,
    pollMs: 20,
    leaseMs: 60_000,
    maintenanceMs: 60_000,
    ...options,
  });
  workers.push(started);
  return started;
}

async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** deterministicEngine asking before it begins its jobs, as the runner does (RunContext.start). */
function askingEngine(runs: string[]): RunBatch {
  const engine = deterministicEngine({ runs });
  return async (jobs, context) => {
    const may = await context.start!(jobs.map((job) => job.id));
    return engine(
      jobs.filter((job) => may.has(job.id)),
      context,
    );
  };
}

const ids = (jobs: readonly { id: string }[]) => jobs.map((job) => job.id);

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

describe('worker', () => {
  it("writes a running job's progress once per PROGRESS_INTERVAL_MS of its own, none for a short run or of every draw", async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org, { inputs: { progress: 1 } });
    const clock = manualClock('2026-11-25T12:00:00Z');
    const gate = deferred();
    const seen: number[] = [];
    const report = async (context: Parameters<typeof base>[1], draws: number) => {
      await context.progress(job.id, draws);
      seen.push((await parts.queue.get(job.id))!.drawsDone);
    };
    const base = deterministicEngine();
    worker({
      workerId: 'progress',
      clock,
      runBatch: async (jobs, context) => {
        clock.advance(3 * PROGRESS_INTERVAL_MS); // the pack ran other jobs first
        await report(context, 100); // the job's first report: not written
        clock.advance(PROGRESS_INTERVAL_MS);
        await report(context, 200); // written
        clock.advance(PROGRESS_INTERVAL_MS - 1);
        await report(context, 300); // too soon after the last: not written
        clock.advance(1);
        await report(context, 400); // written
        clock.advance(PROGRESS_INTERVAL_MS);
        await report(context, job.draws); // every draw: the completion writes it
        gate.resolve();
        return base(jobs, { ...context, progress: async () => {} });
      },
    });
    await gate.promise;
    expect(seen).toEqual([0, 200, 200, 400, 400]);
    const done = await parts.queue.waitFor(job.id, 10_000);
    expect(done).toMatchObject({ status: 'succeeded', drawsDone: job.draws });
  });

  it('runs queued jobs to succeeded with their documents stored', async () => {
    const org = await insertOrg(db.sql);
    const jobs = await Promise.all([1, 2, 3].map((n) => submitJob(parts, org, { inputs: { n } })));
    const runner = worker({ workerId: 'solo' });
    const done = await Promise.all(jobs.map((job) => parts.queue.waitFor(job.id, 10_000)));
    expect(done.map((job) => job?.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    for (const job of done) {
      const result = await getResult(db.sql, job!.resultId!);
      expect(JSON.parse(documentText(result!.document))).toEqual(documentFor(job!));
      // The stored row is remembered once committed: a delivery in this process reads no document back.
      expect(parts.knownResults.byId(job!.resultId!)).toEqual(result);
      expect(job).toMatchObject({ engine: 'cpu', drawsDone: 1000, attempts: 1 });
    }
    expect(runner.stats).toMatchObject({ claimed: 3, completed: 3, dropped: 0 });
  });

  it('claims by draws: a large job alone, small ones several to a claim, within its draws', async () => {
    const org = await insertOrg(db.sql);
    const [queued] = await db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM jobs WHERE status = 'queued'`;
    expect(queued!.n).toBe(0);
    const large = await submitJob(parts, org, { draws: 5000, inputs: { large: 1 } });
    const small = [];
    for (const n of [1, 2, 3, 4])
      small.push(await submitJob(parts, org, { draws: 1000, inputs: { small: n } }));
    const packs: string[][] = [];
    const engine = deterministicEngine();
    worker({
      workerId: 'by-draws',
      concurrency: 16,
      claimDraws: () => 2500,
      runBatch: (jobs, context) => {
        packs.push(jobs.map((job) => job.id));
        return engine(jobs, context);
      },
    });
    await Promise.all([large, ...small].map((job) => parts.queue.waitFor(job.id, 10_000)));
    // The large job alone (the first of a claim is always taken); then the draws claimed before each job
    // must be fewer than 2,500: three small ones, then the last.
    expect(packs).toEqual([[large.id], small.slice(0, 3).map((job) => job.id), [small[3]!.id]]);
  });

  it('never runs a job cancelled while it held it, and frees its room at once', async () => {
    const org = await insertOrg(db.sql);
    const { batch, jobs } = await submitLiveBatch(parts, org, 2, 3100);
    const claimed = deferred();
    const gate = deferred();
    const runs: string[] = [];
    const logged: { level: string; message: string; ids: string[] }[] = [];
    const log =
      (level: string) =>
      (fields: Record<string, unknown>, message: string): void => {
        logged.push({ level, message, ids: (fields.job_ids as string[] | undefined) ?? [] });
      };
    const runner = worker({
      workerId: 'held',
      // A heartbeat every 100 ms, so that one comes while the worker holds the cancelled jobs.
      leaseMs: 300,
      logger: { info: log('info'), warn: log('warn'), error: log('error') },
      runBatch: async (pack, context) => {
        claimed.resolve();
        await gate.promise;
        return askingEngine(runs)(pack, context);
      },
    });
    await claimed.promise;
    const cancelled = await db.sql.begin((tx) =>
      parts.queue.cancelUnstarted(tx, batch.id, { orgId: org, mode: 'live' }),
    );
    expect(cancelled?.cancelled.map((job) => job.id).sort()).toEqual(jobs.map((job) => job.id).sort());
    // The heartbeat finds them cancelled, not lost to another worker: no warning for an operator.
    await waitUntil(
      async () => logged.some((line) => line.message === 'held jobs cancelled before they began'),
      'the heartbeat to see the cancelled jobs',
    );
    const seen = logged.find((line) => line.message === 'held jobs cancelled before they began')!;
    expect(seen.level).toBe('info');
    expect([...seen.ids].sort()).toEqual(jobs.map((job) => job.id).sort());
    expect(logged.filter((line) => line.level !== 'info')).toEqual([]);
    // Later heartbeats (one each 100 ms) while the worker still holds them do not name them again.
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(logged.filter((line) => line.message === 'held jobs cancelled before they began')).toHaveLength(1);
    gate.resolve();
    // A job queued afterwards is claimed and run: the cancelled ones left the worker's hands.
    const next = await submitJob(parts, org, { inputs: { after: 'cancel' } });
    expect((await parts.queue.waitFor(next.id, 10_000))?.status).toBe('succeeded');
    expect(runs).toEqual([next.id]);
    expect(runner.stats).toMatchObject({ refused: 2, dropped: 0 });
    // Nothing cancels a lone job: it begins without a mark (no round trip).
    const [lone] = await db.sql<{ runStartedAt: Date | null }[]>`
      SELECT run_started_at FROM jobs WHERE id = ${next.id}`;
    expect(lone!.runStartedAt).toBeNull();
    for (const job of jobs) expect((await parts.queue.get(job.id))?.status).toBe('cancelled');
  });

  /**
   * A worker whose room (4,000 draws; small runs up to 1,000) the first of a busy organisation's three
   * 5,000-draw jobs holds until the test lets it go; meanwhile another organisation's run of `draws` is
   * submitted, and must be claimed and stored beside it while the busy lane's other jobs stay queued.
   */
  async function besideHeldRoom(label: string, draws: number): Promise<{ first: string; large: Job[] }> {
    const busy = await insertOrg(db.sql, { plan: 'pro' });
    const other = await insertOrg(db.sql, { plan: 'pro' });
    const large: Job[] = [];
    for (const n of [1, 2, 3])
      large.push(await submitJob(parts, busy, { draws: 5000, inputs: { [label]: n } }));
    const release = deferred();
    const packs: string[][] = [];
    const engine = deterministicEngine();
    worker({
      workerId: label,
      concurrency: 8,
      packSize: 1,
      claimDraws: () => 4000,
      smallDraws: 1000,
      // The busy organisation's jobs hold the engine until the test lets them go.
      runBatch: async (pack, context) => {
        packs.push(pack.map((job) => job.id));
        if (pack.some((job) => large.some((held) => held.id === job.id))) await release.promise;
        return engine(pack, context);
      },
    });
    let first: string;
    try {
      await waitUntil(async () => packs.length > 0, 'the first large job claimed');
      first = packs[0]![0]!;
      expect(packs).toEqual([[first]]);
      const lone = await submitJob(parts, other, { draws, inputs: { [label]: 'other' } });
      expect((await parts.queue.waitFor(lone.id, 10_000))?.status).toBe('succeeded');
      expect(packs).toEqual([[first], [lone.id]]);
      for (const job of large.filter((job) => job.id !== first)) {
        expect((await parts.queue.get(job.id))?.status).toBe('queued');
      }
    } finally {
      release.resolve();
    }
    const done = await Promise.all(large.map((job) => parts.queue.waitFor(job.id, 10_000)));
    expect(done.map((job) => job?.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    return { first, large };
  }

  it("begins another organisation's small run beside large ones that hold its room, and claims no large one then", async () => {
    // A 1,000-draw run is small (smallDraws): claimed though the room is held.
    const { first, large } = await besideHeldRoom('beside', 1000);
    expect(ids(large)).toContain(first);
  });

  it("claims another organisation's large run beside large ones that hold its room, its lane having nothing running", async () => {
    // A 3,000-draw run is past smallDraws, but its lane runs nothing.
    await besideHeldRoom('idleLane', 3000);
  });

  it('stores each outcome as the engine gives it, and claims the next pack while the first still runs', async () => {
    const org = await insertOrg(db.sql);
    // Inputs no other test ran, so no job is answered from the result cache.
    const jobs = await Promise.all([1, 2, 3].map((n) => submitJob(parts, org, { inputs: { pack: n } })));
    const later = await Promise.all([4, 5].map((n) => submitJob(parts, org, { inputs: { pack: n } })));
    const release = deferred();
    const packs: string[][] = [];
    const engine = deterministicEngine();
    worker({
      workerId: 'pipelined',
      concurrency: 3,
      packSize: 1,
      // The first pack's first job is given at once; the rest of that pack waits for the test.
      runBatch: async (pack, context) => {
        packs.push(pack.map((job) => job.id));
        if (packs.length > 1) return engine(pack, context);
        const [first] = await engine(pack.slice(0, 1), context);
        context.onOutcome?.(first!);
        await release.promise;
        return [first!, ...(await engine(pack.slice(1), context))];
      },
    });
    try {
      // Its first job stored, and its slot given to another job of the queue, while the pack still runs.
      await waitUntil(async () => packs.length > 0, 'a first pack');
      const [early, stillRunning] = packs[0]!;
      expect((await parts.queue.waitFor(early!, 10_000))?.status).toBe('succeeded');
      await waitUntil(async () => packs.length > 1, 'a second pack claimed into the freed slot');
      expect(packs[0]).not.toContain(packs[1]![0]);
      expect((await parts.queue.get(stillRunning!))?.status).toBe('running');
    } finally {
      release.resolve();
    }
    const done = await Promise.all([...jobs, ...later].map((job) => parts.queue.waitFor(job.id, 10_000)));
    expect(done.map((job) => job?.status)).toEqual(Array(5).fill('succeeded'));
    for (const job of done) expect(await getResult(db.sql, job!.resultId!)).not.toBeNull();
  });

  it('stores an outcome with none just before it at once, and outcomes in a stream together', async () => {
    const org = await insertOrg(db.sql);
    const jobs = await Promise.all([1, 2, 3, 4].map((n) => submitJob(parts, org, { inputs: { stream: n } })));
    const clock = manualClock('2026-11-26T12:00:00Z');
    const firstStored = deferred();
    const engine = deterministicEngine();
    const streaming = worker({
      workerId: 'stream',
      clock,
      concurrency: 4,
      packSize: 4,
      // Long enough that only the worker's own rules end a wait in this test.
      storeGatherMs: 60_000,
      runBatch: async (pack, context) => {
        const outcomes = await engine(pack, { ...context, onOutcome: undefined });
        context.onOutcome?.(outcomes[0]!);
        await firstStored.promise;
        // Two outcomes a moment apart, each at a later clock: stored apart, their jobs would finish apart.
        clock.advance(1000);
        context.onOutcome?.(outcomes[1]!);
        clock.advance(1000);
        context.onOutcome?.(outcomes[2]!);
        clock.advance(1000);
        return outcomes;
      },
    });
    // The first outcome came alone: it is stored (and its job let go) while the other three still run.
    await waitUntil(async () => streaming.stats.completed === 1, 'a first job stored');
    expect(
      (await Promise.all(jobs.map((job) => parts.queue.get(job.id)))).map((job) => job?.status).sort(),
    ).toEqual(['running', 'running', 'running', 'succeeded']);
    firstStored.resolve();
    const done = await Promise.all(jobs.map((job) => parts.queue.waitFor(job.id, 10_000)));
    expect(done.map((job) => job?.status)).toEqual(Array(4).fill('succeeded'));
    const finished = done.map((job) => job!.finishedAt!.getTime()).sort((a, b) => a - b);
    // The other three were stored by one store, once the last job's outcome came (nothing else running).
    expect(finished[0]).toBeLessThan(finished[1]!);
    expect(new Set(finished.slice(1)).size).toBe(1);
  });

  /**
   * Outcomes STREAM_GAP_MS apart with a gather of STREAM_GATHER_MS, the worker holding all `jobs`: the
   * first alone, then the second, third and fourth in a stream that lasts longer than one gather (two
   * gaps), while the others still run. Returns the finishing times of the jobs in the order their outcomes
   * came. The margins (a gap 650 ms inside a gather, two gaps 350 ms past one) are wide enough for a CI
   * machine's event loop running late under load; 300 and 500 ms left 200 and 100.
   */
  const STREAM_GAP_MS = 1000;
  const STREAM_GATHER_MS = 1650;
  async function streamOfFour(jobs: readonly { id: string }[], workerId: string): Promise<number[]> {
    const clock = manualClock('2026-11-26T12:00:00Z');
    const order: string[] = [];
    const firstStored = deferred();
    const engine = deterministicEngine();
    const streaming = worker({
      workerId,
      clock,
      concurrency: jobs.length,
      packSize: jobs.length,
      storeGatherMs: STREAM_GATHER_MS,
      runBatch: async (pack, context) => {
        const outcomes = await engine(pack, { ...context, onOutcome: undefined });
        order.push(...outcomes.map((outcome) => outcome.jobId));
        context.onOutcome?.(outcomes[0]!);
        await firstStored.promise;
        for (const outcome of outcomes.slice(1, 4)) {
          // Each at a later clock: outcomes stored apart finish apart.
          clock.advance(1000);
          context.onOutcome?.(outcome);
          await new Promise((resolve) => setTimeout(resolve, STREAM_GAP_MS));
        }
        clock.advance(1000);
        return outcomes;
      },
    });
    await waitUntil(async () => streaming.stats.completed === 1, 'a first job stored');
    firstStored.resolve();
    const done = await Promise.all(jobs.map((job) => parts.queue.waitFor(job.id, 10_000)));
    expect(done.map((job) => job?.status)).toEqual(Array(jobs.length).fill('succeeded'));
    const finished = new Map(done.map((job) => [job!.id, job!.finishedAt!.getTime()]));
    return order.map((id) => finished.get(id)!);
  }

  it("gathers a stream of batch items' outcomes while they keep coming, beyond one gather", async () => {
    const org = await insertOrg(db.sql);
    const { jobs } = await submitLiveBatch(parts, org, 8, 3200);
    const [first, ...stream] = await streamOfFour(jobs, 'batch-stream');
    // The second to fourth in one store: a gather that ended one gather after the second stored the
    // second and third apart from the fourth.
    expect(new Set(stream.slice(0, 3)).size).toBe(1);
    expect(first).toBeLessThan(stream[0]!);
  });

  it('stores a longer gather at once when fewer jobs still run than outcomes wait', async () => {
    const org = await insertOrg(db.sql);
    const { jobs } = await submitLiveBatch(parts, org, 5, 3300);
    const [, second, third, fourth, fifth] = await streamOfFour(jobs, 'short-stream');
    // The fourth outcome left one job running beside three waiting: the gather, two gaps old (past one
    // gather), ended then, and the fifth outcome, which came with the run's end, was stored after it.
    expect(new Set([second, third, fourth]).size).toBe(1);
    expect(fifth).toBeGreaterThan(fourth!);
  });

  it("ends the gather of a single simulation's outcome as before: one gather after the first", async () => {
    const org = await insertOrg(db.sql);
    const jobs = await Promise.all(
      [1, 2, 3, 4, 5, 6, 7, 8].map((n) => submitJob(parts, org, { inputs: { lone: n } })),
    );
    const [, second, third, fourth] = await streamOfFour(jobs, 'lone-stream');
    expect(second).toBe(third);
    expect(fourth).toBeGreaterThan(third!);
  });

  it('engine failures fail their jobs; a thrown engine error fails the whole claim', async () => {
    const org = await insertOrg(db.sql);
    const bad = await submitJob(parts, org, { inputs: { bad: true } });
    const good = await submitJob(parts, org, { inputs: { bad: false } });
    worker({
      workerId: 'picky',
      runBatch: deterministicEngine({
        failWhen: (job) => (JSON.parse(job.payloadJson) as { bad: boolean }).bad,
      }),
    });
    expect((await parts.queue.waitFor(bad.id, 10_000))?.status).toBe('failed');
    expect((await parts.queue.waitFor(good.id, 10_000))?.status).toBe('succeeded');
    await Promise.all(workers.splice(0).map((running) => running.stop()));

    const doomed = await submitJob(parts, org, { inputs: { doomed: true } });
    worker({
      workerId: 'broken',
      runBatch: async () => {
        throw new Error('device lost');
      },
    });
    const failed = await parts.queue.waitFor(doomed.id, 10_000);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'simulation_failed', message: 'device lost' },
    });
  });

  it('racing workers never run a job twice to completion', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    const count = usingServer ? 60 : 40;
    const jobs = await Promise.all(
      Array.from({ length: count }, (_, n) => submitJob(parts, org, { inputs: { race: n }, draws: 100 })),
    );
    const runs: string[] = [];
    const racers = ['r1', 'r2', 'r3', 'r4'].map((workerId) =>
      worker({ workerId, concurrency: 3, runBatch: deterministicEngine({ runs, delayMs: 1 }) }),
    );
    await waitUntil(async () => (await parts.queue.openJobCount(org)) === 0, 'every job to finish');
    const done = await Promise.all(jobs.map((job) => parts.queue.get(job.id)));
    expect(done.every((job) => job?.status === 'succeeded' && job.attempts === 1)).toBe(true);
    expect(new Set(runs).size).toBe(runs.length);
    expect(runs.length).toBe(count);
    expect(racers.reduce((sum, racer) => sum + racer.stats.completed, 0)).toBe(count);
    expect(racers.reduce((sum, racer) => sum + racer.stats.dropped, 0)).toBe(0);
    if (usingServer) expect(racers.filter((racer) => racer.stats.completed > 0).length).toBeGreaterThan(1);
  });

  it('a lease lost mid-run: the rescuing worker completes, the late one is dropped, delivery charges once', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org, { inputs: { slow: true } });
    const gate = deferred();
    const started = deferred();
    const slow = worker({
      workerId: 'stalled',
      // One slot, taken by the stalled run: it cannot claim the rescued job back.
      concurrency: 1,
      runBatch: async (jobs, context) => {
        started.resolve();
        await gate.promise;
        return deterministicEngine()(jobs, context);
      },
    });
    await started.promise;
    // The stalled worker's lease runs out (its heartbeat is 20 s away) and the job is rescued.
    await db.sql`UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = ${job.id}`;
    expect((await parts.queue.rescueExpiredLeases()).requeued.map((row: Job) => row.id)).toEqual([job.id]);
    const rescuer = worker({ workerId: 'rescuer' });
    expect((await parts.queue.waitFor(job.id, 10_000))?.status).toBe('succeeded');
    gate.resolve();
    await waitUntil(async () => slow.stats.dropped === 1, 'the late completion to be dropped');
    expect(slow.stats.completed).toBe(0);
    expect(rescuer.stats.completed).toBe(1);
    const finished = await parts.queue.get(job.id);
    expect(finished).toMatchObject({ status: 'succeeded', attempts: 2 });
    const [results] = await db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM results WHERE cache_key = ${job.cacheKey}`;
    expect(results!.n).toBe(1);

    for (const requestId of ['req_1', 'req_2']) {
      await deliver(parts, job, requestId);
    }
    expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    expect((await parts.ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('a job whose inputs finished meanwhile is answered from the cache without running', async () => {
    const org = await insertOrg(db.sql);
    const first = await submitJob(parts, org, { inputs: { twin: true } });
    const second = await submitJob(parts, org, { inputs: { twin: true } });
    const runs: string[] = [];
    const runner = worker({ workerId: 'cacher', concurrency: 1, runBatch: deterministicEngine({ runs }) });
    const [a, b] = await Promise.all([first, second].map((job) => parts.queue.waitFor(job.id, 10_000)));
    expect(a?.status).toBe('succeeded');
    expect(b?.status).toBe('succeeded');
    expect(a?.resultId).toBe(b?.resultId);
    expect(runs).toEqual([first.id]);
    expect(runner.stats.cacheHits).toBe(1);
  });

  it('stop() drains: the job in flight completes, nothing more is claimed', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org, { inputs: { drain: true } });
    const started = deferred();
    const gate = deferred();
    const runner = worker({
      workerId: 'drainer',
      concurrency: 1,
      runBatch: async (jobs, context) => {
        started.resolve();
        await gate.promise;
        return deterministicEngine()(jobs, context);
      },
    });
    await started.promise;
    const later = await submitJob(parts, org, { inputs: { drain: 'later' } });
    const stopping = runner.stop();
    gate.resolve();
    await stopping;
    expect((await parts.queue.get(job.id))?.status).toBe('succeeded');
    expect((await parts.queue.get(later.id))?.status).toBe('queued');
    await db.sql`UPDATE jobs SET status = 'failed', finished_at = now() WHERE id = ${later.id}`;
  });
});

describe('worker shutdown with a timeout', () => {
  it('puts a job still running at the timeout back in the queue; its late outcome is dropped; it runs and charges once', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org, { inputs: { shutdown: 'timeout' } });
    const started = deferred();
    const gate = deferred();
    const finished: string[] = [];
    const stuck = worker({
      workerId: 'shutting-down',
      concurrency: 1,
      onJobFinished: ({ outcome }) => finished.push(outcome),
      runBatch: async (jobs, context) => {
        started.resolve();
        await gate.promise;
        return deterministicEngine()(jobs, context);
      },
    });
    await started.promise;
    expect(await parts.queue.get(job.id)).toMatchObject({ status: 'running', attempts: 1 });
    const { released } = await stuck.stop({ timeoutMs: 50 });
    expect(released).toEqual([job.id]);
    // Back at once, not when a lease runs out, and the shutdown does not count as a failed attempt.
    expect(await parts.queue.get(job.id)).toMatchObject({
      status: 'queued',
      attempts: 0,
      leaseOwner: null,
      drawsDone: 0,
    });
    gate.resolve();
    await waitUntil(async () => stuck.stats.dropped === 1, 'the run left behind to be dropped');
    expect(stuck.stats.completed).toBe(0);
    expect(finished).toEqual(['dropped']);
    expect((await parts.queue.get(job.id))?.status).toBe('queued');

    const next = worker({ workerId: 'successor' });
    expect(await parts.queue.waitFor(job.id, 10_000)).toMatchObject({ status: 'succeeded', attempts: 1 });
    // The count moves after the completion commits, which is what wakes the wait on a server.
    await waitUntil(async () => next.stats.completed === 1, 'the successor to count its completion');
    await deliver(parts, job, 'req_after_shutdown');
    await deliver(parts, job, 'req_after_shutdown_again');
    expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    expect((await parts.ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('a run that finishes within the timeout completes; nothing is released', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org, { inputs: { shutdown: 'in time' } });
    const started = deferred();
    const gate = deferred();
    const runner = worker({
      workerId: 'in-time',
      concurrency: 1,
      runBatch: async (jobs, context) => {
        started.resolve();
        await gate.promise;
        return deterministicEngine()(jobs, context);
      },
    });
    await started.promise;
    const stopping = runner.stop({ timeoutMs: 60_000 });
    gate.resolve();
    expect(await stopping).toEqual({ released: [] });
    expect((await parts.queue.get(job.id))?.status).toBe('succeeded');
  });
});

describe('worker chores', () => {
  it('rescues a dead worker’s job and sweeps the hold that was never delivered', async () => {
    const clock = manualClock('2026-05-01T10:00:00Z');
    const timed = makeSimParts(db, clock);
    const org = await insertOrg(db.sql);
    const job = await submitJob(timed, org, { inputs: { orphan: true } });
    await timed.queue.claim('dead', 10, 1000);
    clock.advance(1001);
    worker({ workerId: 'janitor', queue: timed.queue, clock, maintenanceMs: 20, sweeper: timed.sweeper });
    const done = await timed.queue.waitFor(job.id, 10_000);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2 });

    clock.advance(HOLD_TTL_SECONDS * 1000);
    await waitUntil(async () => (await timed.queue.get(job.id))?.status === 'expired', 'the sweep');
    expect((await timed.ledger.getHold(job.reservationId))?.status).toBe('released');
    expect((await timed.ledger.checkBalanced(org)).balanced).toBe(true);
    await timed.queue.close();
  });
});
