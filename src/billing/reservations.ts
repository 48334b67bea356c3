// Reservations (holds made, `res_…`): a job's price held on the organisation's account, one hold
// (reserve) or a batch's many in one transaction (reserveMany), guarded by the statement that moves the
// account's held credits (docs/decisions.md §2). Their settlement, release and end are holds.ts's.
import type { TransactionSql } from '../db/connection.js';
import { inTransaction } from '../db/transactions.js';
import { newId } from '../ids.js';
import {
  type AccountRow,
  appendEntry,
  assertPositiveMilli,
  guardedUpdate,
  lockAccount,
  refuseUnaffordable,
  spendCapOf,
  splitPrice,
} from './credit-accounts.js';
import type { Hold, LedgerDeps, ReserveOptions } from './types.js';

export async function reserve(
  { sql, clock }: LedgerDeps,
  orgId: string,
  milli: number,
  options: ReserveOptions,
): Promise<Hold> {
  assertPositiveMilli(milli);
  const now = clock();
  const holdId = options.holdId ?? newId('res');
  return inTransaction(sql, { tx: options.tx, onConnectionLost: 'dependency_unavailable' }, async (tx) => {
    // The account's lock and the look for a hold of this id (only a caller-chosen id can exist already)
    // sent together; then the account's held credits, the hold and its ledger row, which depend only on
    // the account as locked, sent together too: two round trips under the account's lock, where there
    // were five. A guard refusing the first write throws, and the caller's transaction rolls back the rest.
    const [account, [existing]] = await Promise.all([
      lockAccount(tx, orgId, now),
      options.holdId ? tx<Hold[]>`SELECT * FROM credit_holds WHERE id = ${holdId}` : [],
    ]);
    if (existing) {
      if (existing.orgId !== orgId || existing.amount !== milli) {
        throw new Error(`hold ${holdId} already exists with another organisation or amount`);
      }
      return existing;
    }
    const cap = spendCapOf(account);
    refuseUnaffordable(account, milli, cap);
    const { monthlyPart, topupPart } = splitPrice(account, milli);
    // Each call sends its statement before it returns, so they go in this order: the ledger row names
    // the hold, which must exist by then.
    const [, hold] = await Promise.all([
      addHeld(tx, orgId, { monthlyPart, topupPart }, cap, now),
      insertHold(tx, {
        id: holdId,
        orgId,
        amount: milli,
        monthlyPart,
        topupPart,
        periodStart: account.periodStart,
        createdAt: now,
        expiresAt: options.expiresAt ?? null,
        requestId: options.requestId,
        idempotencyKey: options.idempotencyKey ?? null,
      }),
      appendEntry(tx, {
        orgId,
        kind: 'hold',
        amount: milli,
        monthlyHeldDelta: monthlyPart,
        topupHeldDelta: topupPart,
        periodStart: account.periodStart,
        holdId,
        requestId: options.requestId,
        idempotencyKey: options.idempotencyKey ?? null,
        createdAt: now,
      }),
    ]);
    return hold;
  });
}

/** One hold of a reservation made for many at once (reserveMany). */
export interface NewHold {
  holdId: string;
  milli: number;
}

/**
 * Holds for many jobs at once (a batch, docs/api.md §4.5): all of them or none. Under the one account lock
 * the whole amount is checked (a 402 names the batch's price), each hold's monthly and top-up parts are
 * split in order as successive single reservations would split them, and the money moves by one guarded
 * UPDATE, one INSERT of the holds and one INSERT of their ledger rows: three statements for any number.
 */
export async function reserveMany(
  { sql, clock }: LedgerDeps,
  orgId: string,
  holds: readonly NewHold[],
  options: Omit<ReserveOptions, 'holdId'>,
): Promise<Hold[]> {
  if (holds.length === 0) return [];
  for (const hold of holds) assertPositiveMilli(hold.milli);
  const now = clock();
  const total = holds.reduce((sum, hold) => sum + hold.milli, 0);
  assertPositiveMilli(total);
  return inTransaction(sql, { tx: options.tx, onConnectionLost: 'dependency_unavailable' }, async (tx) => {
    const account = await lockAccount(tx, orgId, now);
    const cap = spendCapOf(account);
    refuseUnaffordable(account, total, cap);
    const parts = splitPrices(account, holds);
    const monthlyTotal = parts.reduce((sum, part) => sum + part.monthlyPart, 0);
    const rows = parts.map((part, ordinal) => ({
      ordinal,
      id: part.holdId,
      amount: part.milli,
      monthly_part: part.monthlyPart,
      topup_part: part.topupPart,
    }));
    // The rows travel as one JSON document; each hold's `hold` entry is written from the row just
    // inserted, in the order given (a data-modifying WITH runs to completion whether or not it is read).
    // Sent with the account's held credits, as reserve does: one round trip under the lock fewer.
    const [, inserted] = await Promise.all([
      addHeld(tx, orgId, { monthlyPart: monthlyTotal, topupPart: total - monthlyTotal }, cap, now),
      tx<Hold[]>`
      WITH r AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
          AS r(ordinal integer, id text, amount bigint, monthly_part bigint, topup_part bigint)
      ), new_holds AS (
        INSERT INTO credit_holds (id, org_id, amount, monthly_part, topup_part, period_start, status,
                                  created_at, expires_at, request_id, idempotency_key)
        SELECT r.id, ${orgId}, r.amount, r.monthly_part, r.topup_part, ${account.periodStart}, 'pending',
               ${now}, ${options.expiresAt ?? null}, ${options.requestId}, ${options.idempotencyKey ?? null}
        FROM r ORDER BY r.ordinal
        RETURNING *
      ), entries AS (
        INSERT INTO credit_ledger (org_id, kind, amount, monthly_delta, topup_delta, monthly_held_delta,
                                   topup_held_delta, period_start, hold_id, request_id, idempotency_key,
                                   created_at)
        SELECT h.org_id, 'hold', h.amount, 0, 0, h.monthly_part, h.topup_part, h.period_start, h.id,
               h.request_id, h.idempotency_key, h.created_at
        FROM new_holds h JOIN r ON r.id = h.id ORDER BY r.ordinal
      )
      SELECT * FROM new_holds`,
    ]);
    if (inserted.length !== rows.length) throw new Error('a batch reservation wrote a partial set of holds');
    const byId = new Map(inserted.map((hold) => [hold.id, hold]));
    return holds.map((hold) => byId.get(hold.holdId)!);
  });
}

/** A pending hold, as reserve writes it. */
async function insertHold(
  tx: TransactionSql,
  hold: Pick<
    Hold,
    | 'id'
    | 'orgId'
    | 'amount'
    | 'monthlyPart'
    | 'topupPart'
    | 'periodStart'
    | 'createdAt'
    | 'expiresAt'
    | 'requestId'
    | 'idempotencyKey'
  >,
): Promise<Hold> {
  const [row] = await tx<Hold[]>`
    INSERT INTO credit_holds (id, org_id, amount, monthly_part, topup_part, period_start, status,
                              created_at, expires_at, request_id, idempotency_key)
    VALUES (${hold.id}, ${hold.orgId}, ${hold.amount}, ${hold.monthlyPart}, ${hold.topupPart},
            ${hold.periodStart}, 'pending', ${hold.createdAt}, ${hold.expiresAt}, ${hold.requestId},
            ${hold.idempotencyKey})
    RETURNING *`;
  return row!;
}

/**
 * Moves a reservation's parts into the account's held amounts, guarded again in SQL (under the account
 * lock the caller holds): the parts must still be free and the month's spend stay within the cap.
 */
async function addHeld(
  tx: TransactionSql,
  orgId: string,
  { monthlyPart, topupPart }: { monthlyPart: number; topupPart: number },
  cap: number,
  now: Date,
): Promise<void> {
  await guardedUpdate(
    tx`
      UPDATE credit_accounts
      SET monthly_held = monthly_held + ${monthlyPart}, topup_held = topup_held + ${topupPart},
          updated_at = ${now}
      WHERE org_id = ${orgId}
        AND monthly_remaining - monthly_held >= ${monthlyPart}
        AND topup_remaining - topup_held >= ${topupPart}
        AND spent_this_month + monthly_held + topup_held + ${monthlyPart + topupPart} <= ${cap}
      RETURNING org_id`,
    'reservation',
  );
}

/** Each hold's parts in order, as successive reservations would split them (monthly credits first). */
function splitPrices(account: AccountRow, holds: readonly NewHold[]) {
  let monthlyHeld = account.monthlyHeld;
  return holds.map((hold) => {
    const { monthlyPart, topupPart } = splitPrice({ ...account, monthlyHeld }, hold.milli);
    monthlyHeld += monthlyPart;
    return { ...hold, monthlyPart, topupPart };
  });
}
