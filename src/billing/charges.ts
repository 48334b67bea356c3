// Money that moves in one step (top-ups, the one-credit expected-lineup charge) and balance reads.
import { databaseRead, inTransaction } from '../db/transactions.js';
import { periodStart } from './billing-period.js';
import {
  appendEntry,
  assertPositiveMilli,
  balanceOf,
  guardedUpdate,
  lockAccount,
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
  { sql, clock }: LedgerDeps,
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
      tx`
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
    return chargeFromEntry(entry, false);
  });
}
