// A page of a batch's results stream delivered set-based (src/simulations/deliver-page.ts,
// docs/decisions.md §6): the same statements for one job as for twenty, every hold charged exactly once,
// and each job's outcome the one its result path gives (a replay free, an ended hold released and
// reservation_expired, a failed job simulation_failed), with the ledger balanced. And a single delivery,
// which charges its hold with the page's statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import type { BalanceLowered } from '../../src/billing/types.js';
import type { Sql } from '../../src/db/connection.js';
import { lockJobsForDelivery } from '../../src/jobs/delivery-locks.js';
import type { Job } from '../../src/jobs/types.js';
import { type DeliveryDeps, deliverInTransaction } from '../../src/simulations/deliver.js';
import { deliverLockedPage, type PageOutcome } from '../../src/simulations/deliver-page.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { countingRoundTrips, countingStatements } from '../helpers/statements.js';
import {
  chargeRows,
  deliver,
  makeSimParts,
  type SimParts,
  storeSucceeded,
  submitJob,
} from '../jobs/setup.js';

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

/** `n` live jobs of a new organisation (draws priced one milli-credit each), run and stored succeeded. */
async function finishedJobs(n: number, draws = 1000): Promise<{ orgId: string; jobs: Job[] }> {
  const orgId = await insertOrg(db.sql);
  await parts.ledger.topUp(orgId, 1_000_000);
  const submitted = await Promise.all(
    Array.from({ length: n }, (_, i) => submitJob(parts, orgId, { draws, inputs: { orgId, i } })),
  );
  const claimed = await parts.queue.claim('w', n, 60_000);
  expect(claimed).toHaveLength(n);
  await storeSucceeded(parts, claimed);
  const jobs = await Promise.all(submitted.map(async (job) => (await parts.queue.get(job.id))!));
  return { orgId, jobs };
}

/** The page delivered in one transaction whose statements are counted (its lock and its delivery). */
async function deliverPage(
  jobs: readonly Job[],
  deps: DeliveryDeps = parts.delivery,
): Promise<{ outcomes: PageOutcome[]; statements: number }> {
  const count = { statements: 0 };
  const outcomes = await db.sql.begin((tx) => {
    const counted = countingStatements(tx, count);
    return lockJobsForDelivery(counted, jobs).then((locked) =>
      deliverLockedPage(deps, { requestId: 'req_page', idempotencyKey: null }, counted, locked),
    );
  });
  return { outcomes, statements: count.statements };
}

async function holdStatus(sql: Sql, holdId: string): Promise<string> {
  const [row] = await sql<{ status: string }[]>`SELECT status FROM credit_holds WHERE id = ${holdId}`;
  return row!.status;
}

describe('a single delivery (the result path)', () => {
  it('charges its hold in one statement: seven statements in all, the account locked for two round trips, the ledger balanced', async () => {
    const { orgId, jobs } = await finishedJobs(1);
    const count = { statements: 0 };
    const counted = { roundTrips: 0 };
    const outcome = await db.sql.begin((tx) =>
      deliverInTransaction(
        parts.delivery,
        { requestId: 'req_single', idempotencyKey: null },
        countingRoundTrips(countingStatements(tx, count), /FROM credit_accounts a JOIN orgs o/, counted),
        jobs[0]!.id,
      ),
    );
    // The job's lock, the account's, the hold's, the charge (hold, account and ledger row in one), then
    // the delivery, the job's status and the summary (no balance watch here: see the page's test below).
    expect(count.statements).toBe(7);
    // Every delivery of an organisation waits for its account (src/billing/ledger.ts): the account's
    // lock goes with the hold's, and the charge with the delivery's own statements (the ledger's
    // `alongside`), where they were four round trips one after another (five with the webhooks'
    // credits.low check, which now goes with the charge).
    expect(counted.roundTrips).toBe(2);
    expect(outcome.status === 'delivered' && outcome.delivered.delivery.creditsChargedMilli).toBe(1000);
    expect(await chargeRows(db.sql, jobs[0]!.reservationId)).toBe(1);
    expect(await holdStatus(db.sql, jobs[0]!.reservationId)).toBe('settled');
    const balance = await parts.ledger.balance(orgId);
    expect(balance.held).toBe(0);
    expect(outcome.status === 'delivered' && outcome.delivered.delivery.creditsRemainingMilli).toBe(
      balance.available,
    );
    expect((await parts.ledger.checkBalanced(orgId)).balanced).toBe(true);
  });
});

describe('a page of the results stream', () => {
  it('is delivered with the same statements for one job as for twenty, each hold charged once', async () => {
    const one = await finishedJobs(1);
    const twenty = await finishedJobs(20, 1500);
    const first = await deliverPage(one.jobs);
    const page = await deliverPage(twenty.jobs);
    // The jobs' lock, the account's, the holds', the charges, the deliveries, the jobs' status, the summaries.
    expect(first.statements).toBe(7);
    expect(page.statements).toBe(first.statements);
    expect(page.outcomes.map((outcome) => outcome.status)).toEqual(Array(20).fill('delivered'));
    for (const job of twenty.jobs) expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    const balance = await parts.ledger.balance(twenty.orgId);
    expect(balance.held).toBe(0);
    for (const outcome of page.outcomes) {
      if (outcome.status !== 'delivered') continue;
      expect(outcome.delivered.replayed).toBe(false);
      expect(outcome.delivered.delivery.creditsChargedMilli).toBe(1500);
      expect(outcome.delivered.delivery.creditsRemainingMilli).toBe(balance.available);
      expect(outcome.delivered.job.status).toBe('delivered');
    }
    expect((await parts.ledger.checkBalanced(twenty.orgId)).balanced).toBe(true);
    // A second read gives the same deliveries again, charging nothing more.
    const again = await deliverPage(twenty.jobs.map((job) => ({ ...job, status: 'delivered' })));
    const ids = (outcomes: PageOutcome[]) =>
      outcomes.flatMap((o) => (o.status === 'delivered' ? [o.delivered.delivery.id] : [])).sort();
    expect(ids(again.outcomes)).toEqual(ids(page.outcomes));
    expect(again.outcomes.every((o) => o.status === 'delivered' && o.delivered.replayed)).toBe(true);
    expect((await parts.ledger.balance(twenty.orgId)).available).toBe(balance.available);
  });

  it('gives each job what its result path gives: charged, replayed, reservation_expired, simulation_failed', async () => {
    const { orgId, jobs } = await finishedJobs(4);
    const [charged, replayed, lapsed, failed] = jobs as [Job, Job, Job, Job];
    const single = await deliver(parts, replayed);
    await db.sql`UPDATE credit_holds SET expires_at = now() - interval '1 minute' WHERE id = ${lapsed.reservationId}`;
    await db.sql`UPDATE jobs SET status = 'failed', error = ${db.sql.json({ code: 'simulation_failed', message: 'engine refused' })} WHERE id = ${failed.id}`;
    const before = await parts.ledger.balance(orgId);
    const { outcomes } = await deliverPage(jobs);
    const outcomeOf = (job: Job) =>
      outcomes.find((o) => (o.status === 'delivered' ? o.delivered.job.id : o.job.id) === job.id)!;
    const first = outcomeOf(charged);
    expect(first.status === 'delivered' && first.delivered.delivery.creditsChargedMilli).toBe(1000);
    const second = outcomeOf(replayed);
    expect(second.status === 'delivered' && second.delivered.replayed).toBe(true);
    expect(second.status === 'delivered' && second.delivered.delivery.id).toBe(
      single.kind === 'delivered' ? single.delivered.delivery.id : null,
    );
    const third = outcomeOf(lapsed);
    expect(third.status).toBe('expired');
    expect(third.status === 'expired' && third.job.status).toBe('expired');
    expect(await holdStatus(db.sql, lapsed.reservationId)).toBe('released');
    const fourth = outcomeOf(failed);
    expect(fourth.status === 'ended' && fourth.error.code).toBe('simulation_failed');
    for (const job of [charged, replayed]) expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    expect(await chargeRows(db.sql, lapsed.reservationId)).toBe(0);
    const after = await parts.ledger.balance(orgId);
    // Settling moves held credits to spent ones; the lapsed hold's credits come back.
    expect(after.available).toBe(before.available + 1000);
    expect((await parts.ledger.checkBalanced(orgId)).balanced).toBe(true);
  });

  it("tells the balance watch (the webhooks' credits.low) of the page's charges once, with their sum", async () => {
    const { orgId, jobs } = await finishedJobs(3, 700);
    const seen: BalanceLowered[] = [];
    const ledger = makeLedger({
      sql: db.sql,
      balanceWatch: { balanceLowered: async (_tx, change) => void seen.push(change) },
    });
    const before = await parts.ledger.balance(orgId);
    await deliverPage(jobs, { ...parts.delivery, ledger });
    const remaining = before.monthlyRemaining + before.topupRemaining;
    expect(seen).toEqual([{ orgId, beforeMilli: remaining, afterMilli: remaining - 2100 }]);
  });
});
