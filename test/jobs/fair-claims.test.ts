// The claim's fair order (docs/decisions.md §6 "Fair shares", src/jobs/kind-queue.ts claimFrom): another
// organisation's small run ahead of a large batch queued first, organisations that both wait taking turns
// by draws, an organisation's single run ahead of its own batch, test keys in one lane of their own; on
// PGlite and, with DATABASE_URL, on a PostgreSQL server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/jobs/types.js';
import { insertOrg, manualClock } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { makeSimParts, type SimParts, submitJob, submitLiveBatch } from './setup.js';

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

/** Jobs are queued a second apart, so "queued first" is plain in created_at. */
function later<T>(submit: () => Promise<T>): Promise<T> {
  clock.advance(1000);
  return submit();
}

const ids = (jobs: readonly Job[]) => jobs.map((job) => job.id);

describe('the fair claim', () => {
  it("takes another organisation's small run ahead of a large batch queued first, whether or not the batch runs", async () => {
    const big = await insertOrg(db.sql, { plan: 'pro' });
    const small = await insertOrg(db.sql, { plan: 'pro' });
    const { jobs: path } = await later(() => submitLiveBatch(parts, big, 8, 3000, 100_000));
    const lone = await later(() => submitJob(parts, small, { draws: 1000 }));
    // Nothing runs: the small run's tag (1,000 draws) is below the batch's first (100,000).
    expect(ids(await parts.queue.claim('w1', 1, 30_000, 1))).toEqual([lone.id]);
    expect(ids(await parts.queue.claim('w1', 1, 30_000, 1))).toEqual([path[0]!.id]);
    // The batch's first item runs (100,000 draws of its lane): a run queued now still goes first.
    const next = await later(() => submitJob(parts, small, { draws: 1000 }));
    expect(ids(await parts.queue.claim('w2', 3, 30_000))).toEqual([next.id, path[1]!.id, path[2]!.id]);
  });

  it('lets organisations that both wait take turns by draws, oldest first within each', async () => {
    const first = await insertOrg(db.sql, { plan: 'pro' });
    const second = await insertOrg(db.sql, { plan: 'pro' });
    const { jobs: a } = await later(() => submitLiveBatch(parts, first, 3, 3100));
    const { jobs: b } = await later(() => submitLiveBatch(parts, second, 3, 3200));
    const claimed = await parts.queue.claim('w1', 6, 30_000);
    expect(ids(claimed)).toEqual([a[0], b[0], a[1], b[1], a[2], b[2]].map((job) => job!.id));
  });

  it("weighs a Pro organisation's lane twice a Plus one's (src/limits/plans.ts laneWeight)", async () => {
    const plus = await insertOrg(db.sql, { plan: 'plus' });
    const pro = await insertOrg(db.sql, { plan: 'pro' });
    const { jobs: a } = await later(() => submitLiveBatch(parts, plus, 3, 3700));
    const { jobs: b } = await later(() => submitLiveBatch(parts, pro, 6, 3800));
    const claimed = await parts.queue.claim('w1', 9, 30_000);
    // Tags of 1,000-draw items: Plus 1,000, 2,000, 3,000; Pro 500, 1,000, … 3,000; ties oldest first.
    expect(ids(claimed)).toEqual(
      [b[0], a[0], b[1], b[2], a[1], b[3], b[4], a[2], b[5]].map((job) => job!.id),
    );
    expect(claimed.map((job) => job.laneWeight)).toEqual([2, 1, 2, 2, 1, 2, 2, 1, 2]);
  });

  it("takes an organisation's single run ahead of its own batch queued first", async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    const { jobs: batch } = await later(() => submitLiveBatch(parts, org, 4, 3300));
    const single = await later(() => submitJob(parts, org, { draws: 1000 }));
    const claimed = await parts.queue.claim('w1', 5, 30_000);
    expect(ids(claimed)).toEqual([single.id, ...ids(batch)]);
  });

  it("puts every organisation's test keys in one lane of their own", async () => {
    const first = await insertOrg(db.sql, { plan: 'plus' });
    const second = await insertOrg(db.sql, { plan: 'plus' });
    const a1 = await later(() => submitJob(parts, first, { mode: 'test' }));
    const a2 = await later(() => submitJob(parts, first, { mode: 'test' }));
    const b1 = await later(() => submitJob(parts, second, { mode: 'test' }));
    const live = await later(() => submitJob(parts, second, { draws: 1000 }));
    // One lane for the three test runs (oldest first), beside the live run's lane: the live run's tag
    // (1,000 over a Plus lane's weight, 1) ties the test lane's first, which is older.
    const claimed = await parts.queue.claim('w1', 4, 30_000);
    expect(ids(claimed)).toEqual([a1.id, live.id, a2.id, b1.id]);
  });

  it('takes only runs of at most the draws asked, in the fair order, when a claim asks for small ones', async () => {
    const big = await insertOrg(db.sql, { plan: 'pro' });
    const small = await insertOrg(db.sql, { plan: 'pro' });
    const { jobs: path } = await later(() => submitLiveBatch(parts, big, 2, 3500, 100_000));
    expect(await parts.queue.claim('w1', 4, 30_000, 20_000, { maxWeight: 20_000 })).toEqual([]);
    const lone = await later(() => submitJob(parts, small, { draws: 1000 }));
    const mine = await later(() => submitJob(parts, big, { draws: 2000 }));
    expect(ids(await parts.queue.claim('w1', 4, 30_000, 20_000, { maxWeight: 20_000 }))).toEqual([
      lone.id,
      mine.id,
    ]);
    expect(ids(await parts.queue.claim('w1', 4, 30_000))).toEqual(ids(path));
  });

  it('takes the jobs of lanes with nothing running, whatever their draws, when a claim asks for idle lanes', async () => {
    const big = await insertOrg(db.sql, { plan: 'pro' });
    const other = await insertOrg(db.sql, { plan: 'pro' });
    const { jobs: path } = await later(() => submitLiveBatch(parts, big, 3, 3600, 100_000));
    expect(ids(await parts.queue.claim('w1', 1, 30_000))).toEqual([path[0]!.id]);
    // The big organisation's lane runs: its queued items are not idle, the other's 100,000-draw run is.
    const large = await later(() => submitJob(parts, other, { draws: 100_000 }));
    const idleOnly = { maxWeight: 20_000, idleLanes: true };
    expect(ids(await parts.queue.claim('w1', 4, 30_000, 1_000_000, idleOnly))).toEqual([large.id]);
    // Now the other lane runs too: only its small runs pass.
    const again = await later(() => submitJob(parts, other, { draws: 100_000 }));
    const small = await later(() => submitJob(parts, other, { draws: 1000 }));
    expect(ids(await parts.queue.claim('w1', 4, 30_000, 1_000_000, idleOnly))).toEqual([small.id]);
    // Lanes by draws: the big one's 100,000 running and the other's 101,000.
    expect(ids(await parts.queue.claim('w1', 4, 30_000))).toEqual([path[1]!.id, again.id, path[2]!.id]);
  });

  it('still ends a claim at its room of draws, the first job always taken', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    const { jobs } = await later(() => submitLiveBatch(parts, org, 3, 3400, 50_000));
    expect(ids(await parts.queue.claim('w1', 3, 30_000, 10))).toEqual([jobs[0]!.id]);
    expect(ids(await parts.queue.claim('w1', 3, 30_000, 60_000))).toEqual([jobs[1]!.id, jobs[2]!.id]);
  });
});
