// Wake-ups without polling (src/jobs/waits.ts, src/db/commit-hooks.ts): a job queued wakes this process's
// worker, and a job finished or cancelled wakes the requests waiting for it, as soon as the transaction
// that did it commits, on PGlite as on a PostgreSQL server. Every poll here is set to a minute, so a
// test that passes was woken, not polled.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { newId } from '../../src/ids.js';
import { type JobQueue, makeJobQueue } from '../../src/jobs/queue.js';
import { startWorker, type Worker, type WorkerOptions } from '../../src/jobs/worker.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  deterministicEngine,
  HOLD_TTL_SECONDS,
  makeSimParts,
  newJob,
  type SimParts,
  submitJob,
} from './setup.js';

const A_MINUTE = 60_000;

let db: TestDatabase;
let parts: SimParts;
let queue: JobQueue;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ max: 8 });
  const clock = () => new Date();
  queue = makeJobQueue({
    sql: db.sql,
    ledger: makeLedger({ sql: db.sql, clock }),
    clock,
    holdTtlSeconds: HOLD_TTL_SECONDS,
    notifications: db.kind === 'server',
    pollMs: A_MINUTE,
  });
  parts = { ...makeSimParts(db, clock), queue };
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});

afterAll(async () => {
  await queue.close();
  await db.close();
});

/**
 * A worker that polls once a minute, and resolves `asleep` once its first claim (of nothing) is done;
 * `claims()` counts the claims it has sent.
 */
function sleepyWorker(options: Partial<Pick<WorkerOptions, 'concurrency' | 'packSize' | 'runBatch'>> = {}) {
  let claims = 0;
  let firstClaimDone: () => void = () => {};
  const asleep = new Promise<void>((resolve) => {
    firstClaimDone = resolve;
  });
  const counting: JobQueue = {
    ...queue,
    claim: async (...args) => {
      const claimed = await queue.claim(...args);
      if (++claims === 1) firstClaimDone();
      return claimed;
    },
  };
  const worker = startWorker({
    queue: counting,
    sql: db.sql,
    runBatch: deterministicEngine(),
    workerId: 'sleepy',
    pollMs: A_MINUTE,
    leaseMs: A_MINUTE,
    maintenanceMs: A_MINUTE,
    ...options,
  });
  workers.push(worker);
  return { worker, asleep, claims: () => claims };
}

describe('wake-ups', () => {
  it('a job queued wakes the sleeping worker, and its end wakes the request waiting for it', async () => {
    const org = await insertOrg(db.sql);
    const { asleep } = sleepyWorker();
    await asleep;
    const job = await submitJob(parts, org);
    // Waited for half a minute at most: a worker or waiter left to its one-minute poll answers `queued`.
    const done = await queue.waitFor(job.id, A_MINUTE / 2);
    expect(done?.status).toBe('succeeded');
  });

  it('a lone job costs its worker one claim: none again at once, none for its own NOTIFY, none after its run', async () => {
    const org = await insertOrg(db.sql);
    const { asleep, claims } = sleepyWorker();
    await asleep;
    const job = await submitJob(parts, org);
    expect((await queue.waitFor(job.id, A_MINUTE / 2))?.status).toBe('succeeded');
    // The store's wake-ups and, on a server, the NOTIFY of the job come within milliseconds.
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The claim of nothing that put it to sleep, and the one that took the job (there were five).
    expect(claims()).toBe(2);
  });

  it('a job queued while its worker has no room is claimed when a run frees a slot, not at the poll', async () => {
    const org = await insertOrg(db.sql);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let runs = 0;
    const engine = deterministicEngine();
    // Room for two, claimed a pack of two at a time: with the first job running, one slot is free and no
    // claim is sent for the second; the first one's end must claim it.
    const { asleep } = sleepyWorker({
      concurrency: 2,
      packSize: 2,
      runBatch: async (jobs, context) => {
        // The first run is the first job's: the worker was asleep with nothing queued.
        if (runs++ === 0) await held;
        return engine(jobs, context);
      },
    });
    await asleep;
    const first = await submitJob(parts, org, { mode: 'test' });
    // The first claimed alone before the second is queued: on a loaded machine the worker's claim could
    // otherwise come after both commits and take the two as one pack.
    while ((await queue.get(first.id))?.status !== 'running') {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const second = await submitJob(parts, org, { mode: 'test' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await queue.get(second.id))?.status).toBe('queued');
    release();
    expect((await queue.waitFor(second.id, A_MINUTE / 2))?.status).toBe('succeeded');
  });

  it("a batch's cancel wakes the requests waiting for its queued items", async () => {
    const org = await insertOrg(db.sql);
    const { jobs } = await db.sql.begin(async (tx) => {
      const items = [1, 2, 3].map((n) =>
        newJob(org, { reservationId: newId('res'), draws: 1000, mode: 'test', inputs: { n } }),
      );
      return queue.enqueueBatch(tx, { orgId: org, mode: 'test', draws: 1000, requestId: 'req_b' }, items);
    });
    // Items 1 and 2 are cancelled below; item 3 stays queued (its batch is not cancelled, only a
    // second one made of it) and its waiter times out after half a minute. A cancelled item's waiter
    // waits up to a whole minute, so it answers first only if the cancel woke it.
    await db.sql`UPDATE jobs SET batch_id = NULL WHERE id = ${jobs[2]!.id}`;
    const cancelled = Promise.all(jobs.slice(0, 2).map((job) => queue.waitFor(job.id, A_MINUTE)));
    const bystander = queue.waitFor(jobs[2]!.id, A_MINUTE / 2).then(() => 'timed out' as const);
    // The waiters have read their jobs (queued) before the cancel: PGlite answers statements in order.
    await db.sql`SELECT 1`;
    const batchId = jobs[0]!.batchId!;
    await db.sql.begin((tx) => queue.cancelUnstarted(tx, batchId, { orgId: org, mode: 'test' }));
    const first = await Promise.race([cancelled, bystander]);
    expect(first === 'timed out' ? first : first.map((job) => job?.status)).toEqual([
      'cancelled',
      'cancelled',
    ]);
  });

  it('a transaction that rolls back wakes nobody', async () => {
    const org = await insertOrg(db.sql);
    let woken = 0;
    const stop = await queue.listenForWork(() => woken++);
    await expect(
      db.sql.begin(async (tx) => {
        await queue.enqueue(
          tx,
          newJob(org, { reservationId: newId('res'), draws: 1000, mode: 'test', inputs: {} }),
        );
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await new Promise((resolve) => setTimeout(resolve, 50));
    await stop();
    expect(woken).toBe(0);
  });
});
