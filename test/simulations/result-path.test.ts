// The result path (src/simulations/deliver.ts deliverResult, docs/decisions.md §6 "Delivery") and a
// batch's results stream (src/simulations/batch-results.ts): only a succeeded job's delivery, which settles
// its hold, is a transaction. A client polling an open job, or reading a delivered or ended one again, is
// answered from the job's row as read: one statement for an open job, no transaction for any of them, and
// the same answers as the locked delivery gives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/accounts/caller.js';
import type { Sql } from '../../src/db/connection.js';
import type { ApiError } from '../../src/errors.js';
import { makeJobQueue } from '../../src/jobs/queue.js';
import type { Job } from '../../src/jobs/types.js';
import { type BatchResultItem, openBatchResults } from '../../src/simulations/batch-results.js';
import type { DeliveryDeps, JobOutcome } from '../../src/simulations/deliver.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { countingStatements } from '../helpers/statements.js';
import {
  chargeRows,
  followResultPath,
  HOLD_TTL_SECONDS,
  makeSimParts,
  type SimParts,
  storeSucceeded,
  submitJob,
  submitLiveBatch,
} from '../jobs/setup.js';

let db: TestDatabase;
let parts: SimParts;
/** What the result path sends through `counting`, read by each test after its own reset. */
const counted = { statements: 0, transactions: 0 };
/** The result path's parts over a connection that counts the statements and the transactions sent. */
let countingParts: SimParts;

/** `sql` counting each statement it sends and each transaction it begins (not the statements inside). */
function counting(sql: Sql): Sql {
  return new Proxy(countingStatements(sql, counted), {
    get(target, property, receiver) {
      if (property !== 'begin') return Reflect.get(target, property, receiver);
      return (...args: Parameters<Sql['begin']>) => {
        counted.transactions++;
        return (target.begin as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  parts = makeSimParts(db);
  const sql = counting(db.sql);
  const queue = makeJobQueue({
    sql,
    ledger: parts.ledger,
    clock: () => new Date(),
    holdTtlSeconds: HOLD_TTL_SECONDS,
    notifications: false,
    pollMs: 20,
  });
  const delivery: DeliveryDeps = { ...parts.delivery, sql, queue };
  countingParts = { ...parts, sql, queue, delivery };
});

afterAll(async () => {
  await countingParts.queue.close();
  await parts.queue.close();
  await db.close();
});

/** The result path followed through the counting connection: its outcome (or error) and what it sent. */
async function followCounted(
  orgId: string,
  job: Job,
): Promise<{ outcome: JobOutcome | ApiError } & typeof counted> {
  counted.statements = 0;
  counted.transactions = 0;
  const outcome = await followResultPath(countingParts, { orgId }, job).catch((error: ApiError) => error);
  return { outcome, ...counted };
}

/** A live job of a new organisation, claimed and stored succeeded (a stand-in document). */
async function succeededJob(): Promise<{ orgId: string; job: Job }> {
  const orgId = await insertOrg(db.sql);
  await parts.ledger.topUp(orgId, 1_000_000);
  const submitted = await submitJob(parts, orgId, { inputs: { orgId } });
  const claimed = await parts.queue.claim('w', 1, 60_000);
  expect(claimed.map((job) => job.id)).toEqual([submitted.id]);
  await storeSucceeded(parts, claimed);
  return { orgId, job: (await parts.queue.get(submitted.id))! };
}

/** A live batch of `n` items of a new organisation, every one claimed and stored succeeded. */
async function succeededBatch(n: number): Promise<{ orgId: string; batchId: string }> {
  const orgId = await insertOrg(db.sql);
  await parts.ledger.topUp(orgId, 1_000_000);
  const { batch, jobs } = await submitLiveBatch(parts, orgId, n, 3000);
  const claimed = await parts.queue.claim('w', n, 60_000);
  expect(claimed.map((job) => job.id).sort()).toEqual(jobs.map((job) => job.id).sort());
  await storeSucceeded(parts, claimed);
  return { orgId, batchId: batch.id };
}

/** Every line of a batch's results stream read through the counting connection, and what it sent. */
async function readStreamCounted(orgId: string, batchId: string) {
  counted.statements = 0;
  counted.transactions = 0;
  const caller = { org: { id: orgId }, mode: 'live' } as Caller;
  const ctx = { caller, requestId: 'req_stream', idempotencyKey: null, idempotency: null };
  const { pages } = await openBatchResults(countingParts.delivery, ctx, batchId);
  const items: BatchResultItem[] = [];
  for await (const page of pages) items.push(...page);
  return { items, ...counted };
}

describe('the result path', () => {
  it('delivers a succeeded job in one transaction, charged once, and gives it again without one, for nothing', async () => {
    const { orgId, job } = await succeededJob();
    const first = await followCounted(orgId, job);
    expect(first.transactions).toBe(1);
    const delivered = first.outcome as Extract<JobOutcome, { kind: 'delivered' }>;
    expect(delivered.kind).toBe('delivered');
    expect(delivered.delivered.replayed).toBe(false);
    expect(delivered.delivered.delivery.creditsChargedMilli).toBe(1000);

    const again = await followCounted(orgId, job);
    expect(again.transactions).toBe(0);
    expect(again.outcome).toMatchObject({
      kind: 'delivered',
      delivered: {
        replayed: true,
        job: { status: 'delivered' },
        delivery: { id: delivered.delivered.delivery.id, creditsChargedMilli: 1000 },
        result: { id: delivered.delivered.result.id },
      },
    });
    expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    expect((await parts.ledger.checkBalanced(orgId)).balanced).toBe(true);
  });

  it('answers an ended job with its error, with no transaction', async () => {
    const failed = await succeededJob();
    await db.sql`UPDATE jobs SET status = 'failed', error = ${db.sql.json({ code: 'simulation_failed', message: 'engine refused' })} WHERE id = ${failed.job.id}`;
    const read = await followCounted(failed.orgId, failed.job);
    expect((read.outcome as ApiError).code).toBe('simulation_failed');
    expect((read.outcome as ApiError).options.recovery).toEqual({
      job_id: failed.job.id,
      reservation_id: failed.job.reservationId,
    });
    expect(read.transactions).toBe(0);

    const expired = await succeededJob();
    await db.sql`UPDATE jobs SET status = 'expired' WHERE id = ${expired.job.id}`;
    const lapsed = await followCounted(expired.orgId, expired.job);
    expect((lapsed.outcome as ApiError).code).toBe('reservation_expired');
    expect(lapsed.transactions).toBe(0);
  });
  it("settles a batch's results stream in one transaction, and gives it again without one, for nothing", async () => {
    const { orgId, batchId } = await succeededBatch(3);
    const first = await readStreamCounted(orgId, batchId);
    expect(first.transactions).toBe(1);
    expect(
      first.items.map((item) => item.kind === 'delivered' && item.delivered.delivery.creditsChargedMilli),
    ).toEqual([1000, 1000, 1000]);
    const again = await readStreamCounted(orgId, batchId);
    expect(again.transactions).toBe(0);
    expect(again.items.map((item) => item.kind === 'delivered' && item.delivered.replayed)).toEqual([
      true,
      true,
      true,
    ]);
    expect(again.items.map((item) => item.kind === 'delivered' && item.delivered.delivery.id)).toEqual(
      first.items.map((item) => item.kind === 'delivered' && item.delivered.delivery.id),
    );
    expect((await parts.ledger.checkBalanced(orgId)).balanced).toBe(true);
  });

  // Last: its job stays queued, and the others claim the oldest queued job.
  it('answers an open job pending from one statement, with no transaction', async () => {
    const orgId = await insertOrg(db.sql);
    await parts.ledger.topUp(orgId, 1_000_000);
    const job = await submitJob(parts, orgId, { inputs: { orgId, open: true } });
    const read = await followCounted(orgId, job);
    expect(read.outcome).toMatchObject({ kind: 'pending', job: { id: job.id, status: 'queued' } });
    expect(read.statements).toBe(1);
    expect(read.transactions).toBe(0);
  });
});
