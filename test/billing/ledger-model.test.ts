// Property test: random sequences of top-ups, holds, settlements, releases, one-step charges, sweeps
// and passing time, run against the ledger and against a plain in-memory model of the rules of
// docs/decisions.md §2. After every step the balances, the outcome and the ledger's own sums must agree.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { periodStart } from '../../src/billing/billing-period.js';
import { makeLedger } from '../../src/billing/ledger.js';
import { ApiError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { HOUR_MS, insertOrg, manualClock } from './fixtures.js';

const PLUS_ALLOWANCE = 100_000;

type Step =
  | { op: 'topUp'; milli: number }
  | { op: 'reserve'; milli: number; expiresInHours: number | null }
  | { op: 'settle'; pick: number }
  | { op: 'release'; pick: number }
  | { op: 'chargeDirect'; milli: number }
  | { op: 'advance'; hours: number }
  | { op: 'nextMonth' }
  | { op: 'sweep' };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('topUp' as const), milli: fc.integer({ min: 1, max: 60_000 }) }),
  fc.record({
    op: fc.constant('reserve' as const),
    milli: fc.integer({ min: 1, max: 80_000 }),
    expiresInHours: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
  }),
  fc.record({ op: fc.constant('settle' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('release' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('chargeDirect' as const), milli: fc.integer({ min: 1, max: 40_000 }) }),
  fc.record({ op: fc.constant('advance' as const), hours: fc.integer({ min: 1, max: 72 }) }),
  fc.constant({ op: 'nextMonth' as const }),
  fc.constant({ op: 'sweep' as const }),
);

interface ModelHold {
  id: string;
  amount: number;
  monthlyPart: number;
  topupPart: number;
  period: number;
  status: 'pending' | 'settled' | 'released';
  expiresAt: number | null;
}

/** The rules of docs/decisions.md §2, written as directly as possible, with no database. */
class Model {
  monthly = PLUS_ALLOWANCE;
  topup = 0;
  spent = 0;
  holds: ModelHold[] = [];
  constructor(
    public period: number,
    private readonly cap: number,
  ) {}

  get monthlyHeld() {
    return this.pending().reduce((sum, hold) => sum + hold.monthlyPart, 0);
  }
  get held() {
    return this.pending().reduce((sum, hold) => sum + hold.amount, 0);
  }
  get available() {
    return this.monthly + this.topup - this.held;
  }
  pending() {
    return this.holds.filter((hold) => hold.status === 'pending');
  }

  startPeriodIfDue(now: number) {
    const period = periodStart(new Date(now)).getTime();
    if (period <= this.period) return;
    this.monthly = this.monthlyHeld + PLUS_ALLOWANCE;
    this.spent = 0;
    this.period = period;
  }

  /** The 402 a spend of `milli` gets, or null when it may go ahead. */
  refusal(milli: number): string | null {
    if (this.available < milli) return 'balance_too_low';
    if (this.spent + this.held + milli > this.cap) return 'max_credits_exceeded';
    return null;
  }

  split(milli: number) {
    const monthlyPart = Math.min(milli, this.monthly - this.monthlyHeld);
    return { monthlyPart, topupPart: milli - monthlyPart };
  }

  release(hold: ModelHold) {
    hold.status = 'released';
    if (hold.period < this.period) this.monthly -= hold.monthlyPart;
  }
}

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db.close();
});

function codeOf(error: unknown): string {
  if (error instanceof ApiError) return error.code;
  throw error;
}

it('agrees with an in-memory model over random sequences of credit operations', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.option(fc.integer({ min: 20_000, max: 400_000 }), { nil: null }),
      fc.array(stepArbitrary, { minLength: 1, maxLength: 30 }),
      async (spendCap, steps) => {
        const clock = manualClock('2026-01-27T09:00:00Z');
        const ledger = makeLedger({ sql: db.sql, clock });
        const org = await insertOrg(db.sql, { plan: 'plus', spendCapMilli: spendCap });
        await ledger.openAccount(org);
        const model = new Model(periodStart(clock()).getTime(), spendCap ?? 10 * PLUS_ALLOWANCE);

        for (const step of steps) {
          const now = clock().getTime();
          if (step.op !== 'advance' && step.op !== 'nextMonth') model.startPeriodIfDue(now);
          switch (step.op) {
            case 'topUp': {
              await ledger.topUp(org, step.milli);
              model.topup += step.milli;
              break;
            }
            case 'reserve': {
              const expiresAt = step.expiresInHours === null ? null : now + step.expiresInHours * HOUR_MS;
              const expected = model.refusal(step.milli);
              const outcome = await ledger
                .reserve(org, step.milli, {
                  requestId: 'req_model',
                  expiresAt: expiresAt === null ? null : new Date(expiresAt),
                })
                .then((hold) => hold, codeOf);
              if (expected) {
                expect(outcome).toBe(expected);
              } else {
                expect(typeof outcome).toBe('object');
                const hold = outcome as Exclude<typeof outcome, string>;
                const { monthlyPart, topupPart } = model.split(step.milli);
                expect([hold.monthlyPart, hold.topupPart]).toEqual([monthlyPart, topupPart]);
                model.holds.push({
                  id: hold.id,
                  amount: step.milli,
                  monthlyPart,
                  topupPart,
                  period: model.period,
                  status: 'pending',
                  expiresAt,
                });
              }
              break;
            }
            case 'settle': {
              const hold = model.holds[step.pick % Math.max(1, model.holds.length)];
              if (!hold) break;
              const outcome = await ledger
                .settle(hold.id, { requestId: 'req_model' })
                .then((charge) => charge, codeOf);
              if (hold.status === 'settled') {
                expect(outcome).toMatchObject({ replayed: true, amount: hold.amount });
              } else if (hold.status === 'released') {
                expect(outcome).toBe('reservation_expired');
              } else if (hold.expiresAt !== null && hold.expiresAt <= now) {
                expect(outcome).toBe('reservation_expired');
                model.release(hold);
              } else {
                expect(outcome).toMatchObject({ replayed: false, amount: hold.amount });
                hold.status = 'settled';
                model.monthly -= hold.monthlyPart;
                model.topup -= hold.topupPart;
                model.spent += hold.amount;
              }
              break;
            }
            case 'release': {
              const hold = model.holds[step.pick % Math.max(1, model.holds.length)];
              if (!hold) break;
              const outcome = await ledger.release(hold.id, 'model');
              expect(outcome.released).toBe(hold.status === 'pending');
              if (hold.status === 'pending') model.release(hold);
              break;
            }
            case 'chargeDirect': {
              const expected = model.refusal(step.milli);
              const outcome = await ledger
                .chargeDirect(org, step.milli, { requestId: 'req_model' })
                .then((charge) => charge, codeOf);
              if (expected) {
                expect(outcome).toBe(expected);
              } else {
                const { monthlyPart, topupPart } = model.split(step.milli);
                expect(outcome).toMatchObject({ monthlyPart, topupPart });
                model.monthly -= monthlyPart;
                model.topup -= topupPart;
                model.spent += step.milli;
              }
              break;
            }
            case 'advance':
              clock.advance(step.hours * HOUR_MS);
              break;
            case 'nextMonth': {
              const at = clock();
              clock.set(new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1, 0, 0, 0, 1)));
              break;
            }
            case 'sweep': {
              const swept = (await ledger.expireHolds()).filter((hold) => hold.orgId === org);
              const due = model.pending().filter((hold) => hold.expiresAt !== null && hold.expiresAt <= now);
              expect(swept.map((hold) => hold.id).sort()).toEqual(due.map((hold) => hold.id).sort());
              for (const hold of due) model.release(hold);
              break;
            }
          }

          // The balance read also starts a due month; so does the model.
          model.startPeriodIfDue(clock().getTime());
          const balance = await ledger.balance(org);
          expect({
            monthlyRemaining: balance.monthlyRemaining,
            topupRemaining: balance.topupRemaining,
            held: balance.held,
            available: balance.available,
            spentThisMonth: balance.spentThisMonth,
          }).toEqual({
            monthlyRemaining: model.monthly,
            topupRemaining: model.topup,
            held: model.held,
            available: model.available,
            spentThisMonth: model.spent,
          });
          expect(balance.available).toBeGreaterThanOrEqual(0);
          expect((await ledger.checkBalanced(org)).balanced).toBe(true);
        }
      },
    ),
    { numRuns: 100 },
  );
});
