// The credit account of an organisation: the lock every money movement starts with, the lazy monthly
// reset, and the guards and arithmetic the movements share. Only src/billing touches the credit_* tables.
import type { Plan } from '../accounts/orgs.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { ApiError } from '../errors.js';
import { monthlyAllowanceMilli, spendCapMilli } from '../limits/plans.js';
import { creditsNumber, formatCredits } from './amounts.js';
import { periodStart } from './billing-period.js';
import type { Balance, BalanceLowered, LedgerEntry, LedgerSum } from './types.js';

/** A credit_accounts row with the plan terms of its organisation (read in the same statement). */
export interface AccountRow extends LedgerSum {
  orgId: string;
  periodStart: Date;
  plan: Plan;
  planActive: boolean;
  spendCapMilli: number | null;
}

export type NewEntry = Pick<LedgerEntry, 'orgId' | 'kind' | 'amount' | 'periodStart' | 'createdAt'> &
  Partial<Omit<LedgerEntry, 'id' | 'orgId' | 'kind' | 'amount' | 'periodStart' | 'createdAt'>>;

// The organisation's plan terms come with the account row: the allowance and the spend cap depend on them.
function accountColumns(db: Sql | TransactionSql) {
  return db`a.*, o.plan, o.plan_active, o.spend_cap_milli`;
}

/** The account row without a lock (reads); undefined before the account is opened. */
export async function readAccount(db: Sql | TransactionSql, orgId: string): Promise<AccountRow | undefined> {
  const [row] = await db<AccountRow[]>`
    SELECT ${accountColumns(db)}
    FROM credit_accounts a JOIN orgs o ON o.id = a.org_id
    WHERE a.org_id = ${orgId}`;
  return row;
}

// Locks the account (opening it on first use) and applies a pending monthly reset. Every money
// movement starts here, so the reset happens exactly once and before anything is spent in the month.
export async function lockAccount(tx: TransactionSql, orgId: string, now: Date): Promise<AccountRow> {
  let account = await selectAccountForUpdate(tx, orgId);
  if (!account) {
    await createAccount(tx, orgId, now);
    account = await selectAccountForUpdate(tx, orgId);
    if (!account) throw new ApiError('resource_missing', { message: `No organisation ${orgId}.` });
  }
  const period = periodStart(now);
  if (account.periodStart.getTime() < period.getTime()) return startPeriod(tx, account, period, now);
  return account;
}

async function selectAccountForUpdate(tx: TransactionSql, orgId: string): Promise<AccountRow | undefined> {
  const [row] = await tx<AccountRow[]>`
    SELECT ${accountColumns(tx)}
    FROM credit_accounts a JOIN orgs o ON o.id = a.org_id
    WHERE a.org_id = ${orgId}
    FOR UPDATE OF a`;
  return row;
}

async function createAccount(tx: TransactionSql, orgId: string, now: Date): Promise<void> {
  const [org] = await tx<{ plan: Plan; planActive: boolean }[]>`
    SELECT plan, plan_active FROM orgs WHERE id = ${orgId}`;
  if (!org) return;
  const period = periodStart(now);
  const allowance = monthlyAllowanceMilli(org.plan, org.planActive);
  // Two first uses at once: the loser waits on the primary key, then does nothing (no second grant).
  const inserted = await tx`
    INSERT INTO credit_accounts (org_id, period_start, monthly_remaining, created_at, updated_at)
    VALUES (${orgId}, ${period}, ${allowance}, ${now}, ${now})
    ON CONFLICT (org_id) DO NOTHING
    RETURNING org_id`;
  if (inserted.length === 1 && allowance > 0) {
    await appendEntry(tx, {
      orgId,
      kind: 'grant',
      amount: allowance,
      monthlyDelta: allowance,
      periodStart: period,
      reason: `${org.plan} monthly allowance`,
      createdAt: now,
    });
  }
}

// The monthly reset (docs/decisions.md §2): unused monthly credits are forfeited (an `expire` row) and
// the plan's allowance is granted. Monthly credits that back pending holds stay with those holds. The
// caller holds the account lock, and the UPDATE's own condition makes a second reset of a month a no-op.
async function startPeriod(
  tx: TransactionSql,
  account: AccountRow,
  period: Date,
  now: Date,
): Promise<AccountRow> {
  const forfeited = account.monthlyRemaining - account.monthlyHeld;
  const allowance = monthlyAllowanceMilli(account.plan, account.planActive);
  const [updated] = await tx<AccountRow[]>`
    UPDATE credit_accounts
    SET monthly_remaining = monthly_held + ${allowance}, spent_this_month = 0,
        period_start = ${period}, updated_at = ${now}
    WHERE org_id = ${account.orgId} AND period_start < ${period}
    RETURNING *`;
  if (!updated) return account;
  if (forfeited > 0) {
    await appendEntry(tx, {
      orgId: account.orgId,
      kind: 'expire',
      amount: forfeited,
      monthlyDelta: -forfeited,
      periodStart: account.periodStart,
      reason: 'unused monthly credits do not roll over',
      createdAt: now,
    });
  }
  if (allowance > 0) {
    await appendEntry(tx, {
      orgId: account.orgId,
      kind: 'grant',
      amount: allowance,
      monthlyDelta: allowance,
      periodStart: period,
      reason: `${account.plan} monthly allowance`,
      createdAt: now,
    });
  }
  return { ...account, ...updated };
}

export async function appendEntry(tx: TransactionSql, entry: NewEntry): Promise<LedgerEntry> {
  const [row] = await tx<LedgerEntry[]>`
    INSERT INTO credit_ledger (org_id, kind, amount, monthly_delta, topup_delta, monthly_held_delta,
                               topup_held_delta, period_start, hold_id, request_id, idempotency_key,
                               reference, reason, created_at)
    VALUES (${entry.orgId}, ${entry.kind}, ${entry.amount}, ${entry.monthlyDelta ?? 0},
            ${entry.topupDelta ?? 0}, ${entry.monthlyHeldDelta ?? 0}, ${entry.topupHeldDelta ?? 0},
            ${entry.periodStart}, ${entry.holdId ?? null}, ${entry.requestId ?? null},
            ${entry.idempotencyKey ?? null}, ${entry.reference ?? null}, ${entry.reason ?? null},
            ${entry.createdAt})
    RETURNING *`;
  return row!;
}

/** Runs a guarded UPDATE that the account lock already proved must match; no row means a broken invariant. */
export async function guardedUpdate(statement: Promise<readonly unknown[]>, what: string): Promise<void> {
  const rows = await statement;
  if (rows.length !== 1) throw new Error(`credit ${what} refused by its guard under the account lock`);
}

export function spendCapOf(account: AccountRow): number {
  return spendCapMilli(account.plan, account.spendCapMilli);
}

function availableOf(account: AccountRow): number {
  return account.monthlyRemaining + account.topupRemaining - account.monthlyHeld - account.topupHeld;
}

/** 402s in the order a client can act on: first whether the credits exist, then the monthly cap. */
export function refuseUnaffordable(account: AccountRow, milli: number, cap: number): void {
  const available = availableOf(account);
  if (available < milli) {
    throw new ApiError('balance_too_low', {
      message: `Available credits (${formatCredits(available)}) cannot cover ${formatCredits(milli)} credits.`,
      recovery: { credits_required: creditsNumber(milli), credits_available: creditsNumber(available) },
    });
  }
  const spend = account.spentThisMonth + account.monthlyHeld + account.topupHeld;
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

/** Monthly credits are spent before top-up credits (docs/decisions.md §2). */
export function splitPrice(account: AccountRow, milli: number): { monthlyPart: number; topupPart: number } {
  const monthlyFree = account.monthlyRemaining - account.monthlyHeld;
  const monthlyPart = Math.min(milli, monthlyFree);
  return { monthlyPart, topupPart: milli - monthlyPart };
}

export function assertPositiveMilli(milli: number): void {
  if (!Number.isSafeInteger(milli) || milli <= 0) {
    throw new RangeError(`a credit movement must be a positive integer of milli-credits, got ${milli}`);
  }
}

export function balanceOf(account: AccountRow): Balance {
  const held = account.monthlyHeld + account.topupHeld;
  return {
    orgId: account.orgId,
    periodStart: account.periodStart,
    monthlyRemaining: account.monthlyRemaining,
    topupRemaining: account.topupRemaining,
    held,
    available: account.monthlyRemaining + account.topupRemaining - held,
    spentThisMonth: account.spentThisMonth,
    spendCap: spendCapOf(account),
  };
}

/** What a charge of `milli` under the account lock does to the balance (the balance watch's news). */
export function loweredBy(account: AccountRow, milli: number): BalanceLowered {
  const beforeMilli = account.monthlyRemaining + account.topupRemaining;
  return { orgId: account.orgId, beforeMilli, afterMilli: beforeMilli - milli };
}
