// Money under contention. Meaningful against the PostgreSQL server (DATABASE_URL, 60 connections);
// on PGlite the same tests run with one connection, where nothing contends, and check the bookkeeping only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Ledger, makeLedger } from '../../src/billing/ledger.js';
import { ApiError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase, usingServer } from '../helpers/database.js';
import { HOUR_MS, insertOrg, manualClock } from './fixtures.js';

let db: TestDatabase;
const clock = manualClock('2026-05-20T10:00:00Z');
let ledger: Ledger;

beforeAll(async () => {
  db = await createTestDatabase({ max: 60 });
  ledger = makeLedger({ sql: db.sql, clock });
  if (!usingServer)
    console.info('ledger concurrency: PGlite has one connection, so these runs do not contend');
});

afterAll(async () => {
  await db.close();
});

const SPENDERS = 50;
const PRICE = 7_000;

async function settleAll(work: Promise<unknown>[]) {
  return Promise.allSettled(work);
}

function errorCodes(results: PromiseSettledResult<unknown>[]): string[] {
  return results.flatMap((result) =>
    result.status === 'rejected'
      ? [result.reason instanceof ApiError ? result.reason.code : String(result.reason)]
      : [],
  );
}

async function ledgerRowsByRequest(orgId: string): Promise<Map<string, number>> {
  const rows = await db.sql<{ requestId: string; rows: number }[]>`
    SELECT request_id, count(*)::int AS rows FROM credit_ledger
    WHERE org_id = ${orgId} AND request_id IS NOT NULL GROUP BY request_id`;
  return new Map(rows.map((row) => [row.requestId, row.rows]));
}

describe('50 concurrent spenders', () => {
  it('never overdraw: the balance covers 14 of them, and exactly 14 succeed', async () => {
    const org = await insertOrg(db.sql, { plan: 'plus' });
    await ledger.openAccount(org);

    // A reader that samples the balance all through the storm.
    let storming = true;
    const samples: number[] = [];
    const sampler = (async () => {
      while (storming) {
        samples.push((await ledger.balance(org)).available);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })();

    // Half hold-then-settle (simulations), half one-step charges (expected lineups).
    const results = await settleAll(
      Array.from({ length: SPENDERS }, async (_, index) => {
        const requestId = `req_spender_${index}`;
        if (index % 2 === 0) {
          const hold = await ledger.reserve(org, PRICE, { requestId, idempotencyKey: `idem_${index}` });
          return ledger.settle(hold.id, { requestId: `${requestId}_delivery` });
        }
        return ledger.chargeDirect(org, PRICE, { requestId, idempotencyKey: `idem_${index}` });
      }),
    );
    storming = false;
    await sampler;

    const succeeded = results.filter((result) => result.status === 'fulfilled');
    expect(succeeded).toHaveLength(Math.floor(100_000 / PRICE));
    expect(new Set(errorCodes(results))).toEqual(new Set(['balance_too_low']));
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);

    const balance = await ledger.balance(org);
    expect(balance).toMatchObject({ available: 100_000 - 14 * PRICE, held: 0, spentThisMonth: 14 * PRICE });

    // One ledger row per successful spend (the hold or the one-step charge), none for a refusal.
    const rowsByRequest = await ledgerRowsByRequest(org);
    results.forEach((result, index) => {
      const rows = rowsByRequest.get(`req_spender_${index}`) ?? 0;
      expect(rows).toBe(result.status === 'fulfilled' ? 1 : 0);
      if (index % 2 === 0) expect(rowsByRequest.get(`req_spender_${index}_delivery`) ?? 0).toBe(rows);
    });
    const charges = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM credit_ledger WHERE org_id = ${org} AND kind = 'charge'`;
    expect(charges[0]!.n).toBe(14);
    expect((await ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('never pass the spend cap', async () => {
    const org = await insertOrg(db.sql, { plan: 'plus', spendCapMilli: 50_000 });
    await ledger.topUp(org, 1_000_000);
    const results = await settleAll(
      Array.from({ length: SPENDERS }, (_, index) =>
        ledger.reserve(org, PRICE, { requestId: `req_cap_${index}`, idempotencyKey: null }),
      ),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(7);
    expect(new Set(errorCodes(results))).toEqual(new Set(['max_credits_exceeded']));
    expect((await ledger.balance(org)).held).toBe(7 * PRICE);
    expect((await ledger.checkBalanced(org)).balanced).toBe(true);
  });
});

describe('one hold, many hands', () => {
  it('concurrent settles of one hold charge once and all return that charge', async () => {
    const org = await insertOrg(db.sql);
    const hold = await ledger.reserve(org, 5_000, { requestId: 'req' });
    const charges = await Promise.all(
      Array.from({ length: 20 }, (_, index) => ledger.settle(hold.id, { requestId: `req_settle_${index}` })),
    );
    expect(charges.filter((charge) => !charge.replayed)).toHaveLength(1);
    expect(new Set(charges.map((charge) => charge.entryId)).size).toBe(1);
    expect(await ledger.balance(org)).toMatchObject({ spentThisMonth: 5_000, available: 95_000, held: 0 });
    expect((await ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('settle racing release: exactly one of them wins', async () => {
    const org = await insertOrg(db.sql);
    const holds = await Promise.all(
      Array.from({ length: 10 }, (_, index) => ledger.reserve(org, 1_000, { requestId: `req_${index}` })),
    );
    const outcomes = await Promise.all(
      holds.map(async (hold) => {
        const [settled, released] = await Promise.allSettled([
          ledger.settle(hold.id, { requestId: 'req_settle' }),
          ledger.release(hold.id, 'job failed'),
        ]);
        const settleWon = settled.status === 'fulfilled';
        const releaseWon = released.status === 'fulfilled' && released.value.released;
        if (!settleWon) expect((settled as PromiseRejectedResult).reason.code).toBe('reservation_expired');
        return { settleWon, releaseWon, status: (await ledger.getHold(hold.id))!.status };
      }),
    );
    for (const outcome of outcomes) {
      expect(outcome.settleWon).not.toBe(outcome.releaseWon);
      expect(outcome.status).toBe(outcome.settleWon ? 'settled' : 'released');
    }
    const settledCount = outcomes.filter((outcome) => outcome.settleWon).length;
    expect(await ledger.balance(org)).toMatchObject({ held: 0, spentThisMonth: settledCount * 1_000 });
    expect((await ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('concurrent sweepers release each expired hold once', async () => {
    const org = await insertOrg(db.sql);
    const expiresAt = new Date(clock().getTime() + HOUR_MS);
    const holds = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        ledger.reserve(org, 1_000, { requestId: `req_${index}`, expiresAt }),
      ),
    );
    const sweepAt = new Date(expiresAt.getTime() + 1);
    const sweeps = await Promise.all([1, 2, 3, 4].map(() => ledger.expireHolds(sweepAt)));
    const releasedIds = sweeps
      .flat()
      .filter((hold) => hold.orgId === org)
      .map((hold) => hold.id);
    expect(releasedIds.sort()).toEqual(holds.map((hold) => hold.id).sort());
    const releases = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM credit_ledger WHERE org_id = ${org} AND kind = 'release'`;
    expect(releases[0]!.n).toBe(12);
    expect((await ledger.balance(org)).held).toBe(0);
  });
});

describe('monthly reset and account opening under concurrency', () => {
  it('a month change seen by 40 requests at once resets once', async () => {
    const monthClock = manualClock('2026-05-31T23:00:00Z');
    const monthLedger = makeLedger({ sql: db.sql, clock: monthClock });
    const org = await insertOrg(db.sql);
    await monthLedger.chargeDirect(org, 25_000, { requestId: 'req_may' });
    monthClock.set('2026-06-01T00:00:00.001Z');
    const results = await settleAll(
      Array.from({ length: 40 }, (_, index) =>
        index % 2 === 0
          ? monthLedger.balance(org)
          : monthLedger.chargeDirect(org, 1_000, { requestId: `req_june_${index}` }),
      ),
    );
    expect(errorCodes(results)).toEqual([]);
    const entries = await monthLedger.entries(org);
    expect(entries.filter((entry) => entry.kind === 'expire')).toHaveLength(1);
    expect(entries.filter((entry) => entry.kind === 'grant')).toHaveLength(2);
    expect(entries.find((entry) => entry.kind === 'expire')?.amount).toBe(75_000);
    expect(await monthLedger.balance(org)).toMatchObject({
      monthlyRemaining: 80_000,
      spentThisMonth: 20_000,
    });
    expect((await monthLedger.checkBalanced(org)).balanced).toBe(true);
  });

  it('an account first used by 30 requests at once is opened with one grant', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    const results = await settleAll(
      Array.from({ length: 30 }, (_, index) =>
        index % 3 === 0 ? ledger.openAccount(org) : ledger.reserve(org, 1_000, { requestId: `req_${index}` }),
      ),
    );
    expect(errorCodes(results)).toEqual([]);
    const grants = (await ledger.entries(org)).filter((entry) => entry.kind === 'grant');
    expect(grants).toHaveLength(1);
    expect((await ledger.balance(org)).available).toBe(2_500_000 - 20 * 1_000);
  });

  it('leaves every account equal to the sum of its ledger', async () => {
    expect(await ledger.findUnbalancedAccounts()).toEqual([]);
  });
});
