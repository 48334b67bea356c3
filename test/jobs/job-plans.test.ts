// Statements that address jobs by id read them by id: never the partial index of every succeeded job
// (jobs_succeeded_finished, for the sweeper), which a page of deliveries ANDed with the primary key while
// `status = 'succeeded'` stood beside the ids, nor the one of every running job (jobs_running_lease, for
// the lease rescue), which a store of outcomes read whole while `status = 'running'` stood beside them
// (docs/decisions.md §6; test/billing/hold-plans.test.ts for the holds). And the claim locks the
// candidates it picked where it read them, not by a join that read every queued row once per candidate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../src/db/connection.js';
import { expireJobs, markDeliveryOutcomes } from '../../src/jobs/job-store.js';
import { claimFrom, extendLeases } from '../../src/jobs/kind-queue.js';
import { JOBS_TABLE, startJobs } from '../../src/jobs/leases.js';
import type { Job } from '../../src/jobs/types.js';
import { batchesCompletedIn } from '../../src/webhooks/batch-completions.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { recordingPlans } from '../helpers/statements.js';
import { makeSimParts, type SimParts, submitJob, submitLiveBatch } from './setup.js';

let db: TestDatabase;
let parts: SimParts;

beforeAll(async () => {
  db = await createTestDatabase();
  parts = makeSimParts(db);
});

afterAll(async () => {
  await parts.queue.close();
  await db.close();
});

/** A result row for the jobs to point at. */
async function insertResult(cacheKey: string): Promise<number> {
  const [result] = await db.sql<{ id: number }[]>`
    INSERT INTO results (cache_key, scope, fixture_id, data_version, draws, document, engine, created_at,
                         home_win, draw, away_win, expected_goals_home, expected_goals_away)
    VALUES (${cacheKey}, 'shared', 1001, 'dv', 100, '{}', 'cpu', now(), 0.5, 0.3, 0.2, 1.5, 1)
    RETURNING id`;
  return result!.id;
}

/**
 * 3,000 delivered copies of job `likeId` (ids `job_<prefix>_n`), then ANALYZE: statistics that say few
 * jobs are in any other state, the case in which the planner took a partial index for statements by id.
 */
async function fillWithDeliveredJobs(likeId: string, prefix: string, resultId: number): Promise<void> {
  await db.sql`
    INSERT INTO jobs
    SELECT filler.* FROM generate_series(1, 3000) AS n,
      jsonb_populate_record(NULL::jobs, (SELECT to_jsonb(j) FROM jobs j WHERE id = ${likeId})
        || jsonb_build_object('id', 'job_' || ${prefix}::text || '_' || n,
                              'reservation_id', 'res_' || ${prefix}::text || '_' || n,
                              'status', 'delivered', 'lease_owner', NULL, 'lease_expires_at', NULL,
                              'result_id', ${resultId}::bigint, 'finished_at', now())) AS filler`;
  await db.sql`ANALYZE jobs`;
}

/** 3,000 queued copies of the queued job `likeId` (ids `job_<prefix>_n`), then ANALYZE. */
async function fillWithQueuedJobs(likeId: string, prefix: string): Promise<void> {
  await db.sql`
    INSERT INTO jobs
    SELECT filler.* FROM generate_series(1, 3000) AS n,
      jsonb_populate_record(NULL::jobs, (SELECT to_jsonb(j) FROM jobs j WHERE id = ${likeId})
        || jsonb_build_object('id', 'job_' || ${prefix}::text || '_' || n,
                              'reservation_id', 'res_' || ${prefix}::text || '_' || n)) AS filler`;
  await db.sql`ANALYZE jobs`;
}

describe('job statements by id', () => {
  it('use the primary key, not the index of succeeded jobs, for deliveries and expiry', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    const jobs = await Promise.all(Array.from({ length: 6 }, () => submitJob(parts, org, { draws: 100 })));
    const ids = jobs.map((job) => job.id);
    const resultId = await insertResult('job-plans');
    await db.sql`
      UPDATE jobs SET status = 'succeeded', finished_at = now(), result_id = ${resultId}
      WHERE id = ANY(${ids})`;
    // Statistics that say few jobs have succeeded: the case in which the planner took that index.
    await fillWithDeliveredJobs(ids[0]!, 'filler', resultId);

    const plans: string[] = [];
    await db.sql.begin(async (tx) => {
      const recording = recordingPlans(tx, /UPDATE jobs/, plans);
      const delivered = await markDeliveryOutcomes(recording, jobs.slice(0, 3), 'delivered');
      expect(delivered.map((job) => job.status)).toEqual(['delivered', 'delivered', 'delivered']);
      expect(await expireJobs(recording as never, ids.slice(2))).toHaveLength(3);
    });
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      expect(plan).toMatch(/jobs_pkey/);
      expect(plan).not.toMatch(/jobs_succeeded_finished/);
    }
    const rows = await db.sql<
      { status: string }[]
    >`SELECT status FROM jobs WHERE id = ANY(${ids}) ORDER BY status`;
    expect(rows.map((row) => row.status)).toEqual([
      ...Array(3).fill('delivered'),
      ...Array(3).fill('expired'),
    ]);
  });

  it('use the primary key, not the index of running jobs, to complete a pack of outcomes', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    await Promise.all(Array.from({ length: 4 }, () => submitJob(parts, org, { draws: 100 })));
    const claimed = await parts.queue.claim('w-plans', 4, 60_000);
    expect(claimed).toHaveLength(4);
    const ids = claimed.map((job) => job.id);
    // One of them is no longer this worker's lease: it must be left out, as before.
    await db.sql`UPDATE jobs SET lease_owner = 'w-other' WHERE id = ${ids[3]!}`;
    const resultId = await insertResult('job-plans-running');
    // Statistics that say few jobs run (the rest delivered): the case in which the planner took that index.
    await fillWithDeliveredJobs(ids[0]!, 'running_filler', resultId);

    const plans: string[] = [];
    const completed = await db.sql.begin(async (tx) => {
      const recording = recordingPlans(tx, /UPDATE jobs j/, plans);
      return parts.queue.completeMany(
        recording,
        'w-plans',
        ids.map((jobId) => ({ jobId, resultId, gpuSecondsUsed: 0, engine: 'cpu' })),
      );
    });
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatch(/jobs_pkey/);
    expect(plans[0]).not.toMatch(/jobs_running_lease/);
    expect(completed.map((job) => job.id).sort()).toEqual(ids.slice(0, 3).sort());
    const rows = await db.sql<{ id: string; status: string; leaseOwner: string | null }[]>`
      SELECT id, status, lease_owner FROM jobs WHERE id = ANY(${ids})`;
    expect(rows.sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual(
      [...ids]
        .sort()
        .map((id) =>
          id === ids[3]
            ? { id, status: 'running', leaseOwner: 'w-other' }
            : { id, status: 'succeeded', leaseOwner: null },
        ),
    );
  });

  it('use the primary key, not the index of running jobs, to mark jobs started and extend leases', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    await Promise.all(Array.from({ length: 4 }, () => submitJob(parts, org, { draws: 100 })));
    const claimed = await parts.queue.claim('w-marks', 4, 60_000);
    expect(claimed).toHaveLength(4);
    const ids = claimed.map((job) => job.id);
    // One of them is no longer this worker's lease: it is neither marked nor extended.
    await db.sql`UPDATE jobs SET lease_owner = 'w-other' WHERE id = ${ids[3]!}`;
    const resultId = await insertResult('job-plans-marks');
    // Statistics that say few jobs run (the rest delivered): the case in which the planner took that index.
    await fillWithDeliveredJobs(ids[0]!, 'marks_filler', resultId);

    const plans: string[] = [];
    const leaseEnd = new Date(Date.now() + 120_000);
    const [started, extended] = await db.sql.begin(async (tx) => {
      const recording = recordingPlans(tx, /UPDATE jobs j|lease_owner FROM/, plans);
      return [
        await startJobs({ sql: recording, clock: () => new Date() } as never, 'w-marks', ids),
        await extendLeases(recording as unknown as Sql, JOBS_TABLE, {
          workerId: 'w-marks',
          jobIds: ids,
          leaseEnd,
        }),
      ];
    });
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      expect(plan).toMatch(/jobs_pkey/);
      expect(plan).not.toMatch(/jobs_running_lease/);
    }
    expect(started.sort()).toEqual(ids.slice(0, 3).sort());
    expect(extended.sort()).toEqual(ids.slice(0, 3).sort());
    const rows = await db.sql<{ id: string; started: boolean; extended: boolean }[]>`
      SELECT id, run_started_at IS NOT NULL AS started, lease_expires_at = ${leaseEnd} AS extended
      FROM jobs WHERE id = ANY(${ids}) ORDER BY id`;
    expect(rows).toEqual(
      [...ids].sort().map((id) => ({ id, started: id !== ids[3], extended: id !== ids[3] })),
    );
  });

  it('locks a claim’s candidates by where they were read, with statistics that say none are queued', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    const [first] = await Promise.all([submitJob(parts, org, { draws: 100 })]);
    const resultId = await insertResult('job-plans-claim');
    // Statistics taken while no job was queued, then a batch queued: a claim in a batch's first moments.
    await db.sql`UPDATE jobs SET status = 'delivered', result_id = ${resultId}, finished_at = now() WHERE id = ${first!.id}`;
    await fillWithDeliveredJobs(first!.id, 'claim_filler', resultId);
    await submitLiveBatch(parts, org, 300, 5000, 100);

    const plans: string[] = [];
    const claimed = await db.sql.begin(async (tx) =>
      claimFrom<Job>(recordingPlans(tx, /WITH owners AS/, plans) as unknown as Sql, JOBS_TABLE, {
        workerId: 'w-claim-plans',
        n: 64,
        leaseMs: 60_000,
        now: new Date(),
      }),
    );
    expect(claimed).toHaveLength(64);
    expect(claimed.map((job) => job.batchPosition)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatch(/Tid Scan on jobs j/);
  });
});

describe('the batch completion check', () => {
  it("reads the batch's open items alone, not the index of every open job", async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    const { batch } = await submitLiveBatch(parts, org, 3, 6000, 100);
    const lone = await submitJob(parts, org, { draws: 100 });
    // Thousands of open jobs besides the batch's: the index of every open job is large.
    await fillWithQueuedJobs(lone.id, 'open_filler');

    const plans: string[] = [];
    const outcome = await db.sql.begin((tx) =>
      batchesCompletedIn(recordingPlans(tx, /NOT EXISTS/, plans), [batch.id], new Date()),
    );
    // Its three items are still queued.
    expect(outcome).toEqual({ completed: [], checksLeft: 0 });
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatch(/jobs_open_in_batch/);
    expect(plans[0]).not.toMatch(/jobs_open_by_org/);
  });
});
