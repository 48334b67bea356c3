// Statements that address jobs by id read them by id: never the partial index of every succeeded job
// (jobs_succeeded_finished, for the sweeper), which a page of deliveries ANDed with the primary key while
// `status = 'succeeded'` stood beside the ids (docs/decisions.md §6; test/billing/hold-plans.test.ts
// for the holds).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireJobs, markDeliveryOutcomes } from '../../src/jobs/job-store.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { recordingPlans } from '../helpers/statements.js';
import { makeSimParts, type SimParts, submitJob } from './setup.js';

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

describe('job statements by id', () => {
  it('use the primary key, not the index of succeeded jobs, for deliveries and expiry', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    const jobs = await Promise.all(Array.from({ length: 6 }, () => submitJob(parts, org, { draws: 100 })));
    const ids = jobs.map((job) => job.id);
    const [result] = await db.sql<{ id: number }[]>`
      INSERT INTO results (cache_key, scope, fixture_id, data_version, draws, document, engine, created_at,
                           home_win, draw, away_win, expected_goals_home, expected_goals_away)
      VALUES ('job-plans', 'shared', 1001, 'dv', 100, '{}', 'cpu', now(), 0.5, 0.3, 0.2, 1.5, 1)
      RETURNING id`;
    await db.sql`
      UPDATE jobs SET status = 'succeeded', finished_at = now(), result_id = ${result!.id}
      WHERE id = ANY(${ids})`;
    // Statistics that say few jobs have succeeded: the case in which the planner took that index.
    await db.sql`
      INSERT INTO jobs
      SELECT filler.* FROM generate_series(1, 3000) AS n,
        jsonb_populate_record(NULL::jobs, (SELECT to_jsonb(j) FROM jobs j WHERE id = ${ids[0]!})
          || jsonb_build_object('id', 'job_filler_' || n, 'reservation_id', 'res_filler_' || n,
                                'status', 'delivered')) AS filler`;
    await db.sql`ANALYZE jobs`;

    const plans: string[] = [];
    await db.sql.begin(async (tx) => {
      const recording = recordingPlans(tx, /UPDATE jobs/, plans);
      const delivered = await markDeliveryOutcomes(recording, ids.slice(0, 3), 'delivered');
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
});
