// Fault test (issue 33, item 3): a batch's results stream and a single delivery of one of its items at
// the same moment. A single delivery locks its job, then its organisation's account; the stream's page
// used to lock its jobs one by one in position order inside one transaction, taking the account at its
// first job, so it could wait for a job a single delivery held while that delivery waited for the account:
// "deadlock detected", answered 503. Here the single delivery is made to hold its job until the page waits
// for it, with a deadlock timeout of 10 ms on its own session so that it is the one PostgreSQL would abort.
// The page must lock its jobs before the account (src/jobs/delivery-locks.ts), so nothing waits in a
// circle: the single delivery settles, the stream gives every item, each charged once. The second test is
// the reported scenario itself: a 90-item batch finishing while 12 readers follow result paths and 2
// read the stream (on main it answered 503 dependency_unavailable in each of 2 runs).
// Real PostgreSQL only: PGlite runs one transaction at a time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { makeJobQueue } from '../../src/jobs/queue.js';
import { makeKnownResults } from '../../src/results/known-results.js';
import { deliverInTransaction } from '../../src/simulations/deliver.js';
import { MANY_FIXTURES_FROM, NOW, withManyFixtures } from '../fixtures/small-feed.js';
import { createTestContext, type TestContext } from '../helpers/app.js';
import { usingServer } from '../helpers/database.js';

if (!usingServer) {
  console.info('delivery deadlock: skipped, it needs a PostgreSQL server (set DATABASE_URL)');
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

const ITEMS = 6;
/** The reported scenario: a 90-item batch read by 12 result-path readers and 2 streams as it finishes. */
const BIG = 90;

let t: TestContext;

beforeAll(async () => {
  if (!usingServer) return;
  t = await createTestContext({ worker: true });
  t.setNow(NOW);
  await t.loadFeed(withManyFixtures(BIG), { clock: () => NOW });
}, 120_000);

afterAll(async () => {
  if (!usingServer) return;
  await t.close();
});

async function waitUntil(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 800; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A backend of this database waiting for a row lock on jobs, other than `besides`. */
async function pageWaitsForAJob(besides: number): Promise<boolean> {
  const rows = await t.db.sql<{ pid: number }[]>`
    SELECT pid FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%FROM jobs%'
      AND pid <> ${besides}`;
  return rows.length > 0;
}

describe.skipIf(!usingServer)('a results stream beside a single delivery of one of its items', () => {
  it('no deadlock: the single delivery settles, the stream gives every item, each charged once', async () => {
    const { auth, orgId } = await t.newOrg({ limits: { simulations_rpm: 100_000 } });
    const fixtures = Array.from({ length: ITEMS }, (_, i) => ({ fixture_id: MANY_FIXTURES_FROM + i }));
    const submitted = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations/batch',
      headers: auth,
      payload: { fixtures, draws: 100 },
    });
    expect(submitted.statusCode, submitted.body.slice(0, 300)).toBe(202);
    const batch: Json = submitted.json();
    const jobs = await t.db.sql<{ id: string; status: string }[]>`
      SELECT id, status FROM jobs WHERE batch_id = ${batch.batch_id} ORDER BY batch_position`;
    await waitUntil(async () => {
      const [row] = await t.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM jobs WHERE batch_id = ${batch.batch_id} AND status = 'succeeded'`;
      return row!.n === ITEMS;
    }, 'every item to succeed');
    // The page reaches this job after it has settled an earlier one (and so, before the fix, holds the account).
    const held = jobs[ITEMS - 1]!;

    const ledger = makeLedger({ sql: t.db.sql, clock: () => NOW });
    const queue = makeJobQueue({
      sql: t.db.sql,
      ledger,
      clock: () => NOW,
      holdTtlSeconds: 3600,
      notifications: false,
    });
    const deps = {
      sql: t.db.sql,
      ledger,
      queue,
      knownResults: makeKnownResults(),
      clock: () => NOW,
      engine: { estimateSeconds: (draws: number) => draws * 1e-6, assertAvailable() {} },
    };
    let stream: Promise<{ statusCode: number; body: string }> | undefined;
    const single = await t.db.sql.begin(async (tx) => {
      // This session is the one a deadlock check would abort, and it checks almost at once.
      await tx`SET LOCAL deadlock_timeout = '10ms'`;
      const [{ pid }] = (await tx`SELECT pg_backend_pid() AS pid`) as unknown as [{ pid: number }];
      expect(await queue.lockForDelivery(tx, held.id)).not.toBeNull();
      stream = t.app.inject({ method: 'GET', url: batch.results_url, headers: auth }).then((r) => r);
      await waitUntil(() => pageWaitsForAJob(pid), 'the results page to wait for the held job');
      // The rest of the single delivery: the account, the hold, the delivery row.
      return deliverInTransaction(deps, { requestId: 'req_single', idempotencyKey: null }, tx, held.id);
    });
    expect(single.status).toBe('delivered');

    const read = await stream!;
    expect(read.statusCode, read.body.slice(0, 300)).toBe(200);
    const items = read.body
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Json);
    expect(items).toHaveLength(ITEMS);
    for (const item of items) expect(item.status, JSON.stringify(item).slice(0, 300)).toBe('delivered');

    const [charges] = await t.db.sql<{ n: number; holds: number }[]>`
      SELECT count(*)::int AS n, count(DISTINCT hold_id)::int AS holds
      FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'charge'`;
    expect(charges).toEqual({ n: ITEMS, holds: ITEMS });
    expect((await makeLedger({ sql: t.db.sql }).checkBalanced(orgId)).balanced).toBe(true);
  }, 120_000);

  it('90 items finishing under 12 result-path readers and 2 streams: every answer a delivery or pending, never a 503', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'pro', limits: { simulations_rpm: 1_000_000 } });
    const fixtures = Array.from({ length: BIG }, (_, i) => ({ fixture_id: MANY_FIXTURES_FROM + i }));
    const submitted = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations/batch',
      headers: auth,
      payload: { fixtures, draws: 200 },
    });
    expect(submitted.statusCode, submitted.body.slice(0, 300)).toBe(202);
    const batch: Json = submitted.json();
    const items: Json[] = batch.items;
    const unfinished = async () => {
      const [row] = await t.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM jobs WHERE batch_id = ${batch.batch_id} AND status IN ('queued', 'running')`;
      return row!.n;
    };
    const failures: string[] = [];
    let reads = 0;
    const reader = async (r: number) => {
      for (let round = 0; round < 200; round++) {
        const open = await unfinished();
        const item = items[(r * 7 + round) % items.length]!;
        const response = await t.app.inject({ method: 'GET', url: item.result_url, headers: auth });
        reads++;
        if (response.statusCode !== 200 && response.statusCode !== 202)
          failures.push(response.body.slice(0, 200));
        if (open === 0 && round > 10) return;
      }
    };
    const streamer = async () => {
      for (let round = 0; round < 100; round++) {
        const open = await unfinished();
        const response = await t.app.inject({ method: 'GET', url: batch.results_url, headers: auth });
        reads++;
        if (response.statusCode !== 200) failures.push(response.body.slice(0, 200));
        if (open === 0) return;
      }
    };
    await Promise.all([...Array.from({ length: 12 }, (_, r) => reader(r)), streamer(), streamer()]);
    expect(failures, failures.join('\n')).toEqual([]);
    expect(reads).toBeGreaterThan(BIG);
    // Every item delivered by someone, charged once.
    const final = await t.app.inject({ method: 'GET', url: batch.results_url, headers: auth });
    expect(final.statusCode).toBe(200);
    const [charges] = await t.db.sql<{ n: number; holds: number }[]>`
      SELECT count(*)::int AS n, count(DISTINCT hold_id)::int AS holds
      FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'charge'`;
    expect(charges).toEqual({ n: BIG, holds: BIG });
    expect((await makeLedger({ sql: t.db.sql }).checkBalanced(orgId)).balanced).toBe(true);
  }, 300_000);
});
