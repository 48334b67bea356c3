// Migration 0014: a job's engine inputs become json, and what its views show (`request`) a jsonb column
// of its own. Rows written before keep both parts, each in its new place; a job row without a request
// (a cache hit stores only `{request}`, an engine payload none) migrates too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMigrations, runMigrations } from '../../src/db/migrations.js';
import { getJob } from '../../src/jobs/job-store.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ migrateUpTo: 13 });
});

afterAll(async () => {
  await db.close();
});

async function jobBefore0014(id: string, orgId: string, inputs: unknown) {
  await db.sql`
    INSERT INTO jobs (id, org_id, mode, reservation_id, fixture_id, data_version, draws, seed, inputs, cache_key,
                      scope, created_at, usage_day, request_id)
    VALUES (${id}, ${orgId}, 'live', ${`res_${id}`}, 1, 'dv', 1000, '1', ${JSON.stringify(inputs)}::text::jsonb,
            ${`ck_${id}`}, 'shared', now(), current_date, 'req')`;
}

describe('migration 0014', () => {
  it('moves the request out of the engine inputs, which become json, and the job reads the same', async () => {
    const orgId = await insertOrg(db.sql);
    const request = { state: 'provisional', inputs: { home: 'predicted' }, warnings: [], inputs_hash: 'h' };
    const match = { home: { players: [{ player_id: 7, rating: 0.5 }] }, profile: null };
    await jobBefore0014('job_both', orgId, { match, as_of: '2026-11-26T00:00:00.000Z', request });
    await jobBefore0014('job_request', orgId, { request });
    await jobBefore0014('job_null', orgId, null);
    // Up to 14 only: 0016 makes the payload text (its bytes unchanged).
    expect(
      await runMigrations(
        db.sql,
        readMigrations().filter((m) => m.version <= 14),
      ),
    ).toEqual([14]);

    const [column] = await db.sql`
      SELECT data_type FROM information_schema.columns WHERE table_name = 'jobs' AND column_name = 'inputs'`;
    expect(column!.dataType).toBe('json');
    const rows = await db.sql`SELECT id, inputs, request FROM jobs ORDER BY id`;
    expect(rows).toEqual([
      { id: 'job_both', inputs: { match, as_of: '2026-11-26T00:00:00.000Z' }, request },
      { id: 'job_null', inputs: null, request: null },
      { id: 'job_request', inputs: {}, request },
    ]);
    // The job's views read the request as before (jobColumns' `{request}`).
    expect((await getJob(db.sql, 'job_both'))!.inputs).toEqual({ request });
  });
});
