// A job kind other than simulations on the worker of every kind and the job system's waits
// (src/jobs/kind-worker.ts, waits.ts, job-news.ts): a job of the kind queued wakes its sleeping worker, and its end wakes the request waiting
// for it, as soon as the transaction commits; on a PostgreSQL server a second process's worker hears it by
// NOTIFY. Every poll here is set to a minute, so a test that passes was woken, not polled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transactions.js';
import { announceFinished, announceQueued } from '../../src/jobs/job-news.js';
import { startKindWorker } from '../../src/jobs/kind-worker.js';
import { type JobWaits, makeJobWaits } from '../../src/jobs/waits.js';
import { createTestDatabase, type TestDatabase, usingServer } from '../helpers/database.js';

const A_MINUTE = 60_000;

let db: TestDatabase;
let waits: JobWaits;

beforeAll(async () => {
  db = await createTestDatabase({ max: 8 });
  waits = makeJobWaits({ sql: db.sql, notifications: db.kind === 'server', pollMs: A_MINUTE });
});

afterAll(async () => {
  await waits.close();
  await db.close();
});

/**
 * A worker of a kind whose queue finds a job only once `queued` is set; `claimed(n)` resolves at its n-th
 * claim (the first finds none and puts it to sleep). Its handler runs a job at once.
 */
function sleepyKindWorker(kindWaits: JobWaits) {
  const state = { queued: false, claims: 0, ran: 0 };
  const atClaim = new Map<number, () => void>();
  const claimed = (n: number) =>
    new Promise<void>((resolve) => {
      if (state.claims >= n) resolve();
      else atClaim.set(n, resolve);
    });
  const worker = startKindWorker<{ id: string }>({
    kind: {
      queue: {
        claim: async () => {
          state.claims++;
          atClaim.get(state.claims)?.();
          if (!state.queued) return [];
          state.queued = false;
          return [{ id: `sleepy_${state.claims}` }];
        },
        heartbeat: async (_workerId, jobIds) => [...jobIds],
        cancelledOf: async () => [],
        release: async () => [],
      },
      handler: () => async (jobs) => {
        state.ran += jobs.length;
      },
    },
    workerId: 'sleepy',
    logger: { info() {}, warn() {}, error() {} },
    concurrency: 1,
    packSize: 1,
    pollMs: A_MINUTE,
    leaseMs: A_MINUTE,
    maintenanceMs: A_MINUTE,
    clock: () => new Date(),
    waits: kindWaits,
  });
  return { state, worker, claimed };
}

describe('a job kind on the shared waits', () => {
  it('a job of the kind queued wakes its sleeping worker, which claims once more and sleeps', async () => {
    const { state, worker, claimed } = sleepyKindWorker(waits);
    await claimed(1);
    state.queued = true;
    await inTransaction(db.sql, {}, (tx) => announceQueued(waits, tx));
    // The claim that took the job (its handler ran it), then one that found none and put it to sleep again.
    await claimed(3);
    expect(state).toMatchObject({ queued: false, ran: 1 });
    await worker.stop();
    // Stopping wakes the loop, which leaves without claiming: three claims in all.
    expect(state.claims).toBe(3);
  });

  it("a job's end wakes the request waiting for it, whatever its kind", async () => {
    let done = false;
    const waiting = waits.waitUntilDone(
      'pjob_news',
      A_MINUTE,
      async () => ({ done }),
      (row) => !row.done,
    );
    await inTransaction(db.sql, {}, async (tx) => {
      done = true;
      await announceFinished(waits, tx, ['pjob_news']);
    });
    expect(await waiting).toEqual({ done: true });
  });

  it.runIf(usingServer)("another process's worker of the kind hears the news by NOTIFY", async () => {
    const other = makeJobWaits({ sql: db.sql, notifications: true, pollMs: A_MINUTE });
    try {
      const { state, worker, claimed } = sleepyKindWorker(other);
      await claimed(1);
      state.queued = true;
      // Announced by this process's waits: the other one hears the NOTIFY, not the commit.
      await inTransaction(db.sql, {}, (tx) => announceQueued(waits, tx));
      await claimed(2);
      expect(state.queued).toBe(false);
      await worker.stop();
    } finally {
      await other.close();
    }
  });
});
