// Storing a worker's pack of outcomes (src/jobs/job-outcomes.ts recordOutcomes, docs/decisions.md §6):
// one transaction whose statements do not grow with the pack, every job completed with its document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql, TransactionSql } from '../../src/db/connection.js';
import { documentSummary } from '../../src/engine/document-schema.js';
import { storedDocument } from '../../src/engine/stored-document.js';
import { recordOutcomes } from '../../src/jobs/job-outcomes.js';
import type { Job } from '../../src/jobs/types.js';
import { storeResults } from '../../src/results/result-store.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { countingStatements } from '../helpers/statements.js';
import { documentFor, makeSimParts, type SimParts, submitJob, succeededOutcomes } from './setup.js';

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

/** `sql` whose transactions count their statements (test/helpers/statements.ts). */
function countingTransactions(sql: Sql) {
  const counted = { statements: 0 };
  const begin = (work: (tx: TransactionSql) => Promise<unknown>) =>
    sql.begin((tx) => work(countingStatements(tx, counted)));
  return {
    sql: new Proxy(sql, { get: (target, key) => (key === 'begin' ? begin : Reflect.get(target, key)) }),
    counted,
  };
}

/** `n` live jobs submitted and claimed by worker `w`, stored as one pack; the statements it took. */
async function storePack(n: number): Promise<{ statements: number; jobs: Job[]; recorded: string[] }> {
  const org = await insertOrg(db.sql);
  await Promise.all(Array.from({ length: n }, (_, i) => submitJob(parts, org, { inputs: { n, i } })));
  const claimed = await parts.queue.claim('w', n, 60_000);
  expect(claimed).toHaveLength(n);
  const { sql, counted } = countingTransactions(db.sql);
  const recorded = await recordOutcomes(
    { queue: parts.queue, sql, knownResults: parts.knownResults, workerId: 'w', clock: () => new Date() },
    succeededOutcomes(claimed),
  );
  const jobs = await Promise.all(claimed.map(async (job) => (await parts.queue.get(job.id))!));
  return { statements: counted.statements, jobs, recorded };
}

describe('a pack of outcomes', () => {
  it('is stored in one transaction of the same statements for one job as for twenty', async () => {
    const one = await storePack(1);
    const twenty = await storePack(20);
    // Documents, completions (the jobs locked and their leases checked, and the waiters' news, in the same
    // statement), hold ends (no GPU time to settle here, and no webhooks' outbox).
    expect(one.statements).toBe(3);
    expect(twenty.statements).toBe(one.statements);
    for (const pack of [one, twenty]) {
      expect(pack.recorded.every((outcome) => outcome === 'completed')).toBe(true);
      expect(pack.jobs.every((job) => job.status === 'succeeded' && job.resultId !== null)).toBe(true);
    }
    expect(new Set(twenty.jobs.map((job) => job.resultId)).size).toBe(20);
  });

  it('in a pack, stores the documents of the jobs still held and takes back the others', async () => {
    const org = await insertOrg(db.sql);
    await Promise.all([0, 1, 2].map((i) => submitJob(parts, org, { inputs: { mixed: true, i } })));
    const claimed = await parts.queue.claim('w-mixed', 3, 60_000);
    expect(claimed).toHaveLength(3);
    const [kept, lost, storedBefore] = claimed as [Job, Job, Job];
    // The third job's inputs were stored by another job meanwhile: that row is not this pack's to take back.
    const earlier = documentFor(storedBefore);
    await db.sql.begin((tx) =>
      storeResults(
        tx,
        [
          {
            cacheKey: storedBefore.cacheKey,
            scope: storedBefore.scope,
            orgId: storedBefore.orgId,
            fixtureId: storedBefore.fixtureId,
            dataVersion: storedBefore.dataVersion,
            draws: storedBefore.draws,
            summary: documentSummary(earlier),
            document: storedDocument(JSON.stringify(earlier)),
            engine: 'cpu',
            runMs: 1,
            gpuMs: 0,
          },
        ],
        new Date(),
      ),
    );
    await db.sql`UPDATE jobs SET lease_owner = 'w-other' WHERE id = ANY(${[lost.id, storedBefore.id]})`;
    const recorded = await recordOutcomes(
      {
        queue: parts.queue,
        sql: db.sql,
        knownResults: parts.knownResults,
        workerId: 'w-mixed',
        clock: () => new Date(),
      },
      succeededOutcomes(claimed),
    );
    expect(recorded).toEqual(['completed', 'dropped', 'dropped']);
    const stored = async (job: Job) =>
      (
        await db.sql<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM results WHERE cache_key = ${job.cacheKey}`
      )[0]!.n;
    expect(await stored(kept)).toBe(1);
    expect(await stored(lost)).toBe(0);
    expect(await stored(storedBefore)).toBe(1);
    expect((await parts.queue.get(kept.id))!.status).toBe('succeeded');
    expect((await parts.queue.get(lost.id))!.status).toBe('running');
  });

  it('drops the outcome of a job no longer this worker’s and stores nothing for it', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org, { inputs: { lost: true } });
    const [claimed] = await parts.queue.claim('w-late', 1, 60_000);
    await db.sql`UPDATE jobs SET lease_owner = 'w-other' WHERE id = ${job.id}`;
    const document = documentFor(claimed!);
    const [recorded] = await recordOutcomes(
      {
        queue: parts.queue,
        sql: db.sql,
        knownResults: parts.knownResults,
        workerId: 'w-late',
        clock: () => new Date(),
      },
      [
        {
          job: claimed!,
          outcome: {
            jobId: job.id,
            summary: documentSummary(document),
            document: storedDocument(JSON.stringify(document)),
            engine: 'cpu',
            runMs: 1,
            gpuMs: 0,
          },
        },
      ],
    );
    expect(recorded).toBe('dropped');
    const [row] = await db.sql`SELECT count(*)::int AS n FROM results WHERE cache_key = ${claimed!.cacheKey}`;
    expect(row!.n).toBe(0);
  });
});
