// Money that moves in one step (top-ups, the one-credit expected-lineup charge, a cache hit's hold made
// and settled at once) and balance reads.
import type { TransactionSql } from '../db/connection.js';
import { databaseRead, inTransaction } from '../db/transactions.js';
import { periodStart } from './billing-period.js';
import {
  appendEntry,
  assertPositiveMilli,
  balanceOf,
  guardedUpdate,
  lockAccount,
  loweredBy,
  readAccount,
  refuseUnaffordable,
  spendCapOf,
  splitPrice,
} from './credit-accounts.js';
import { chargeFromEntry } from './holds.js';
import type {
  Balance,
  Charge,
  ChargeDirectOptions,
  LedgerDeps,
  LedgerEntry,
  ReserveOptions,
  TopUpOptions,
  TransactionOption,
} from './types.js';

export async function openAccount(
  { sql, clock }: LedgerDeps,
  orgId: string,
  options: TransactionOption = {},
): Promise<Balance> {
  const now = clock();
  const account = await inTransaction(
    sql,
    { tx: options.tx, onConnectionLost: 'dependency_unavailable' },
    (tx) => lockAccount(tx, orgId, now),
  );
  return balanceOf(account);
}

export async function balance(
  deps: LedgerDeps,
  orgId: string,
  options: TransactionOption = {},
): Promise<Balance> {
  const { tx } = options;
  const account = tx ? await readAccount(tx, orgId) : await databaseRead(() => readAccount(deps.sql, orgId));
  // A read needs the lock only when it must open the account or start its new month.
  if (account && account.periodStart.getTime() >= periodStart(deps.clock()).getTime()) {
    return balanceOf(account);
  }
  return openAccount(deps, orgId, options);
}

export async function topUp(
  { sql, clock }: LedgerDeps,
  orgId: string,
  milli: number,
  options: TopUpOptions = {},
): Promise<LedgerEntry> {
  assertPositiveMilli(milli);
  const now = clock();
  return inTransaction(sql, { tx: options.tx, onConnectionLost: 'settlement_unknown' }, async (tx) => {
    const account = await lockAccount(tx, orgId, now);
    if (options.idempotencyKey) {
      const [earlier] = await tx<LedgerEntry[]>`
        SELECT * FROM credit_ledger
        WHERE org_id = ${orgId} AND kind = 'topup' AND idempotency_key = ${options.idempotencyKey}`;
      if (earlier) return earlier;
    }
    await guardedUpdate(
      tx`
        UPDATE credit_accounts SET topup_remaining = topup_remaining + ${milli}, updated_at = ${now}
        WHERE org_id = ${orgId}
        RETURNING org_id`,
      'top-up',
    );
    return appendEntry(tx, {
      orgId,
      kind: 'topup',
      amount: milli,
      topupDelta: milli,
      periodStart: account.periodStart,
      requestId: options.requestId ?? null,
      idempotencyKey: options.idempotencyKey ?? null,
      reference: options.reference ?? null,
      createdAt: now,
    });
  });
}

export async function chargeDirect(
  { sql, clock, balanceWatch }: LedgerDeps,
  orgId: string,
  milli: number,
  options: ChargeDirectOptions,
): Promise<Charge> {
  assertPositiveMilli(milli);
  const now = clock();
  return inTransaction(sql, { tx: options.tx, onConnectionLost: 'settlement_unknown' }, async (tx) => {
    const account = await lockAccount(tx, orgId, now);
    if (options.idempotencyKey) {
      const [earlier] = await tx<LedgerEntry[]>`
        SELECT * FROM credit_ledger
        WHERE org_id = ${orgId} AND kind = 'charge' AND hold_id IS NULL
          AND idempotency_key = ${options.idempotencyKey}`;
      if (earlier) return chargeFromEntry(earlier, true);
    }
    const cap = spendCapOf(account);
    refuseUnaffordable(account, milli, cap);
    const { monthlyPart, topupPart } = splitPrice(account, milli);
    await guardedUpdate(
      tx`${spendFromAccount(tx, orgId, { monthlyPart, topupPart }, cap, now)} RETURNING org_id`,
      'charge',
    );
    const entry = await appendEntry(tx, {
      orgId,
      kind: 'charge',
      amount: milli,
      monthlyDelta: -monthlyPart,
      topupDelta: -topupPart,
      periodStart: account.periodStart,
      requestId: options.requestId,
      idempotencyKey: options.idempotencyKey ?? null,
      reference: options.reference ?? null,
      createdAt: now,
    });
    await balanceWatch?.balanceLowered(tx, loweredBy(account, milli));
    return chargeFromEntry(entry, false);
  });
}

/**
 * The UPDATE of a charge made in one step (no hold held it): the parts leave the remaining columns and
 * count as spent, guarded again in SQL (the parts still free, the month's spend within the cap) under
 * the account lock the caller holds. Its caller adds RETURNING.
 */
function spendFromAccount(
  tx: TransactionSql,
  orgId: string,
  { monthlyPart, topupPart }: { monthlyPart: number; topupPart: number },
  cap: number,
  now: Date,
) {
  const milli = monthlyPart + topupPart;
  return tx`
    UPDATE credit_accounts
    SET monthly_remaining = monthly_remaining - ${monthlyPart},
        topup_remaining = topup_remaining - ${topupPart},
        spent_this_month = spent_this_month + ${milli},
        updated_at = ${now}
    WHERE org_id = ${orgId}
      AND monthly_remaining - monthly_held >= ${monthlyPart}
      AND topup_remaining - topup_held >= ${topupPart}
      AND spent_this_month + monthly_held + topup_held + ${milli} <= ${cap}`;
}

/** A hold made and settled at once: its charge and the credits available after it. */
export interface SettledAtOnce {
  charge: Charge;
  available: number;
}

/**
 * A hold made and settled in one step, for work that is delivered as it is submitted (a cache hit,
 * docs/decisions.md §6). Under the account lock, one statement moves the price out of the remaining
 * columns and writes the hold, settled, with its two ledger rows: `hold` then `charge`, the rows a
 * reservation and its settlement write one after the other, so the ledger reads the same either way.
 * The caller's transaction carries it (settlement_unknown when its commit is not acknowledged).
 */
export async function settleAtOnce(
  { clock, balanceWatch }: LedgerDeps,
  orgId: string,
  milli: number,
  options: ReserveOptions & { holdId: string; tx: TransactionSql },
): Promise<SettledAtOnce> {
  assertPositiveMilli(milli);
  const now = clock();
  const { tx, holdId } = options;
  const account = await lockAccount(tx, orgId, now);
  const cap = spendCapOf(account);
  refuseUnaffordable(account, milli, cap);
  const parts = splitPrice(account, milli);
  const { monthlyPart: m, topupPart: t } = parts;
  const [row] = await tx<(LedgerEntry & { available: number })[]>`
    WITH moved AS (
      ${spendFromAccount(tx, orgId, parts, cap, now)}
      RETURNING monthly_remaining + topup_remaining - monthly_held - topup_held AS available
    ), hold AS (
      INSERT INTO credit_holds (id, org_id, amount, monthly_part, topup_part, period_start, status,
                                created_at, settled_at, request_id, idempotency_key)
      SELECT ${holdId}, ${orgId}, ${milli}, ${m}, ${t}, ${account.periodStart}, 'settled', ${now}, ${now},
             ${options.requestId}, ${options.idempotencyKey ?? null}
      FROM moved
      RETURNING *
    ), entries AS (
      INSERT INTO credit_ledger (org_id, kind, amount, monthly_delta, topup_delta, monthly_held_delta,
                                 topup_held_delta, period_start, hold_id, request_id, idempotency_key,
                                 created_at)
      SELECT h.org_id, e.kind, h.amount, e.monthly_delta, e.topup_delta, e.monthly_held_delta,
             e.topup_held_delta, h.period_start, h.id, h.request_id, h.idempotency_key, h.created_at
      FROM hold h, (VALUES
        (1, 'hold', 0::bigint, 0::bigint, ${m}::bigint, ${t}::bigint),
        (2, 'charge', ${-m}::bigint, ${-t}::bigint, ${-m}::bigint, ${-t}::bigint)
      ) AS e(ordinal, kind, monthly_delta, topup_delta, monthly_held_delta, topup_held_delta)
      ORDER BY e.ordinal
      RETURNING *
    )
    SELECT entries.*, moved.available FROM entries, moved WHERE entries.kind = 'charge'`;
  // The lock proved the guard must hold: no row means a broken invariant, not a refusal.
  if (!row) throw new Error('credit settlement at once refused by its guard under the account lock');
  await balanceWatch?.balanceLowered(tx, loweredBy(account, milli));
  const { available, ...entry } = row;
  return { charge: chargeFromEntry(entry, false), available };
}
