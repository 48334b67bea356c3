// Job and hold outcomes through the queue and the result path (docs/decisions.md §2 and §6), on PGlite and,
// with DATABASE_URL, on a PostgreSQL server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../src/db/connection.js';
import { documentSummary } from '../../src/engine/document-schema.js';
import { documentText, storedDocument } from '../../src/engine/stored-document.js';
import { ApiError } from '../../src/errors.js';
import { newId } from '../../src/ids.js';
import { getBatch } from '../../src/jobs/job-store.js';
import type { Job } from '../../src/jobs/types.js';
import { findCachedResult, storeResult } from '../../src/results/result-store.js';
import { insertOrg, manualClock } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { countingRoundTrips } from '../helpers/statements.js';
import {
  chargeRows,
  documentFor,
  followResultPath,
  HOLD_TTL_SECONDS,
  makeSimParts,
  newJob,
  type SimParts,
  submitJob,
  submitLiveBatch,
} from './setup.js';

/** How many statements `read` sends: every tagged template called on the connection is one. */
async function countStatements(read: (sql: Sql) => Promise<unknown>): Promise<number> {
  let count = 0;
  const counting = new Proxy(db.sql, {
    apply(target, thisArg, args) {
      count++;
      return Reflect.apply(target, thisArg, args);
    },
  });
  await read(counting);
  return count;
}

let db: TestDatabase;
let parts: SimParts;
const clock = manualClock('2026-03-10T12:00:00Z');

beforeAll(async () => {
  db = await createTestDatabase();
  parts = makeSimParts(db, clock);
});

// Each test claims "the next queued jobs": none may be left over from the one before.
afterEach(async () => {
  await db.sql`
    UPDATE jobs SET status = 'failed', lease_owner = NULL, lease_expires_at = NULL, finished_at = ${clock()}
    WHERE status IN ('queued', 'running')`;
});

afterAll(async () => {
  await parts.queue.close();
  await db.close();
});

async function runToSuccess(jobId: string, workerId = 'w1') {
  const job = await parts.queue.get(jobId);
  const result = await parts.sql.begin(async (tx) => {
    const owned = await parts.queue.lockOwnedJob(tx, jobId, workerId);
    if (!owned) return null;
    const stored = await storeResult(
      tx,
      {
        cacheKey: owned.cacheKey,
        scope: owned.scope,
        orgId: owned.orgId,
        fixtureId: owned.fixtureId,
        dataVersion: owned.dataVersion,
        draws: owned.draws,
        summary: documentSummary(documentFor(job!)),
        document: storedDocument(JSON.stringify(documentFor(job!))),
        engine: 'cpu',
        runMs: 5,
        gpuMs: 0,
      },
      clock(),
    );
    return parts.queue.complete(jobId, {
      resultId: stored.id,
      gpuSecondsUsed: 0,
      engine: 'cpu',
      workerId,
      tx,
    });
  });
  return result;
}

function deliver(job: Job, requestId = 'req_deliver') {
  return followResultPath(parts, { orgId: job.orgId, mode: job.mode }, job, requestId);
}

async function claimOnly(workerId: string, jobId: string) {
  // Claims the oldest queued jobs; the tests below keep one queued job at a time.
  const claimed = await parts.queue.claim(workerId, 10, 30_000);
  expect(claimed.map((job) => job.id)).toContain(jobId);
  return claimed;
}

describe('job outcomes', () => {
  it('queued → running → succeeded → delivered: settled once, replayed free', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org, { draws: 2500 });
    expect(job).toMatchObject({ status: 'queued', attempts: 0, priceMilli: 2500 });
    expect(await parts.ledger.balance(org)).toMatchObject({ held: 2500 });

    const pending = await deliver(job);
    expect(pending.kind).toBe('pending');

    await claimOnly('w1', job.id);
    const running = await parts.queue.get(job.id);
    expect(running).toMatchObject({ status: 'running', attempts: 1, leaseOwner: 'w1' });
    await parts.queue.progress(job.id, 1200, 'w1');
    expect((await parts.queue.get(job.id))?.drawsDone).toBe(1200);

    const completed = await runToSuccess(job.id);
    expect(completed).toMatchObject({ status: 'succeeded', drawsDone: 2500, leaseOwner: null });
    const hold = await parts.ledger.getHold(job.reservationId);
    expect(hold?.expiresAt?.getTime()).toBe(completed!.finishedAt!.getTime() + HOLD_TTL_SECONDS * 1000);

    const first = await deliver(job);
    expect(first.kind).toBe('delivered');
    if (first.kind !== 'delivered') return;
    expect(first.delivered.replayed).toBe(false);
    expect(first.delivered.delivery.id).toMatch(/^sim_/);
    expect(first.delivered.delivery.creditsChargedMilli).toBe(2500);
    expect(first.delivered.job.status).toBe('delivered');
    expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    expect(await parts.ledger.balance(org)).toMatchObject({ held: 0, spentThisMonth: 2500 });

    const again = await deliver(job, 'req_again');
    expect(again.kind === 'delivered' && again.delivered.replayed).toBe(true);
    if (again.kind === 'delivered') expect(again.delivered.delivery).toEqual(first.delivered.delivery);
    expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    expect((await parts.ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('failed: the result path answers simulation_failed and the hold ends after the TTL', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org);
    await claimOnly('w1', job.id);
    const failed = await parts.queue.fail(
      job.id,
      { code: 'simulation_failed', message: 'engine lost' },
      { workerId: 'w1' },
    );
    expect(failed).toMatchObject({ status: 'failed', error: { message: 'engine lost' } });
    expect((await parts.ledger.getHold(job.reservationId))?.expiresAt?.getTime()).toBe(
      failed!.finishedAt!.getTime() + HOLD_TTL_SECONDS * 1000,
    );
    const error = await deliver(job).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('simulation_failed');
    expect(await chargeRows(db.sql, job.reservationId)).toBe(0);

    // A second failure or a completion of a failed job changes nothing.
    expect(await parts.queue.fail(job.id, { code: 'x', message: 'again' })).toBeNull();
    expect(await parts.queue.complete(job.id, { resultId: 1, gpuSecondsUsed: 0, engine: 'cpu' })).toBeNull();

    clock.advance(HOLD_TTL_SECONDS * 1000 + 1);
    const swept = await parts.sweeper.sweep();
    expect(swept.releasedHolds).toContain(job.reservationId);
    expect((await parts.queue.get(job.id))?.status).toBe('failed');
    expect(await parts.ledger.balance(org)).toMatchObject({ held: 0, spentThisMonth: 0 });
    expect((await parts.ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('expired by the sweeper: hold released, job expired, result path 409 reservation_expired', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org, { draws: 1500 });
    await claimOnly('w1', job.id);
    await runToSuccess(job.id);

    clock.advance(HOLD_TTL_SECONDS * 1000 - 1000);
    expect((await parts.sweeper.sweep()).expiredJobs).not.toContain(job.id);
    clock.advance(1000);
    const swept = await parts.sweeper.sweep();
    expect(swept.releasedHolds).toContain(job.reservationId);
    expect(swept.expiredJobs).toContain(job.id);
    expect((await parts.queue.get(job.id))?.status).toBe('expired');
    expect(await parts.ledger.getHold(job.reservationId)).toMatchObject({
      status: 'released',
      releaseReason: 'expired',
    });
    expect(await parts.ledger.balance(org)).toMatchObject({ held: 0, spentThisMonth: 0 });

    const error = await deliver(job).catch((caught: unknown) => caught);
    expect((error as ApiError).code).toBe('reservation_expired');
    expect(await chargeRows(db.sql, job.reservationId)).toBe(0);
    expect((await parts.ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('a hold past its end but not yet swept: the result path ends it and the job expires', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org);
    await claimOnly('w1', job.id);
    await runToSuccess(job.id);
    clock.advance(HOLD_TTL_SECONDS * 1000 + 5);
    const error = await deliver(job).catch((caught: unknown) => caught);
    expect((error as ApiError).code).toBe('reservation_expired');
    expect((await parts.queue.get(job.id))?.status).toBe('expired');
    expect((await parts.ledger.getHold(job.reservationId))?.status).toBe('released');
    expect((await parts.ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('test keys: no hold, nothing charged, the job expires on the same clock', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org, { mode: 'test' });
    expect(job.reservationId).toMatch(/^res_/);
    expect(await parts.ledger.getHold(job.reservationId)).toBeNull();
    await claimOnly('w1', job.id);
    await runToSuccess(job.id);
    const delivered = await deliver(job);
    expect(delivered.kind === 'delivered' && delivered.delivered.delivery.creditsChargedMilli).toBe(0);

    const other = await submitJob(parts, org, { mode: 'test' });
    await claimOnly('w1', other.id);
    await runToSuccess(other.id);
    clock.advance(HOLD_TTL_SECONDS * 1000 + 1);
    expect((await parts.sweeper.sweep()).expiredJobs).toContain(other.id);
    expect((await parts.queue.get(job.id))?.status).toBe('delivered');
    expect((await parts.ledger.entries(org)).filter((entry) => entry.kind !== 'grant')).toEqual([]);
  });

  it('unknown job, wrong reservation or another organisation: resource_missing', async () => {
    const org = await insertOrg(db.sql);
    const stranger = await insertOrg(db.sql);
    const job = await submitJob(parts, org);
    for (const [owner, attempt] of [
      [org, { ...job, id: 'job_missing' }],
      [org, { ...job, reservationId: 'res_wrong' }],
      [stranger, job],
    ] as const) {
      const error = await followResultPath(parts, { orgId: owner }, attempt).catch(
        (caught: unknown) => caught,
      );
      expect((error as ApiError).code).toBe('resource_missing');
    }
  });
});

describe('leases', () => {
  it('rescue after a lease expiry: queued again, attempts counted, the late worker cannot complete, delivered once', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org);
    await parts.queue.claim('dead', 10, 1000);
    clock.advance(999);
    expect((await parts.queue.rescueExpiredLeases()).requeued).toEqual([]);
    clock.advance(1);
    const rescued = await parts.queue.rescueExpiredLeases();
    expect(rescued.requeued.map((row) => row.id)).toEqual([job.id]);
    expect(await parts.queue.get(job.id)).toMatchObject({ status: 'queued', attempts: 1, leaseOwner: null });

    await claimOnly('alive', job.id);
    expect(await runToSuccess(job.id, 'dead')).toBeNull();
    expect(await parts.queue.heartbeat('dead', [job.id], 1000)).toEqual([]);
    // Not held by 'dead' any more, and not cancelled: its lease was lost.
    expect(await parts.queue.cancelledOf([job.id])).toEqual([]);
    expect(await parts.queue.heartbeat('alive', [job.id], 1000)).toEqual([job.id]);
    const done = await runToSuccess(job.id, 'alive');
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(await runToSuccess(job.id, 'alive')).toBeNull();

    await deliver(job);
    await deliver(job);
    expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    expect((await parts.ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('a job whose lease lapses MAX_ATTEMPTS times fails, and its hold gets an end', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org);
    for (let attempt = 1; attempt <= 3; attempt++) {
      await claimOnly(`w${attempt}`, job.id);
      clock.advance(30_001);
      const rescued = await parts.queue.rescueExpiredLeases();
      if (attempt < 3) expect(rescued.requeued.map((row) => row.id)).toEqual([job.id]);
      else expect(rescued.failed.map((row) => row.id)).toEqual([job.id]);
    }
    const failed = await parts.queue.get(job.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'simulation_failed' } });
    expect((await parts.ledger.getHold(job.reservationId))?.expiresAt).not.toBeNull();
  });
});

describe('batches, cache hits and counts', () => {
  it('a batch counts as one open job group and lists its items with their deliveries', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    const single = await submitJob(parts, org);
    const { batch, jobs } = await submitLiveBatch(parts, org, 3);
    expect(batch).toMatchObject({ itemCount: 3, orgId: org });
    expect(jobs.every((job) => job.batchId === batch.id && job.status === 'queued')).toBe(true);
    expect(await parts.queue.openJobCount(org)).toBe(2);

    const claimed = await parts.queue.claim('w1', 10, 30_000);
    expect(claimed.map((job) => job.id).sort()).toEqual([single.id, ...jobs.map((job) => job.id)].sort());
    expect(await parts.queue.openJobCount(org)).toBe(2);
    for (const job of jobs) await runToSuccess(job.id);
    expect(await parts.queue.openJobCount(org)).toBe(1);
    await deliver(jobs[0]!);

    const status = await parts.queue.getBatch(batch.id, { orgId: org, mode: 'live' });
    expect(await parts.queue.getBatch(batch.id, { orgId: org, mode: 'test' })).toBeNull();
    expect(await parts.queue.getBatch(batch.id, { orgId: 'org_other', mode: 'live' })).toBeNull();
    // Each item with what its delivery charged, read in the same statement; 0 before a delivery.
    expect(status?.items.map((item) => [item.status, item.creditsChargedMilli])).toEqual([
      ['delivered', 1000],
      ['succeeded', 0],
      ['succeeded', 0],
    ]);
    expect(await parts.queue.getBatch('batch_missing', { orgId: org, mode: 'live' })).toBeNull();

    // Another organisation's batch costs what an unknown id costs: one statement, its items never read.
    const statements = (owner: { orgId: string; mode: 'live' | 'test' }, batchId: string) =>
      countStatements((sql) => getBatch(sql, batchId, owner));
    expect(await statements({ orgId: org, mode: 'live' }, batch.id)).toBe(2);
    expect(await statements({ orgId: 'org_other', mode: 'live' }, batch.id)).toBe(1);
    expect(await statements({ orgId: org, mode: 'test' }, batch.id)).toBe(1);
    expect(await statements({ orgId: org, mode: 'live' }, 'batch_missing')).toBe(1);
  });

  it("queues a job and the workers' wake-up in one round trip", async () => {
    const org = await insertOrg(db.sql);
    const counted = { roundTrips: 0 };
    const job = await db.sql.begin((tx) =>
      parts.queue.enqueue(
        countingRoundTrips(tx, /INSERT INTO jobs/, counted),
        newJob(org, { reservationId: newId('res'), draws: 1000, mode: 'test', inputs: { wake: true } }),
      ),
    );
    expect(job.status).toBe('queued');
    // The INSERT and the NOTIFY (delivered at commit) sent together.
    expect(counted.roundTrips).toBe(1);
  });

  it('a cache hit is born succeeded with the cached result, its hold already given an end', async () => {
    const org = await insertOrg(db.sql);
    const first = await submitJob(parts, org, { inputs: { same: true } });
    await claimOnly('w1', first.id);
    const done = await runToSuccess(first.id);
    const cached = await findCachedResult(db.sql, { cacheKey: first.cacheKey, scope: 'shared', orgId: org });
    expect(cached?.id).toBe(done!.resultId);

    const other = await insertOrg(db.sql);
    const hit = await submitJob(parts, other, { inputs: { same: true }, cachedResultId: cached!.id });
    expect(hit).toMatchObject({ status: 'succeeded', resultId: cached!.id, gpuSecondsUsed: 0 });
    expect((await parts.ledger.getHold(hit.reservationId))?.expiresAt).not.toBeNull();
    expect(await parts.queue.claim('w1', 10, 30_000)).toEqual([]);
    const delivered = await deliver(hit);
    expect(
      delivered.kind === 'delivered' && JSON.parse(documentText(delivered.delivered.result.document)),
    ).toEqual(documentFor(first));
  });

  it('waitFor resolves when the job ends, or with its current state when the time is up', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org);
    const early = await parts.queue.waitFor(job.id, 30);
    expect(early?.status).toBe('queued');
    await claimOnly('w1', job.id);
    const waiting = parts.queue.waitFor(job.id, 10_000);
    setTimeout(() => void runToSuccess(job.id), 50);
    expect((await waiting)?.status).toBe('succeeded');
    expect(await parts.queue.waitFor('job_missing', 10)).toBeNull();
  });
});

describe('results', () => {
  it('private results serve only their organisation; shared ones everyone', async () => {
    const owner = await insertOrg(db.sql);
    const other = await insertOrg(db.sql);
    const job = await submitJob(parts, owner, {
      scope: 'private',
      cacheKey: 'private-key',
      inputs: { custom: 1 },
    });
    await claimOnly('w1', job.id);
    await runToSuccess(job.id);
    expect(
      await findCachedResult(db.sql, { cacheKey: 'private-key', scope: 'private', orgId: owner }),
    ).not.toBeNull();
    expect(
      await findCachedResult(db.sql, { cacheKey: 'private-key', scope: 'private', orgId: other }),
    ).toBeNull();
    expect(
      await findCachedResult(db.sql, { cacheKey: 'private-key', scope: 'shared', orgId: other }),
    ).toBeNull();
  });
});
