// The projection queue's claim and lease (src/projections/projection-store.ts): a job claimed once at a
// time, taken over when its worker's lease ran out, and only the holder of the lease can store its outcome.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { inTransaction } from '../../src/db/transactions.js';
import { readCompetitionSeason } from '../../src/fixtures/competition-season.js';
import { ingestFeed } from '../../src/fixtures/feed-loader.js';
import { makeOperator } from '../../src/operations/operator.js';
import {
  claimProjectionJob,
  finishProjectionJob,
  getProjectionJob,
  insertProjectionJob,
} from '../../src/projections/projection-store.js';
import { makeProjectionRunner } from '../../src/projections/projection-worker.js';
import { NOW, smallFeed } from '../fixtures/small-feed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
let orgId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  await ingestFeed(db.sql, smallFeed(), { clock: () => NOW });
  const clock = () => NOW;
  const operator = makeOperator({ sql: db.sql, ledger: makeLedger({ sql: db.sql, clock }), clock });
  orgId = (await operator.createOrg({ name: 'Queue', plan: 'plus' })).id;
});
afterAll(async () => db.close());

async function queuedJob(id: string) {
  const season = await readCompetitionSeason(db.sql, 1, NOW);
  return inTransaction(db.sql, {}, (tx) =>
    insertProjectionJob(tx, {
      id,
      orgId,
      mode: 'test',
      reservationId: `res_${id}`,
      competitionId: 1,
      dataVersion: season.dataVersion,
      seasons: 1000,
      seed: 'seed',
      cacheKey: null,
      inputs: { ...season, asOf: null },
      priceMilli: 0,
      createdAt: NOW,
      requestId: 'req_lease',
      idempotencyKey: null,
    }),
  );
}

describe('the projection queue', () => {
  it('claims a job once, lets another worker take it over when the lease ran out, and refuses the old worker', async () => {
    const job = await queuedJob('pjob_lease');
    const first = await claimProjectionJob(db.sql, { workerId: 'a', now: NOW, leaseMs: 60_000 });
    expect(first).toMatchObject({ id: job.id, status: 'running', leaseOwner: 'a', attempts: 1 });
    expect(await claimProjectionJob(db.sql, { workerId: 'b', now: NOW, leaseMs: 60_000 })).toBeNull();
    const later = new Date(NOW.getTime() + 61_000);
    const second = await claimProjectionJob(db.sql, { workerId: 'b', now: later, leaseMs: 60_000 });
    expect(second).toMatchObject({ id: job.id, leaseOwner: 'b', attempts: 2 });
    const failed = { status: 'failed' as const, error: { message: 'late' }, now: later };
    expect(
      await inTransaction(db.sql, {}, (tx) => finishProjectionJob(tx, job.id, { ...failed, workerId: 'a' })),
    ).toBe(false);
    expect(
      await inTransaction(db.sql, {}, (tx) => finishProjectionJob(tx, job.id, { ...failed, workerId: 'b' })),
    ).toBe(true);
    expect(await getProjectionJob(db.sql, job.id)).toMatchObject({ status: 'failed', leaseOwner: null });
  });

  it('fails a job whose runs never stored an outcome, after three claims, without running it again', async () => {
    const job = await queuedJob('pjob_crashing');
    let at = NOW.getTime();
    for (let claim = 0; claim < 3; claim++) {
      at += 121_000;
      expect(
        await claimProjectionJob(db.sql, { workerId: `gone-${claim}`, now: new Date(at), leaseMs: 120_000 }),
      ).not.toBeNull();
    }
    let runs = 0;
    const run = makeProjectionRunner({
      sql: db.sql,
      ledger: makeLedger({ sql: db.sql }),
      runSeasons: async () => {
        runs++;
        throw new Error('not reached');
      },
      clock: () => new Date(at + 121_000),
      workerId: 'last',
      holdTtlSeconds: 3600,
    });
    expect(await run()).toBe(true);
    expect(runs).toBe(0);
    expect(await getProjectionJob(db.sql, job.id)).toMatchObject({ status: 'failed', attempts: 4 });
  });
});
