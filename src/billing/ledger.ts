// The only code that moves credits (decisions 2). Every movement is one guarded UPDATE of the
// organisation's credit_accounts row plus its append-only credit_ledger rows, in one transaction, so
// that each account column always equals the sum of its ledger deltas. The monthly reset is lazy: the
// first operation of an organisation in a new UTC month applies it, under the same lock.
//
// Concurrency: every operation on an organisation first locks its account row (SELECT … FOR UPDATE), then
// any hold row, always in that order, so operations on one organisation run one at a time and never
// deadlock. The lock decides how a price is split between monthly and top-up credits; the UPDATE that
// moves the money still carries the guard (`WHERE available >= price …`) and refuses on its own.

import type { Plan } from '../accounts/orgs.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { monthlyAllowanceMilli, spendCapMilli } from '../limits/plans.js';
import { creditsNumber, formatCredits } from './amounts.js';
import { periodStart } from './billing-period.js';
import { inTransaction } from './transactions.js';

export type LedgerEntryKind = 'grant' | 'topup' | 'hold' | 'release' | 'charge' | 'expire';
export type HoldStatus = 'pending' | 'settled' | 'released';

export interface Balance {
  orgId: string;
  /** 00:00 UTC on the 1st of the current billing month. */
  periodStart: Date;
  /** Monthly credits left, including those held. */
  monthlyRemaining: number;
  /** Top-up credits left, including those held. */
  topupRemaining: number;
  held: number;
  /** What a new charge or hold can use: monthlyRemaining + topupRemaining - held. */
  available: number;
  /** Charges since periodStart. */
  spentThisMonth: number;
  spendCap: number;
}

export interface Hold {
  id: string;
  orgId: string;
  amount: number;
  monthlyPart: number;
  topupPart: number;
  status: HoldStatus;
  createdAt: Date;
  expiresAt: Date | null;
  settledAt: Date | null;
  releasedAt: Date | null;
  releaseReason: string | null;
  requestId: string;
  idempotencyKey: string | null;
}

export interface Charge {
  entryId: number;
  orgId: string;
  holdId: string | null;
  amount: number;
  monthlyPart: number;
  topupPart: number;
  chargedAt: Date;
  requestId: string | null;
  idempotencyKey: string | null;
  /** True when this call found the charge already made and moved no money. */
  replayed: boolean;
}

export interface LedgerEntry {
  id: number;
  orgId: string;
  kind: LedgerEntryKind;
  amount: number;
  monthlyDelta: number;
  topupDelta: number;
  monthlyHeldDelta: number;
  topupHeldDelta: number;
  periodStart: Date;
  holdId: string | null;
  requestId: string | null;
  idempotencyKey: string | null;
  reference: string | null;
  reason: string | null;
  createdAt: Date;
}

/** The account columns recomputed from the ledger alone. */
export interface LedgerSum {
  monthlyRemaining: number;
  topupRemaining: number;
  monthlyHeld: number;
  topupHeld: number;
  spentThisMonth: number;
}

export interface TransactionOption {
  /** Run inside the caller's transaction (e.g. the job insert that goes with a hold). */
  tx?: TransactionSql | undefined;
}

export interface ReserveOptions extends TransactionOption {
  /** Chosen by the caller to store it before the hold exists; a repeat with the same id is a replay. */
  holdId?: string | undefined;
  requestId: string;
  idempotencyKey?: string | null | undefined;
  /** When the hold ends undelivered; NULL while the job is running (see setHoldExpiry). */
  expiresAt?: Date | null | undefined;
}

export interface SettleOptions extends TransactionOption {
  requestId: string;
  idempotencyKey?: string | null | undefined;
}

export interface ChargeDirectOptions extends TransactionOption {
  requestId: string;
  /** A repeat with the same key returns the first charge and moves no money. */
  idempotencyKey?: string | null | undefined;
  reference?: string | null | undefined;
}

export interface TopUpOptions extends TransactionOption {
  requestId?: string | null | undefined;
  /** E.g. the operator's invoice number. */
  reference?: string | null | undefined;
  /** A repeat with the same key returns the first top-up and moves no money. */
  idempotencyKey?: string | null | undefined;
}

export interface ReleaseOptions extends TransactionOption {
  requestId?: string | null | undefined;
}

export interface ReleaseOutcome {
  hold: Hold;
  /** True when this call returned the credits; false when the hold was already settled or released. */
  released: boolean;
}

export interface Ledger {
  openAccount(orgId: string, options?: TransactionOption): Promise<Balance>;
  topUp(orgId: string, milli: number, options?: TopUpOptions): Promise<LedgerEntry>;
  reserve(orgId: string, milli: number, options: ReserveOptions): Promise<Hold>;
  settle(holdId: string, options: SettleOptions): Promise<Charge>;
  release(holdId: string, reason: string, options?: ReleaseOptions): Promise<ReleaseOutcome>;
  chargeDirect(orgId: string, milli: number, options: ChargeDirectOptions): Promise<Charge>;
  balance(orgId: string, options?: TransactionOption): Promise<Balance>;
  getHold(holdId: string, options?: TransactionOption): Promise<Hold | null>;
  setHoldExpiry(holdId: string, expiresAt: Date | null, options?: TransactionOption): Promise<Hold>;
  expireHolds(now?: Date, limit?: number): Promise<Hold[]>;
  entries(orgId: string): Promise<LedgerEntry[]>;
  ledgerSum(orgId: string): Promise<LedgerSum>;
  checkBalanced(orgId: string): Promise<{ balanced: boolean; account: LedgerSum; ledger: LedgerSum }>;
  /** Organisations whose account differs from the sum of their ledger (empty when all is well). */
  findUnbalancedAccounts(): Promise<string[]>;
}

export interface LedgerDeps {
  sql: Sql;
  clock?: () => Date;
}

interface AccountRow {
  org_id: string;
  period_start: Date;
  monthly_remaining: number;
  topup_remaining: number;
  monthly_held: number;
  topup_held: number;
  spent_this_month: number;
  plan: Plan;
  plan_active: boolean;
  spend_cap_milli: number | null;
}

interface HoldRow {
  id: string;
  org_id: string;
  amount: number;
  monthly_part: number;
  topup_part: number;
  period_start: Date;
  status: HoldStatus;
  created_at: Date;
  expires_at: Date | null;
  settled_at: Date | null;
  released_at: Date | null;
  release_reason: string | null;
  request_id: string;
  idempotency_key: string | null;
}

interface EntryRow {
  id: number;
  org_id: string;
  kind: LedgerEntryKind;
  amount: number;
  monthly_delta: number;
  topup_delta: number;
  monthly_held_delta: number;
  topup_held_delta: number;
  period_start: Date;
  hold_id: string | null;
  request_id: string | null;
  idempotency_key: string | null;
  reference: string | null;
  reason: string | null;
  created_at: Date;
}

type NewEntry = Pick<EntryRow, 'org_id' | 'kind' | 'amount' | 'period_start' | 'created_at'> &
  Partial<Omit<EntryRow, 'id' | 'org_id' | 'kind' | 'amount' | 'period_start' | 'created_at'>>;

/** Why a hold was released by the sweeper (decisions 2: not delivered within HOLD_TTL). */
export const EXPIRED_RELEASE_REASON = 'expired';

export function makeLedger({ sql, clock = () => new Date() }: LedgerDeps): Ledger {
  const moneyUnknown = 'settlement_unknown' as const;
  const admissionUnknown = 'dependency_unavailable' as const;

  async function openAccount(orgId: string, options: TransactionOption = {}): Promise<Balance> {
    const now = clock();
    const account = await inTransaction(sql, { tx: options.tx, onConnectionLost: admissionUnknown }, (tx) =>
      lockAccount(tx, orgId, now),
    );
    return balanceOf(account);
  }

  async function topUp(orgId: string, milli: number, options: TopUpOptions = {}): Promise<LedgerEntry> {
    assertPositiveMilli(milli);
    const now = clock();
    return inTransaction(sql, { tx: options.tx, onConnectionLost: moneyUnknown }, async (tx) => {
      const account = await lockAccount(tx, orgId, now);
      if (options.idempotencyKey) {
        const [earlier] = await tx<EntryRow[]>`
          SELECT * FROM credit_ledger
          WHERE org_id = ${orgId} AND kind = 'topup' AND idempotency_key = ${options.idempotencyKey}`;
        if (earlier) return entryFromRow(earlier);
      }
      await guardedUpdate(
        tx<AccountRow[]>`
          UPDATE credit_accounts SET topup_remaining = topup_remaining + ${milli}, updated_at = ${now}
          WHERE org_id = ${orgId}
          RETURNING org_id`,
        'top-up',
      );
      return entryFromRow(
        await appendEntry(tx, {
          org_id: orgId,
          kind: 'topup',
          amount: milli,
          topup_delta: milli,
          period_start: account.period_start,
          request_id: options.requestId ?? null,
          idempotency_key: options.idempotencyKey ?? null,
          reference: options.reference ?? null,
          created_at: now,
        }),
      );
    });
  }

  async function reserve(orgId: string, milli: number, options: ReserveOptions): Promise<Hold> {
    assertPositiveMilli(milli);
    const now = clock();
    const holdId = options.holdId ?? newId('res');
    return inTransaction(sql, { tx: options.tx, onConnectionLost: admissionUnknown }, async (tx) => {
      const account = await lockAccount(tx, orgId, now);
      // Only a caller-chosen id can exist already.
      const [existing] = options.holdId
        ? await tx<HoldRow[]>`SELECT * FROM credit_holds WHERE id = ${holdId}`
        : [];
      if (existing) {
        if (existing.org_id !== orgId || existing.amount !== milli) {
          throw new Error(`hold ${holdId} already exists with another organisation or amount`);
        }
        return holdFromRow(existing);
      }
      const cap = spendCapOf(account);
      refuseUnaffordable(account, milli, cap);
      const { monthlyPart, topupPart } = splitPrice(account, milli);
      await guardedUpdate(
        tx<AccountRow[]>`
          UPDATE credit_accounts
          SET monthly_held = monthly_held + ${monthlyPart}, topup_held = topup_held + ${topupPart},
              updated_at = ${now}
          WHERE org_id = ${orgId}
            AND monthly_remaining - monthly_held >= ${monthlyPart}
            AND topup_remaining - topup_held >= ${topupPart}
            AND spent_this_month + monthly_held + topup_held + ${milli} <= ${cap}
          RETURNING org_id`,
        'reservation',
      );
      const [hold] = await tx<HoldRow[]>`
        INSERT INTO credit_holds (id, org_id, amount, monthly_part, topup_part, period_start, status,
                                  created_at, expires_at, request_id, idempotency_key)
        VALUES (${holdId}, ${orgId}, ${milli}, ${monthlyPart}, ${topupPart}, ${account.period_start},
                'pending', ${now}, ${options.expiresAt ?? null}, ${options.requestId},
                ${options.idempotencyKey ?? null})
        RETURNING *`;
      await appendEntry(tx, {
        org_id: orgId,
        kind: 'hold',
        amount: milli,
        monthly_held_delta: monthlyPart,
        topup_held_delta: topupPart,
        period_start: account.period_start,
        hold_id: holdId,
        request_id: options.requestId,
        idempotency_key: options.idempotencyKey ?? null,
        created_at: now,
      });
      return holdFromRow(hold!);
    });
  }

  async function settle(holdId: string, options: SettleOptions): Promise<Charge> {
    const now = clock();
    const outcome = await inTransaction(
      sql,
      { tx: options.tx, onConnectionLost: moneyUnknown },
      async (tx): Promise<{ charge: Charge } | { expired: Hold }> => {
        const orgId = await orgOfHold(tx, holdId);
        const account = await lockAccount(tx, orgId, now);
        const [hold] = await tx<HoldRow[]>`SELECT * FROM credit_holds WHERE id = ${holdId} FOR NO KEY UPDATE`;
        if (!hold) throw holdMissing(holdId);
        if (hold.status === 'settled') {
          const [charge] = await tx<EntryRow[]>`
            SELECT * FROM credit_ledger WHERE hold_id = ${holdId} AND kind = 'charge'`;
          return { charge: chargeFromRow(charge!, true) };
        }
        if (hold.status === 'released') return { expired: holdFromRow(hold) };
        if (hold.expires_at !== null && hold.expires_at.getTime() <= now.getTime()) {
          // Past its end but not yet swept: end it now, so the answer and the money agree.
          return { expired: await releaseLocked(tx, account, hold, EXPIRED_RELEASE_REASON, null, now) };
        }
        const amount = hold.amount;
        await guardedUpdate(
          tx<AccountRow[]>`
            UPDATE credit_accounts
            SET monthly_remaining = monthly_remaining - ${hold.monthly_part},
                topup_remaining = topup_remaining - ${hold.topup_part},
                monthly_held = monthly_held - ${hold.monthly_part},
                topup_held = topup_held - ${hold.topup_part},
                spent_this_month = spent_this_month + ${amount},
                updated_at = ${now}
            WHERE org_id = ${orgId} AND monthly_held >= ${hold.monthly_part} AND topup_held >= ${hold.topup_part}
            RETURNING org_id`,
          'settlement',
        );
        await guardedUpdate(
          tx<HoldRow[]>`
            UPDATE credit_holds SET status = 'settled', settled_at = ${now}
            WHERE id = ${holdId} AND status = 'pending'
            RETURNING id`,
          'settlement of the hold',
        );
        const entry = await appendEntry(tx, {
          org_id: orgId,
          kind: 'charge',
          amount,
          monthly_delta: -hold.monthly_part,
          topup_delta: -hold.topup_part,
          monthly_held_delta: -hold.monthly_part,
          topup_held_delta: -hold.topup_part,
          period_start: account.period_start,
          hold_id: holdId,
          request_id: options.requestId,
          idempotency_key: options.idempotencyKey ?? hold.idempotency_key,
          created_at: now,
        });
        return { charge: chargeFromRow(entry, false) };
      },
    );
    if ('expired' in outcome) {
      throw new ApiError('reservation_expired', {
        message: `The credit hold ${holdId} ended without delivery.`,
        recovery: { reservation_id: holdId, released_at: outcome.expired.releasedAt?.toISOString() ?? null },
      });
    }
    return outcome.charge;
  }

  async function release(
    holdId: string,
    reason: string,
    options: ReleaseOptions = {},
  ): Promise<ReleaseOutcome> {
    const now = clock();
    return inTransaction(sql, { tx: options.tx, onConnectionLost: admissionUnknown }, async (tx) => {
      const orgId = await orgOfHold(tx, holdId);
      const account = await lockAccount(tx, orgId, now);
      const [hold] = await tx<HoldRow[]>`SELECT * FROM credit_holds WHERE id = ${holdId} FOR NO KEY UPDATE`;
      if (!hold) throw holdMissing(holdId);
      if (hold.status !== 'pending') return { hold: holdFromRow(hold), released: false };
      const released = await releaseLocked(tx, account, hold, reason, options.requestId ?? null, now);
      return { hold: released, released: true };
    });
  }

  async function chargeDirect(orgId: string, milli: number, options: ChargeDirectOptions): Promise<Charge> {
    assertPositiveMilli(milli);
    const now = clock();
    return inTransaction(sql, { tx: options.tx, onConnectionLost: moneyUnknown }, async (tx) => {
      const account = await lockAccount(tx, orgId, now);
      if (options.idempotencyKey) {
        const [earlier] = await tx<EntryRow[]>`
          SELECT * FROM credit_ledger
          WHERE org_id = ${orgId} AND kind = 'charge' AND hold_id IS NULL
            AND idempotency_key = ${options.idempotencyKey}`;
        if (earlier) return chargeFromRow(earlier, true);
      }
      const cap = spendCapOf(account);
      refuseUnaffordable(account, milli, cap);
      const { monthlyPart, topupPart } = splitPrice(account, milli);
      await guardedUpdate(
        tx<AccountRow[]>`
          UPDATE credit_accounts
          SET monthly_remaining = monthly_remaining - ${monthlyPart},
              topup_remaining = topup_remaining - ${topupPart},
              spent_this_month = spent_this_month + ${milli},
              updated_at = ${now}
          WHERE org_id = ${orgId}
            AND monthly_remaining - monthly_held >= ${monthlyPart}
            AND topup_remaining - topup_held >= ${topupPart}
            AND spent_this_month + monthly_held + topup_held + ${milli} <= ${cap}
          RETURNING org_id`,
        'charge',
      );
      const entry = await appendEntry(tx, {
        org_id: orgId,
        kind: 'charge',
        amount: milli,
        monthly_delta: -monthlyPart,
        topup_delta: -topupPart,
        period_start: account.period_start,
        request_id: options.requestId,
        idempotency_key: options.idempotencyKey ?? null,
        reference: options.reference ?? null,
        created_at: now,
      });
      return chargeFromRow(entry, false);
    });
  }

  async function balance(orgId: string, options: TransactionOption = {}): Promise<Balance> {
    const now = clock();
    const db = options.tx ?? sql;
    const [account] = await db<AccountRow[]>`
      SELECT a.*, o.plan, o.plan_active, o.spend_cap_milli
      FROM credit_accounts a JOIN orgs o ON o.id = a.org_id
      WHERE a.org_id = ${orgId}`;
    // A read needs the lock only when it must open the account or start its new month.
    if (account && account.period_start.getTime() >= periodStart(now).getTime()) return balanceOf(account);
    return openAccount(orgId, options);
  }

  async function getHold(holdId: string, options: TransactionOption = {}): Promise<Hold | null> {
    const db = options.tx ?? sql;
    const [row] = await db<HoldRow[]>`SELECT * FROM credit_holds WHERE id = ${holdId}`;
    return row ? holdFromRow(row) : null;
  }

  async function setHoldExpiry(
    holdId: string,
    expiresAt: Date | null,
    options: TransactionOption = {},
  ): Promise<Hold> {
    const db = options.tx ?? sql;
    // Only the hold row changes (no money moves); a sweeper holding it waits and then re-reads expires_at.
    const [updated] = await db<HoldRow[]>`
      UPDATE credit_holds SET expires_at = ${expiresAt}
      WHERE id = ${holdId} AND status = 'pending'
      RETURNING *`;
    if (updated) return holdFromRow(updated);
    const current = await getHold(holdId, options);
    if (!current) throw holdMissing(holdId);
    return current;
  }

  async function expireHolds(now: Date = clock(), limit = 500): Promise<Hold[]> {
    const due = await sql<{ id: string }[]>`
      SELECT id FROM credit_holds
      WHERE status = 'pending' AND expires_at <= ${now}
      ORDER BY expires_at
      LIMIT ${limit}`;
    const released: Hold[] = [];
    for (const { id } of due) {
      const hold = await inTransaction(sql, { onConnectionLost: admissionUnknown }, async (tx) => {
        const orgId = await orgOfHold(tx, id);
        const account = await lockAccount(tx, orgId, now);
        const [row] = await tx<HoldRow[]>`SELECT * FROM credit_holds WHERE id = ${id} FOR NO KEY UPDATE`;
        // Settled, released or given a later end since the scan: not ours to end.
        if (
          row?.status !== 'pending' ||
          row.expires_at === null ||
          row.expires_at.getTime() > now.getTime()
        ) {
          return null;
        }
        return releaseLocked(tx, account, row, EXPIRED_RELEASE_REASON, null, now);
      });
      if (hold) released.push(hold);
    }
    return released;
  }

  async function entries(orgId: string): Promise<LedgerEntry[]> {
    const rows = await sql<EntryRow[]>`SELECT * FROM credit_ledger WHERE org_id = ${orgId} ORDER BY id`;
    return rows.map(entryFromRow);
  }

  async function ledgerSum(orgId: string): Promise<LedgerSum> {
    const [row] = await sql<SumRow[]>`
      SELECT ${sumColumns(sql)}
      FROM credit_ledger l
      LEFT JOIN credit_accounts a ON a.org_id = l.org_id
      WHERE l.org_id = ${orgId}`;
    return sumFromRow(row!);
  }

  async function checkBalanced(orgId: string) {
    const [[accountRow], ledger] = await Promise.all([
      sql<AccountRow[]>`
        SELECT a.*, o.plan, o.plan_active, o.spend_cap_milli
        FROM credit_accounts a JOIN orgs o ON o.id = a.org_id WHERE a.org_id = ${orgId}`,
      ledgerSum(orgId),
    ]);
    const account: LedgerSum = accountRow
      ? {
          monthlyRemaining: accountRow.monthly_remaining,
          topupRemaining: accountRow.topup_remaining,
          monthlyHeld: accountRow.monthly_held,
          topupHeld: accountRow.topup_held,
          spentThisMonth: accountRow.spent_this_month,
        }
      : { monthlyRemaining: 0, topupRemaining: 0, monthlyHeld: 0, topupHeld: 0, spentThisMonth: 0 };
    const balanced = (Object.keys(account) as (keyof LedgerSum)[]).every(
      (key) => account[key] === ledger[key],
    );
    return { balanced, account, ledger };
  }

  async function findUnbalancedAccounts(): Promise<string[]> {
    const rows = await sql<{ org_id: string }[]>`
      SELECT a.org_id
      FROM credit_accounts a
      LEFT JOIN (
        SELECT l.org_id, ${sumColumns(sql)}
        FROM credit_ledger l JOIN credit_accounts a ON a.org_id = l.org_id
        GROUP BY l.org_id
      ) s ON s.org_id = a.org_id
      WHERE (a.monthly_remaining, a.topup_remaining, a.monthly_held, a.topup_held, a.spent_this_month)
        IS DISTINCT FROM (COALESCE(s.monthly_remaining, 0), COALESCE(s.topup_remaining, 0),
                          COALESCE(s.monthly_held, 0), COALESCE(s.topup_held, 0),
                          COALESCE(s.spent_this_month, 0))
      ORDER BY a.org_id`;
    return rows.map((row) => row.org_id);
  }

  // Locks the account (opening it on first use) and applies a pending monthly reset. Every money
  // movement starts here, so the reset happens exactly once and before anything is spent in the month.
  async function lockAccount(tx: TransactionSql, orgId: string, now: Date): Promise<AccountRow> {
    let account = await selectAccountForUpdate(tx, orgId);
    if (!account) {
      await createAccount(tx, orgId, now);
      account = await selectAccountForUpdate(tx, orgId);
      if (!account) throw new ApiError('resource_missing', { message: `No organisation ${orgId}.` });
    }
    const period = periodStart(now);
    if (account.period_start.getTime() < period.getTime()) return startPeriod(tx, account, period, now);
    return account;
  }

  return {
    openAccount,
    topUp,
    reserve,
    settle,
    release,
    chargeDirect,
    balance,
    getHold,
    setHoldExpiry,
    expireHolds,
    entries,
    ledgerSum,
    checkBalanced,
    findUnbalancedAccounts,
  };
}

async function selectAccountForUpdate(tx: TransactionSql, orgId: string): Promise<AccountRow | undefined> {
  const [row] = await tx<AccountRow[]>`
    SELECT a.*, o.plan, o.plan_active, o.spend_cap_milli
    FROM credit_accounts a JOIN orgs o ON o.id = a.org_id
    WHERE a.org_id = ${orgId}
    FOR UPDATE OF a`;
  return row;
}

async function createAccount(tx: TransactionSql, orgId: string, now: Date): Promise<void> {
  const [org] = await tx<{ plan: Plan; plan_active: boolean }[]>`
    SELECT plan, plan_active FROM orgs WHERE id = ${orgId}`;
  if (!org) return;
  const period = periodStart(now);
  const allowance = monthlyAllowanceMilli(org.plan, org.plan_active);
  // Two first uses at once: the loser waits on the primary key, then does nothing (no second grant).
  const inserted = await tx`
    INSERT INTO credit_accounts (org_id, period_start, monthly_remaining, created_at, updated_at)
    VALUES (${orgId}, ${period}, ${allowance}, ${now}, ${now})
    ON CONFLICT (org_id) DO NOTHING
    RETURNING org_id`;
  if (inserted.length === 1 && allowance > 0) {
    await appendEntry(tx, {
      org_id: orgId,
      kind: 'grant',
      amount: allowance,
      monthly_delta: allowance,
      period_start: period,
      reason: `${org.plan} monthly allowance`,
      created_at: now,
    });
  }
}

// The monthly reset (decisions 2): unused monthly credits are forfeited (an `expire` row) and the plan's
// allowance is granted. Monthly credits that back pending holds stay with those holds. The caller holds
// the account lock, and the UPDATE's own condition makes a second reset of the same month a no-op.
async function startPeriod(
  tx: TransactionSql,
  account: AccountRow,
  period: Date,
  now: Date,
): Promise<AccountRow> {
  const forfeited = account.monthly_remaining - account.monthly_held;
  const allowance = monthlyAllowanceMilli(account.plan, account.plan_active);
  const [updated] = await tx<AccountRow[]>`
    UPDATE credit_accounts
    SET monthly_remaining = monthly_held + ${allowance}, spent_this_month = 0,
        period_start = ${period}, updated_at = ${now}
    WHERE org_id = ${account.org_id} AND period_start < ${period}
    RETURNING *`;
  if (!updated) return account;
  if (forfeited > 0) {
    await appendEntry(tx, {
      org_id: account.org_id,
      kind: 'expire',
      amount: forfeited,
      monthly_delta: -forfeited,
      period_start: account.period_start,
      reason: 'unused monthly credits do not roll over',
      created_at: now,
    });
  }
  if (allowance > 0) {
    await appendEntry(tx, {
      org_id: account.org_id,
      kind: 'grant',
      amount: allowance,
      monthly_delta: allowance,
      period_start: period,
      reason: `${account.plan} monthly allowance`,
      created_at: now,
    });
  }
  return { ...account, ...updated };
}

// Returns a pending hold's credits; the caller holds the account and hold locks. Monthly credits of a
// month that has since ended go back only to expire at once: they would have been forfeited at the reset.
async function releaseLocked(
  tx: TransactionSql,
  account: AccountRow,
  hold: HoldRow,
  reason: string,
  requestId: string | null,
  now: Date,
): Promise<Hold> {
  const lapsedMonthly = hold.period_start.getTime() < account.period_start.getTime() ? hold.monthly_part : 0;
  await guardedUpdate(
    tx<AccountRow[]>`
      UPDATE credit_accounts
      SET monthly_held = monthly_held - ${hold.monthly_part}, topup_held = topup_held - ${hold.topup_part},
          monthly_remaining = monthly_remaining - ${lapsedMonthly}, updated_at = ${now}
      WHERE org_id = ${hold.org_id} AND monthly_held >= ${hold.monthly_part} AND topup_held >= ${hold.topup_part}
      RETURNING org_id`,
    'release',
  );
  const [released] = await tx<HoldRow[]>`
    UPDATE credit_holds SET status = 'released', released_at = ${now}, release_reason = ${reason}
    WHERE id = ${hold.id} AND status = 'pending'
    RETURNING *`;
  if (!released) throw new Error(`hold ${hold.id} changed under its lock`);
  await appendEntry(tx, {
    org_id: hold.org_id,
    kind: 'release',
    amount: hold.amount,
    monthly_held_delta: -hold.monthly_part,
    topup_held_delta: -hold.topup_part,
    period_start: account.period_start,
    hold_id: hold.id,
    request_id: requestId,
    reason,
    created_at: now,
  });
  if (lapsedMonthly > 0) {
    await appendEntry(tx, {
      org_id: hold.org_id,
      kind: 'expire',
      amount: lapsedMonthly,
      monthly_delta: -lapsedMonthly,
      period_start: account.period_start,
      hold_id: hold.id,
      reason: 'released monthly credits of an ended month',
      created_at: now,
    });
  }
  return holdFromRow(released);
}

async function orgOfHold(tx: TransactionSql, holdId: string): Promise<string> {
  // org_id never changes, so reading it before taking the account lock is safe.
  const [row] = await tx<{ org_id: string }[]>`SELECT org_id FROM credit_holds WHERE id = ${holdId}`;
  if (!row) throw holdMissing(holdId);
  return row.org_id;
}

function holdMissing(holdId: string): ApiError {
  return new ApiError('resource_missing', { message: `No reservation ${holdId}.`, param: 'reservation_id' });
}

async function appendEntry(tx: TransactionSql, entry: NewEntry): Promise<EntryRow> {
  const [row] = await tx<EntryRow[]>`
    INSERT INTO credit_ledger (org_id, kind, amount, monthly_delta, topup_delta, monthly_held_delta,
                               topup_held_delta, period_start, hold_id, request_id, idempotency_key,
                               reference, reason, created_at)
    VALUES (${entry.org_id}, ${entry.kind}, ${entry.amount}, ${entry.monthly_delta ?? 0},
            ${entry.topup_delta ?? 0}, ${entry.monthly_held_delta ?? 0}, ${entry.topup_held_delta ?? 0},
            ${entry.period_start}, ${entry.hold_id ?? null}, ${entry.request_id ?? null},
            ${entry.idempotency_key ?? null}, ${entry.reference ?? null}, ${entry.reason ?? null},
            ${entry.created_at})
    RETURNING *`;
  return row!;
}

/** Runs a guarded UPDATE that the account lock already proved must match; no row means a broken invariant. */
async function guardedUpdate(statement: Promise<readonly unknown[]>, what: string): Promise<void> {
  const rows = await statement;
  if (rows.length !== 1) throw new Error(`credit ${what} refused by its guard under the account lock`);
}

function spendCapOf(account: AccountRow): number {
  return spendCapMilli(account.plan, account.spend_cap_milli);
}

function availableOf(account: AccountRow): number {
  return account.monthly_remaining + account.topup_remaining - account.monthly_held - account.topup_held;
}

/** 402s in the order a client can act on: first whether the credits exist, then the monthly cap. */
function refuseUnaffordable(account: AccountRow, milli: number, cap: number): void {
  const available = availableOf(account);
  if (available < milli) {
    throw new ApiError('balance_too_low', {
      message: `Available credits (${formatCredits(available)}) cannot cover ${formatCredits(milli)} credits.`,
      recovery: { credits_required: creditsNumber(milli), credits_available: creditsNumber(available) },
    });
  }
  const spend = account.spent_this_month + account.monthly_held + account.topup_held;
  if (spend + milli > cap) {
    throw new ApiError('max_credits_exceeded', {
      message: `This charge would take this month's spend past the spend cap of ${formatCredits(cap)} credits.`,
      recovery: {
        spend_cap_credits: creditsNumber(cap),
        month_spend_credits: creditsNumber(spend),
        credits_required: creditsNumber(milli),
      },
    });
  }
}

/** Monthly credits are spent before top-up credits (decisions 2). */
function splitPrice(account: AccountRow, milli: number): { monthlyPart: number; topupPart: number } {
  const monthlyFree = account.monthly_remaining - account.monthly_held;
  const monthlyPart = Math.min(milli, monthlyFree);
  return { monthlyPart, topupPart: milli - monthlyPart };
}

function assertPositiveMilli(milli: number): void {
  if (!Number.isSafeInteger(milli) || milli <= 0) {
    throw new RangeError(`a credit movement must be a positive integer of milli-credits, got ${milli}`);
  }
}

function balanceOf(account: AccountRow): Balance {
  const held = account.monthly_held + account.topup_held;
  return {
    orgId: account.org_id,
    periodStart: account.period_start,
    monthlyRemaining: account.monthly_remaining,
    topupRemaining: account.topup_remaining,
    held,
    available: account.monthly_remaining + account.topup_remaining - held,
    spentThisMonth: account.spent_this_month,
    spendCap: spendCapOf(account),
  };
}

interface SumRow {
  monthly_remaining: number;
  topup_remaining: number;
  monthly_held: number;
  topup_held: number;
  spent_this_month: number;
}

// Sums over `credit_ledger l` joined to its `credit_accounts a` (for the current period).
function sumColumns(sql: Sql) {
  return sql`
    COALESCE(SUM(l.monthly_delta), 0)::bigint AS monthly_remaining,
    COALESCE(SUM(l.topup_delta), 0)::bigint AS topup_remaining,
    COALESCE(SUM(l.monthly_held_delta), 0)::bigint AS monthly_held,
    COALESCE(SUM(l.topup_held_delta), 0)::bigint AS topup_held,
    COALESCE(SUM(l.amount) FILTER (WHERE l.kind = 'charge' AND l.period_start = a.period_start), 0)::bigint
      AS spent_this_month`;
}

function sumFromRow(row: SumRow): LedgerSum {
  return {
    monthlyRemaining: row.monthly_remaining,
    topupRemaining: row.topup_remaining,
    monthlyHeld: row.monthly_held,
    topupHeld: row.topup_held,
    spentThisMonth: row.spent_this_month,
  };
}

function holdFromRow(row: HoldRow): Hold {
  return {
    id: row.id,
    orgId: row.org_id,
    amount: row.amount,
    monthlyPart: row.monthly_part,
    topupPart: row.topup_part,
    status: row.status,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    settledAt: row.settled_at,
    releasedAt: row.released_at,
    releaseReason: row.release_reason,
    requestId: row.request_id,
    idempotencyKey: row.idempotency_key,
  };
}

function entryFromRow(row: EntryRow): LedgerEntry {
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    amount: row.amount,
    monthlyDelta: row.monthly_delta,
    topupDelta: row.topup_delta,
    monthlyHeldDelta: row.monthly_held_delta,
    topupHeldDelta: row.topup_held_delta,
    periodStart: row.period_start,
    holdId: row.hold_id,
    requestId: row.request_id,
    idempotencyKey: row.idempotency_key,
    reference: row.reference,
    reason: row.reason,
    createdAt: row.created_at,
  };
}

function chargeFromRow(row: EntryRow, replayed: boolean): Charge {
  return {
    entryId: row.id,
    orgId: row.org_id,
    holdId: row.hold_id,
    amount: row.amount,
    monthlyPart: Math.abs(row.monthly_delta),
    topupPart: Math.abs(row.topup_delta),
    chargedAt: row.created_at,
    requestId: row.request_id,
    idempotencyKey: row.idempotency_key,
    replayed,
  };
}
