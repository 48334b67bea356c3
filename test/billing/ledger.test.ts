// Every credit movement of the ledger, one at a time, against a real database (PGlite, or the server
// when DATABASE_URL is set).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { ApiError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { countingRoundTrips, countingStatements } from '../helpers/statements.js';
import { HOUR_MS, insertOrg, manualClock } from './fixtures.js';

let db: TestDatabase;
const clock = manualClock('2026-03-15T12:00:00Z');
let ledger: ReturnType<typeof makeLedger>;

beforeAll(async () => {
  db = await createTestDatabase();
  ledger = makeLedger({ sql: db.sql, clock });
});

afterAll(async () => {
  await db.close();
});

afterEach(async () => {
  expect(await ledger.findUnbalancedAccounts()).toEqual([]);
  clock.set('2026-03-15T12:00:00Z');
});

async function expectApiError(promise: Promise<unknown>, code: string): Promise<ApiError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe(code);
  return error as ApiError;
}

async function kinds(orgId: string): Promise<string[]> {
  return (await ledger.entries(orgId)).map((entry) => entry.kind);
}

describe('accounts', () => {
  it('opens with the plan allowance of the current month, once', async () => {
    const plus = await insertOrg(db.sql, { plan: 'plus' });
    const pro = await insertOrg(db.sql, { plan: 'pro' });
    const none = await insertOrg(db.sql, { plan: 'none' });

    const plusBalance = await ledger.openAccount(plus);
    expect(plusBalance).toMatchObject({
      monthlyRemaining: 100_000,
      topupRemaining: 0,
      held: 0,
      available: 100_000,
      spentThisMonth: 0,
      spendCap: 1_000_000,
    });
    expect(plusBalance.periodStart.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect((await ledger.openAccount(pro)).available).toBe(2_500_000);
    expect((await ledger.openAccount(none)).available).toBe(0);

    await ledger.openAccount(plus);
    expect(await kinds(plus)).toEqual(['grant']);
    expect(await kinds(none)).toEqual([]);
  });

  it('opens an account on first use and refuses an unknown organisation', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    expect((await ledger.balance(org)).available).toBe(2_500_000);
    await expectApiError(ledger.balance('org_missing'), 'resource_missing');
  });

  it('grants nothing while the plan is inactive', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro', planActive: false });
    expect((await ledger.balance(org)).monthlyRemaining).toBe(0);
  });
});

describe('top-ups', () => {
  it('adds top-up credits with one ledger row carrying the request id and reference', async () => {
    const org = await insertOrg(db.sql);
    const entry = await ledger.topUp(org, 5_000, { requestId: 'req_1', reference: 'invoice 7' });
    expect(entry).toMatchObject({ kind: 'topup', amount: 5_000, topupDelta: 5_000, requestId: 'req_1' });
    expect(entry.reference).toBe('invoice 7');
    expect(await ledger.balance(org)).toMatchObject({ topupRemaining: 5_000, available: 105_000 });
  });

  it('moves money once per idempotency key', async () => {
    const org = await insertOrg(db.sql);
    const first = await ledger.topUp(org, 2_000, { idempotencyKey: 'topup-1' });
    const again = await ledger.topUp(org, 2_000, { idempotencyKey: 'topup-1' });
    expect(again.id).toBe(first.id);
    expect((await ledger.balance(org)).topupRemaining).toBe(2_000);
  });

  it('refuses amounts that are not positive integers', async () => {
    const org = await insertOrg(db.sql);
    await expect(ledger.topUp(org, 0)).rejects.toThrow(RangeError);
    await expect(ledger.topUp(org, 1.5)).rejects.toThrow(RangeError);
    await expect(ledger.reserve(org, -1, { requestId: 'req' })).rejects.toThrow(RangeError);
  });
});

describe('holds', () => {
  it('holds monthly credits first, then top-up credits', async () => {
    const org = await insertOrg(db.sql);
    await ledger.topUp(org, 50_000);
    const hold = await ledger.reserve(org, 120_000, {
      requestId: 'req_h',
      idempotencyKey: 'idem-h',
      expiresAt: new Date('2026-03-15T14:00:00Z'),
    });
    expect(hold.id).toMatch(/^res_[0-9A-Za-z]{20}$/);
    expect(hold).toMatchObject({
      orgId: org,
      amount: 120_000,
      monthlyPart: 100_000,
      topupPart: 20_000,
      status: 'pending',
      requestId: 'req_h',
      idempotencyKey: 'idem-h',
    });
    expect(hold.expiresAt?.toISOString()).toBe('2026-03-15T14:00:00.000Z');
    expect(await ledger.balance(org)).toMatchObject({
      monthlyRemaining: 100_000,
      topupRemaining: 50_000,
      held: 120_000,
      available: 30_000,
    });
    const [, , holdEntry] = await ledger.entries(org);
    expect(holdEntry).toMatchObject({
      kind: 'hold',
      holdId: hold.id,
      monthlyHeldDelta: 100_000,
      topupHeldDelta: 20_000,
      requestId: 'req_h',
      idempotencyKey: 'idem-h',
    });
  });

  it('answers balance_too_low when available credits cannot cover the price, moving nothing', async () => {
    const org = await insertOrg(db.sql);
    await ledger.reserve(org, 60_000, { requestId: 'req' });
    const error = await expectApiError(ledger.reserve(org, 40_001, { requestId: 'req' }), 'balance_too_low');
    expect(error.options.recovery).toEqual({ credits_required: 40.001, credits_available: 40 });
    expect(await kinds(org)).toEqual(['grant', 'hold']);
    await ledger.reserve(org, 40_000, { requestId: 'req' });
    expect((await ledger.balance(org)).available).toBe(0);
  });

  it('answers max_credits_exceeded when charges plus active holds would pass the spend cap', async () => {
    const org = await insertOrg(db.sql, { spendCapMilli: 10_000 });
    await ledger.topUp(org, 1_000_000);
    await ledger.chargeDirect(org, 4_000, { requestId: 'req' });
    await ledger.reserve(org, 5_000, { requestId: 'req' });
    await expectApiError(ledger.reserve(org, 1_001, { requestId: 'req' }), 'max_credits_exceeded');
    await expectApiError(ledger.chargeDirect(org, 1_001, { requestId: 'req' }), 'max_credits_exceeded');
    await ledger.reserve(org, 1_000, { requestId: 'req' });
    expect(await ledger.balance(org)).toMatchObject({ spentThisMonth: 4_000, held: 6_000, spendCap: 10_000 });
  });

  it('checks the balance before the spend cap when both fail', async () => {
    const org = await insertOrg(db.sql, { spendCapMilli: 1_000 });
    await expectApiError(ledger.reserve(org, 200_000, { requestId: 'req' }), 'balance_too_low');
  });

  it('returns the same hold when reserved again with the same hold id', async () => {
    const org = await insertOrg(db.sql);
    const first = await ledger.reserve(org, 1_000, { holdId: 'res_fixed1', requestId: 'req' });
    const again = await ledger.reserve(org, 1_000, { holdId: 'res_fixed1', requestId: 'req' });
    expect(again).toEqual(first);
    expect((await ledger.balance(org)).held).toBe(1_000);
    await expect(ledger.reserve(org, 2_000, { holdId: 'res_fixed1', requestId: 'req' })).rejects.toThrow(
      /already exists/,
    );
  });

  it("joins the caller's transaction: the hold lives or dies with the caller's other writes", async () => {
    const org = await insertOrg(db.sql);
    await ledger.openAccount(org);
    await expect(
      db.sql.begin(async (tx) => {
        await ledger.reserve(org, 10_000, { holdId: 'res_rolledback', requestId: 'req', tx });
        throw new Error('job insert failed');
      }),
    ).rejects.toThrow('job insert failed');
    expect(await ledger.getHold('res_rolledback')).toBeNull();
    expect((await ledger.balance(org)).held).toBe(0);

    await db.sql.begin(async (tx) => {
      await ledger.reserve(org, 10_000, { holdId: 'res_committed', requestId: 'req', tx });
    });
    expect((await ledger.getHold('res_committed'))?.status).toBe('pending');
    expect((await ledger.balance(org)).held).toBe(10_000);
  });
});

describe("a hold's round trips", () => {
  it('keeps the account locked for two round trips: its lock with the look for the hold id, then the held credits, the hold and its ledger row', async () => {
    const org = await insertOrg(db.sql);
    await ledger.openAccount(org);
    const count = { statements: 0 };
    const counted = { roundTrips: 0 };
    const hold = await db.sql.begin((tx) =>
      ledger.reserve(org, 10_000, {
        holdId: 'res_two_trips',
        requestId: 'req',
        tx: countingRoundTrips(countingStatements(tx, count), /FROM credit_accounts a JOIN orgs o/, counted),
      }),
    );
    // The account's lock and the look for an existing hold, then the account's held credits, the hold
    // and its `hold` ledger row: each pair or trio sent together (they were five round trips in a row).
    expect(count.statements).toBe(5);
    expect(counted.roundTrips).toBe(2);
    expect(hold).toMatchObject({ id: 'res_two_trips', amount: 10_000, status: 'pending' });
    expect((await ledger.entries(org)).filter((entry) => entry.kind === 'hold')).toMatchObject([
      { holdId: 'res_two_trips', amount: 10_000 },
    ]);
    expect((await ledger.balance(org)).held).toBe(10_000);
    expect((await ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it("keeps the account locked for two round trips for a batch's holds: its lock, then the held credits with the holds and their ledger rows", async () => {
    const org = await insertOrg(db.sql);
    await ledger.openAccount(org);
    const counted = { roundTrips: 0 };
    const holds = await db.sql.begin((tx) =>
      ledger.reserveMany(
        org,
        [
          { holdId: 'res_trips_a', milli: 2_000 },
          { holdId: 'res_trips_b', milli: 3_000 },
        ],
        { requestId: 'req', tx: countingRoundTrips(tx, /FROM credit_accounts a JOIN orgs o/, counted) },
      ),
    );
    expect(counted.roundTrips).toBe(2);
    expect(holds.map((hold) => [hold.id, hold.amount])).toEqual([
      ['res_trips_a', 2_000],
      ['res_trips_b', 3_000],
    ]);
    expect((await ledger.balance(org)).held).toBe(5_000);
    expect((await ledger.checkBalanced(org)).balanced).toBe(true);
  });
});

describe('holds for many jobs at once (a batch)', () => {
  it('splits each hold as successive reservations would, with one hold entry each, in order', async () => {
    const org = await insertOrg(db.sql);
    await ledger.topUp(org, 50_000);
    const holds = await ledger.reserveMany(
      org,
      [
        { holdId: 'res_many_a', milli: 60_000 },
        { holdId: 'res_many_b', milli: 60_000 },
        { holdId: 'res_many_c', milli: 10_000 },
      ],
      { requestId: 'req_many', idempotencyKey: 'idem-many' },
    );
    expect(holds.map((hold) => [hold.id, hold.monthlyPart, hold.topupPart])).toEqual([
      ['res_many_a', 60_000, 0],
      ['res_many_b', 40_000, 20_000],
      ['res_many_c', 0, 10_000],
    ]);
    expect(holds.every((hold) => hold.status === 'pending' && hold.requestId === 'req_many')).toBe(true);
    expect(await ledger.balance(org)).toMatchObject({ held: 130_000, available: 20_000 });
    const entries = (await ledger.entries(org)).filter((entry) => entry.kind === 'hold');
    expect(entries.map((entry) => [entry.holdId, entry.monthlyHeldDelta, entry.topupHeldDelta])).toEqual([
      ['res_many_a', 60_000, 0],
      ['res_many_b', 40_000, 20_000],
      ['res_many_c', 0, 10_000],
    ]);
    expect(entries.every((entry) => entry.idempotencyKey === 'idem-many')).toBe(true);
  });

  it('refuses the whole set when it cannot all be covered, naming its price, and holds nothing', async () => {
    const org = await insertOrg(db.sql);
    await ledger.reserve(org, 60_000, { requestId: 'req' });
    const error = await expectApiError(
      ledger.reserveMany(
        org,
        [
          { holdId: 'res_none_a', milli: 30_000 },
          { holdId: 'res_none_b', milli: 10_001 },
        ],
        { requestId: 'req' },
      ),
      'balance_too_low',
    );
    expect(error.options.recovery).toEqual({ credits_required: 40.001, credits_available: 40 });
    expect(await ledger.getHold('res_none_a')).toBeNull();
    expect(await kinds(org)).toEqual(['grant', 'hold']);
    const capped = await insertOrg(db.sql, { spendCapMilli: 10_000 });
    await expectApiError(
      ledger.reserveMany(
        capped,
        [
          { holdId: 'res_cap_a', milli: 6_000 },
          { holdId: 'res_cap_b', milli: 4_001 },
        ],
        {
          requestId: 'req',
        },
      ),
      'max_credits_exceeded',
    );
    expect((await ledger.balance(capped)).held).toBe(0);
  });

  it('gives many holds one end in one statement, leaving settled ones alone', async () => {
    const org = await insertOrg(db.sql);
    const [a, b] = await ledger.reserveMany(
      org,
      [
        { holdId: 'res_end_a', milli: 1_000 },
        { holdId: 'res_end_b', milli: 1_000 },
      ],
      { requestId: 'req' },
    );
    await ledger.settle(b!.id, { requestId: 'req' });
    const end = new Date(clock().getTime() + HOUR_MS);
    await ledger.setHoldsExpiry([a!.id, b!.id], end);
    expect((await ledger.getHold(a!.id))?.expiresAt?.toISOString()).toBe(end.toISOString());
    expect((await ledger.getHold(b!.id))?.expiresAt).toBeNull();
  });
});

describe('settlement', () => {
  it('turns the hold into one charge, monthly credits first', async () => {
    const org = await insertOrg(db.sql);
    await ledger.topUp(org, 50_000);
    const hold = await ledger.reserve(org, 120_000, { requestId: 'req_r', idempotencyKey: 'k1' });
    const charge = await ledger.settle(hold.id, { requestId: 'req_s' });
    expect(charge).toMatchObject({
      orgId: org,
      holdId: hold.id,
      amount: 120_000,
      monthlyPart: 100_000,
      topupPart: 20_000,
      requestId: 'req_s',
      idempotencyKey: 'k1',
      replayed: false,
    });
    expect(await ledger.balance(org)).toMatchObject({
      monthlyRemaining: 0,
      topupRemaining: 30_000,
      held: 0,
      available: 30_000,
      spentThisMonth: 120_000,
    });
    // The available credits it answers are the balance it leaves.
    expect(charge.available).toBe(30_000);
    expect((await ledger.getHold(hold.id))?.status).toBe('settled');
  });

  it("settles a hold of the organisation it is told, and refuses another organisation's as unknown", async () => {
    const org = await insertOrg(db.sql);
    const other = await insertOrg(db.sql);
    const hold = await ledger.reserve(org, 3_000, { requestId: 'req' });
    await expectApiError(ledger.settle(hold.id, { requestId: 'req_s', orgId: other }), 'resource_missing');
    expect(await kinds(org)).toEqual(['grant', 'hold']);
    expect(await kinds(other)).toEqual([]);
    const charge = await ledger.settle(hold.id, { requestId: 'req_s', orgId: org });
    expect(charge).toMatchObject({ orgId: org, amount: 3_000, replayed: false, available: 97_000 });
    const again = await ledger.settle(hold.id, { requestId: 'req_s2', orgId: org });
    expect(again).toEqual({ ...charge, replayed: true });
    expect(await kinds(org)).toEqual(['grant', 'hold', 'charge']);
    expect((await ledger.balance(org)).available).toBe(97_000);
  });

  it('is idempotent: a second settle returns the same charge and moves nothing', async () => {
    const org = await insertOrg(db.sql);
    const hold = await ledger.reserve(org, 3_000, { requestId: 'req' });
    const first = await ledger.settle(hold.id, { requestId: 'req_1' });
    const again = await ledger.settle(hold.id, { requestId: 'req_2' });
    expect(again).toEqual({ ...first, replayed: true });
    expect(await kinds(org)).toEqual(['grant', 'hold', 'charge']);
    expect((await ledger.balance(org)).spentThisMonth).toBe(3_000);
  });

  it('refuses a released hold with reservation_expired and an unknown one with resource_missing', async () => {
    const org = await insertOrg(db.sql);
    const hold = await ledger.reserve(org, 3_000, { requestId: 'req' });
    await ledger.release(hold.id, 'job failed');
    await expectApiError(ledger.settle(hold.id, { requestId: 'req' }), 'reservation_expired');
    await expectApiError(ledger.settle('res_unknown', { requestId: 'req' }), 'resource_missing');
    expect((await ledger.balance(org)).available).toBe(100_000);
  });
});

describe('releases', () => {
  it('returns the credits exactly once', async () => {
    const org = await insertOrg(db.sql);
    await ledger.topUp(org, 10_000);
    const hold = await ledger.reserve(org, 105_000, { requestId: 'req' });
    const first = await ledger.release(hold.id, 'job failed', { requestId: 'req_rel' });
    expect(first.released).toBe(true);
    expect(first.hold).toMatchObject({ status: 'released', releaseReason: 'job failed' });
    const again = await ledger.release(hold.id, 'job failed');
    expect(again.released).toBe(false);
    expect(await ledger.balance(org)).toMatchObject({
      monthlyRemaining: 100_000,
      topupRemaining: 10_000,
      held: 0,
    });
    const entries = await ledger.entries(org);
    expect(entries.map((entry) => entry.kind)).toEqual(['grant', 'topup', 'hold', 'release']);
    expect(entries[3]).toMatchObject({
      monthlyHeldDelta: -100_000,
      topupHeldDelta: -5_000,
      requestId: 'req_rel',
    });
  });

  it('cannot release a settled hold', async () => {
    const org = await insertOrg(db.sql);
    const hold = await ledger.reserve(org, 7_000, { requestId: 'req' });
    await ledger.settle(hold.id, { requestId: 'req' });
    const outcome = await ledger.release(hold.id, 'late failure');
    expect(outcome).toMatchObject({ released: false, hold: { status: 'settled' } });
    expect(await ledger.balance(org)).toMatchObject({ available: 93_000, spentThisMonth: 7_000 });
  });
});

describe('one-step charges', () => {
  it('charges monthly credits first, with the same guards as a hold', async () => {
    const org = await insertOrg(db.sql);
    await ledger.topUp(org, 1_500);
    await ledger.reserve(org, 99_500, { requestId: 'req' });
    const charge = await ledger.chargeDirect(org, 1_000, {
      requestId: 'req_c',
      reference: 'expected-lineup',
    });
    expect(charge).toMatchObject({ holdId: null, amount: 1_000, monthlyPart: 500, topupPart: 500 });
    await expectApiError(ledger.chargeDirect(org, 1_001, { requestId: 'req' }), 'balance_too_low');
    expect(await ledger.balance(org)).toMatchObject({
      monthlyRemaining: 99_500,
      topupRemaining: 1_000,
      available: 1_000,
    });
  });

  it('charges once per idempotency key', async () => {
    const org = await insertOrg(db.sql);
    const first = await ledger.chargeDirect(org, 1_000, { requestId: 'req_1', idempotencyKey: 'lineup-1' });
    const again = await ledger.chargeDirect(org, 1_000, { requestId: 'req_2', idempotencyKey: 'lineup-1' });
    expect(again).toEqual({ ...first, replayed: true });
    expect((await ledger.balance(org)).spentThisMonth).toBe(1_000);
  });
});

describe('holds settled at once (a cache hit)', () => {
  const settleAtOnce = (org: string, milli: number, holdId: string) =>
    db.sql.begin((tx) => ledger.settleAtOnce(org, milli, { holdId, requestId: 'req_hit', tx }));

  it('writes the settled hold and its hold and charge rows, monthly credits first, as reserve and settle do', async () => {
    const org = await insertOrg(db.sql);
    await ledger.topUp(org, 1_500);
    await ledger.reserve(org, 99_500, { requestId: 'req' });
    const { charge, available } = await settleAtOnce(org, 1_000, 'res_at_once');
    expect(charge).toMatchObject({
      holdId: 'res_at_once',
      amount: 1_000,
      monthlyPart: 500,
      topupPart: 500,
      requestId: 'req_hit',
      replayed: false,
    });
    expect(available).toBe(1_000);
    expect(await ledger.getHold('res_at_once')).toMatchObject({
      status: 'settled',
      amount: 1_000,
      monthlyPart: 500,
      topupPart: 500,
    });
    const rows = (await ledger.entries(org)).filter((entry) => entry.holdId === 'res_at_once');
    expect(
      rows.map(({ kind, monthlyDelta, topupDelta, monthlyHeldDelta, topupHeldDelta }) => ({
        kind,
        monthlyDelta,
        topupDelta,
        monthlyHeldDelta,
        topupHeldDelta,
      })),
    ).toEqual([
      { kind: 'hold', monthlyDelta: 0, topupDelta: 0, monthlyHeldDelta: 500, topupHeldDelta: 500 },
      { kind: 'charge', monthlyDelta: -500, topupDelta: -500, monthlyHeldDelta: -500, topupHeldDelta: -500 },
    ]);
    expect(await ledger.balance(org)).toMatchObject({
      monthlyRemaining: 99_500,
      topupRemaining: 1_000,
      held: 99_500,
      available: 1_000,
      spentThisMonth: 1_000,
    });
  });

  it('refuses what the balance or the spend cap cannot cover, writing nothing', async () => {
    const org = await insertOrg(db.sql);
    await ledger.reserve(org, 95_000, { requestId: 'req' });
    await expectApiError(settleAtOnce(org, 5_001, 'res_too_much'), 'balance_too_low');
    const capped = await insertOrg(db.sql, { spendCapMilli: 10_000 });
    await ledger.topUp(capped, 1_000_000);
    await expectApiError(settleAtOnce(capped, 10_001, 'res_past_cap'), 'max_credits_exceeded');
    expect(await ledger.getHold('res_too_much')).toBeNull();
    expect(await ledger.getHold('res_past_cap')).toBeNull();
    expect(await kinds(org)).toEqual(['grant', 'hold']);
    expect(await kinds(capped)).toEqual(['grant', 'topup']);
  });
});

describe('monthly reset', () => {
  it('forfeits unused monthly credits and grants the new allowance at 00:00 UTC on the 1st', async () => {
    const org = await insertOrg(db.sql);
    await ledger.topUp(org, 5_000);
    await ledger.chargeDirect(org, 30_000, { requestId: 'req' });
    clock.set('2026-03-31T23:59:59.999Z');
    expect((await ledger.balance(org)).monthlyRemaining).toBe(70_000);
    clock.set('2026-04-01T00:00:00Z');
    const balance = await ledger.balance(org);
    expect(balance).toMatchObject({ monthlyRemaining: 100_000, topupRemaining: 5_000, spentThisMonth: 0 });
    expect(balance.periodStart.toISOString()).toBe('2026-04-01T00:00:00.000Z');
    const entries = await ledger.entries(org);
    expect(entries.slice(-2)).toMatchObject([
      { kind: 'expire', amount: 70_000, monthlyDelta: -70_000 },
      { kind: 'grant', amount: 100_000 },
    ]);
    await ledger.balance(org);
    expect(await ledger.entries(org)).toHaveLength(entries.length);
  });

  it('resets once after several idle months', async () => {
    const org = await insertOrg(db.sql, { plan: 'pro' });
    await ledger.openAccount(org);
    clock.set('2026-07-09T08:00:00Z');
    expect((await ledger.balance(org)).monthlyRemaining).toBe(2_500_000);
    expect(await kinds(org)).toEqual(['grant', 'expire', 'grant']);
  });

  it('keeps monthly credits that back a pending hold; settled after the reset, they are charged', async () => {
    const org = await insertOrg(db.sql);
    const hold = await ledger.reserve(org, 60_000, { requestId: 'req' });
    clock.set('2026-04-01T00:00:01Z');
    expect(await ledger.balance(org)).toMatchObject({
      monthlyRemaining: 160_000,
      held: 60_000,
      available: 100_000,
    });
    await ledger.settle(hold.id, { requestId: 'req' });
    expect(await ledger.balance(org)).toMatchObject({
      monthlyRemaining: 100_000,
      held: 0,
      spentThisMonth: 60_000,
    });
  });

  it('expires the monthly part of a hold from an ended month when it is released', async () => {
    const org = await insertOrg(db.sql);
    await ledger.topUp(org, 10_000);
    const hold = await ledger.reserve(org, 105_000, { requestId: 'req' });
    clock.set('2026-04-02T00:00:00Z');
    await ledger.release(hold.id, 'job failed');
    expect(await ledger.balance(org)).toMatchObject({
      monthlyRemaining: 100_000,
      topupRemaining: 10_000,
      held: 0,
    });
    expect((await ledger.entries(org)).slice(-2)).toMatchObject([
      { kind: 'release', amount: 105_000 },
      { kind: 'expire', amount: 100_000, holdId: hold.id },
    ]);
  });
});

describe('hold expiry', () => {
  it('sweeps holds past expires_at, and only those', async () => {
    const org = await insertOrg(db.sql);
    const soon = await ledger.reserve(org, 1_000, {
      requestId: 'req',
      expiresAt: new Date(clock().getTime() + HOUR_MS),
    });
    const later = await ledger.reserve(org, 2_000, {
      requestId: 'req',
      expiresAt: new Date(clock().getTime() + 3 * HOUR_MS),
    });
    const running = await ledger.reserve(org, 4_000, { requestId: 'req' });
    // Other tests of this file leave holds behind: look at this organisation's alone.
    const sweep = async () => (await ledger.expireHolds()).filter((hold) => hold.orgId === org);
    expect(await sweep()).toEqual([]);
    clock.advance(2 * HOUR_MS);
    const swept = await sweep();
    expect(swept.map((hold) => hold.id)).toEqual([soon.id]);
    expect(swept[0]).toMatchObject({ status: 'released', releaseReason: 'expired' });
    expect((await ledger.getHold(later.id))?.status).toBe('pending');
    expect((await ledger.getHold(running.id))?.status).toBe('pending');
    expect((await ledger.balance(org)).held).toBe(6_000);
  });

  it('settling a hold past its end releases it and answers reservation_expired', async () => {
    const org = await insertOrg(db.sql);
    const hold = await ledger.reserve(org, 1_000, { requestId: 'req' });
    await ledger.setHoldExpiry(hold.id, new Date(clock().getTime() + HOUR_MS));
    clock.advance(HOUR_MS);
    await expectApiError(ledger.settle(hold.id, { requestId: 'req' }), 'reservation_expired');
    expect(await ledger.getHold(hold.id)).toMatchObject({ status: 'released', releaseReason: 'expired' });
    expect((await ledger.balance(org)).available).toBe(100_000);
  });

  it('a later end set before the sweep keeps the hold', async () => {
    const org = await insertOrg(db.sql);
    const hold = await ledger.reserve(org, 1_000, { requestId: 'req', expiresAt: clock() });
    const extended = await ledger.setHoldExpiry(hold.id, new Date(clock().getTime() + HOUR_MS));
    expect(extended.expiresAt?.getTime()).toBe(clock().getTime() + HOUR_MS);
    expect((await ledger.expireHolds()).filter((swept) => swept.id === hold.id)).toEqual([]);
    await ledger.settle(hold.id, { requestId: 'req' });
    expect((await ledger.setHoldExpiry(hold.id, null)).status).toBe('settled');
  });
});

describe('the ledger table', () => {
  it('refuses UPDATE, DELETE and TRUNCATE', async () => {
    const org = await insertOrg(db.sql);
    await ledger.openAccount(org);
    await expect(db.sql`UPDATE credit_ledger SET amount = 1 WHERE org_id = ${org}`).rejects.toThrow(
      /append-only/,
    );
    await expect(db.sql`DELETE FROM credit_ledger WHERE org_id = ${org}`).rejects.toThrow(/append-only/);
    await expect(db.sql`TRUNCATE credit_ledger CASCADE`).rejects.toThrow(/append-only/);
  });

  it('refuses rows whose deltas do not match their kind', async () => {
    const org = await insertOrg(db.sql);
    await expect(db.sql`
      INSERT INTO credit_ledger (org_id, kind, amount, monthly_delta, period_start, created_at)
      VALUES (${org}, 'topup', 1000, 1000, now(), now())`).rejects.toThrow(/credit_ledger_kind_shape/);
  });

  it('reports an account that drifted from its ledger', async () => {
    const org = await insertOrg(db.sql);
    await ledger.openAccount(org);
    expect((await ledger.checkBalanced(org)).balanced).toBe(true);
    await db.sql`UPDATE credit_accounts SET topup_remaining = topup_remaining + 1 WHERE org_id = ${org}`;
    expect(await ledger.checkBalanced(org)).toMatchObject({
      balanced: false,
      account: { topupRemaining: 1 },
    });
    expect(await ledger.findUnbalancedAccounts()).toEqual([org]);
    await db.sql`UPDATE credit_accounts SET topup_remaining = topup_remaining - 1 WHERE org_id = ${org}`;
  });
});
