// Holds (reservations, `res_…`, made by reservations.ts): the price of a job held until delivery settles
// it (a charge, exactly once) or it ends undelivered and is released (docs/decisions.md §2).
import type { TransactionSql } from '../db/connection.js';
import { inTransaction } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import {
  type AccountRow,
  appendEntry,
  balanceOf,
  guardedUpdate,
  lockAccount,
  loweredBy,
} from './credit-accounts.js';
import type {
  Charge,
  Hold,
  LedgerDeps,
  LedgerEntry,
  ReleaseOptions,
  ReleaseOutcome,
  SettledCharge,
  SettleOptions,
  TransactionOption,
} from './types.js';

/** Why a hold was released by the sweeper (docs/decisions.md §2: not delivered within HOLD_TTL). */
const EXPIRED_RELEASE_REASON = 'expired';

export async function settle(
  deps: LedgerDeps,
  holdId: string,
  options: SettleOptions,
): Promise<SettledCharge> {
  const now = deps.clock();
  const outcome = await inTransaction(
    deps.sql,
    { tx: options.tx, onConnectionLost: 'settlement_unknown' },
    async (tx): Promise<{ charge: SettledCharge } | { expired: Hold }> => {
      const orgId = options.orgId ?? (await orgOfHold(tx, holdId));
      // The account's lock and then the hold's, sent together: the server takes them in that order (the
      // order every operation keeps), and the account stays locked for one round trip fewer. Settling
      // an organisation's holds one at a time (a client fetching its items' results at once) queues on
      // that lock, so each round trip under it is paid by every delivery waiting behind.
      const [account, [hold]] = await Promise.all([
        lockAccount(tx, orgId, now),
        tx<Hold[]>`SELECT * FROM credit_holds WHERE id = ${holdId} FOR NO KEY UPDATE`,
      ]);
      if (!hold || hold.orgId !== orgId) throw holdMissing(holdId);
      const available = balanceOf(account).available;
      if (hold.status === 'settled') {
        const [charge] = await tx<LedgerEntry[]>`
          SELECT * FROM credit_ledger WHERE hold_id = ${holdId} AND kind = 'charge'`;
        return { charge: { ...chargeFromEntry(charge!, true), available } };
      }
      if (hold.status === 'released') return { expired: hold };
      if (hold.expiresAt !== null && hold.expiresAt.getTime() <= now.getTime()) {
        // Past its end but not yet swept: end it now, so the answer and the money agree.
        return { expired: await releaseLocked(tx, account, hold, EXPIRED_RELEASE_REASON, null, now) };
      }
      // The charge, the credits.low check's read (it writes only when the balance crosses its threshold)
      // and the caller's statements that go with the charge, sent together: one round trip under the
      // lock instead of three.
      const [charge] = await Promise.all([
        chargeHold(tx, account, hold, options, now),
        deps.balanceWatch?.balanceLowered(tx, loweredBy(account, hold.amount)),
        options.alongside?.({ amount: hold.amount, available }),
      ]);
      return { charge: { ...charge, available } };
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

/** What settling one of many holds came to: its charge, or 'expired' when the hold ended first. */
export type ManySettled = SettledCharge | 'expired';

/**
 * `settle` for a delivery: the hold's charge, or 'expired' when the hold ended before it (released here
 * if the sweeper had not yet), instead of the reservation_expired error.
 */
export async function settleUnlessEnded(
  deps: LedgerDeps,
  holdId: string,
  options: SettleOptions,
): Promise<ManySettled> {
  try {
    return await settle(deps, holdId, options);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'reservation_expired') return 'expired';
    throw error;
  }
}

/**
 * `settle` for many holds of one organisation in the caller's transaction (a page of a batch's results
 * stream, docs/decisions.md §6): the account locked once, the holds locked in one statement in id
 * order, and every pending hold charged by one statement (their rows settled, the account's columns moved
 * by the sums, one `charge` ledger row each). A hold that is settled already gives its charge again; one
 * that ended, or is past its end (released here, as `settle` does), gives 'expired'.
 */
export async function settleMany(
  deps: LedgerDeps,
  orgId: string,
  holdIds: readonly string[],
  options: SettleOptions & { tx: TransactionSql },
): Promise<Map<string, ManySettled>> {
  const settled = new Map<string, ManySettled>();
  if (holdIds.length === 0) return settled;
  const { tx } = options;
  const now = deps.clock();
  const account = await lockAccount(tx, orgId, now);
  const available = balanceOf(account).available;
  const holds = await tx<Hold[]>`
    SELECT * FROM credit_holds WHERE id = ANY(${tx.array([...holdIds])}::text[]) AND org_id = ${orgId}
    ORDER BY id FOR NO KEY UPDATE`;
  if (holds.length !== new Set(holdIds).size) {
    const found = new Set(holds.map((hold) => hold.id));
    throw holdMissing(holdIds.find((id) => !found.has(id))!);
  }
  const due: Hold[] = [];
  for (const hold of holds) {
    if (hold.status === 'released') settled.set(hold.id, 'expired');
    else if (hold.status === 'settled')
      due.push(hold); // its charge is read again below
    else if (hold.expiresAt !== null && hold.expiresAt.getTime() <= now.getTime()) {
      await releaseLocked(tx, account, hold, EXPIRED_RELEASE_REASON, null, now);
      settled.set(hold.id, 'expired');
    } else due.push(hold);
  }
  const pending = due.filter((hold) => hold.status === 'pending');
  const again = due.filter((hold) => hold.status === 'settled').map((hold) => hold.id);
  const charged = await chargeHolds(tx, account, pending, options, now);
  for (const entry of charged) settled.set(entry.holdId!, { ...chargeFromEntry(entry, false), available });
  const chargedMilli = charged.reduce((total, entry) => total + entry.amount, 0);
  if (chargedMilli > 0) await deps.balanceWatch?.balanceLowered(tx, loweredBy(account, chargedMilli));
  if (again.length > 0) {
    const entries = await tx<LedgerEntry[]>`
      SELECT * FROM credit_ledger WHERE hold_id = ANY(${tx.array(again)}::text[]) AND kind = 'charge'`;
    for (const entry of entries) settled.set(entry.holdId!, { ...chargeFromEntry(entry, true), available });
  }
  return settled;
}

/**
 * Pending holds of the locked account charged in one statement: the holds settled, the account's columns
 * moved by their sums (each hold's parts leave both the held and the remaining columns) under a guard,
 * and a `charge` row each, in id order.
 */
async function chargeHolds(
  tx: TransactionSql,
  account: AccountRow,
  holds: readonly Hold[],
  options: SettleOptions,
  now: Date,
): Promise<LedgerEntry[]> {
  if (holds.length === 0) return [];
  const sum = (part: (hold: Hold) => number) => holds.reduce((total, hold) => total + part(hold), 0);
  const monthly = sum((hold) => hold.monthlyPart);
  const topup = sum((hold) => hold.topupPart);
  const ids = holds.map((hold) => hold.id);
  // A data-modifying WITH runs to completion whether or not it is read; the account's guard is checked
  // by counting the row it returns (none: the whole transaction is rolled back by the throw below).
  // The holds are locked already (settleMany, settle); `held` reads their status by id alone and the pending
  // ones are settled by id, for the reason setHoldsExpiry gives.
  const rows = await tx<Array<LedgerEntry & { accountsMoved: number }>>`
    WITH held AS MATERIALIZED (
      SELECT id, status FROM credit_holds WHERE id = ANY(${tx.array(ids)}::text[])
      ORDER BY id FOR NO KEY UPDATE
    ), settled AS (
      UPDATE credit_holds SET status = 'settled', settled_at = ${now}
      WHERE id = ANY(ARRAY(SELECT id FROM held WHERE status = 'pending'))
      RETURNING *
    ), account AS (
      UPDATE credit_accounts
      SET monthly_remaining = monthly_remaining - ${monthly}, topup_remaining = topup_remaining - ${topup},
          monthly_held = monthly_held - ${monthly}, topup_held = topup_held - ${topup},
          spent_this_month = spent_this_month + ${monthly + topup}, updated_at = ${now}
      WHERE org_id = ${account.orgId} AND monthly_held >= ${monthly} AND topup_held >= ${topup}
      RETURNING org_id
    ), entries AS (
      INSERT INTO credit_ledger (org_id, kind, amount, monthly_delta, topup_delta, monthly_held_delta,
                                 topup_held_delta, period_start, hold_id, request_id, idempotency_key, created_at)
      SELECT h.org_id, 'charge', h.amount, -h.monthly_part, -h.topup_part, -h.monthly_part, -h.topup_part,
             ${account.periodStart}, h.id, ${options.requestId},
             COALESCE(${options.idempotencyKey ?? null}::text, h.idempotency_key), ${now}
      FROM settled h ORDER BY h.id
      RETURNING *
    )
    SELECT entries.*, (SELECT count(*) FROM account)::int AS accounts_moved FROM entries ORDER BY id`;
  if (rows.length !== holds.length || rows.some((row) => row.accountsMoved !== 1))
    throw new Error('credit settlement refused by its guard under the account lock');
  return rows.map(({ accountsMoved: _, ...entry }) => entry);
}

/**
 * One pending hold of the locked account charged, through chargeHolds' one statement: three statements
 * (the account, the hold, the ledger row) were three round trips and some 0.3 ms of the server's time
 * a delivery. The caller holds both locks.
 */
async function chargeHold(
  tx: TransactionSql,
  account: AccountRow,
  hold: Hold,
  options: SettleOptions,
  now: Date,
): Promise<Charge> {
  const [entry] = await chargeHolds(tx, account, [hold], options, now);
  return chargeFromEntry(entry!, false);
}

export async function release(
  { sql, clock }: LedgerDeps,
  holdId: string,
  reason: string,
  options: ReleaseOptions = {},
): Promise<ReleaseOutcome> {
  const now = clock();
  return inTransaction(sql, { tx: options.tx, onConnectionLost: 'dependency_unavailable' }, async (tx) => {
    const orgId = await orgOfHold(tx, holdId);
    const account = await lockAccount(tx, orgId, now);
    const [hold] = await tx<Hold[]>`SELECT * FROM credit_holds WHERE id = ${holdId} FOR NO KEY UPDATE`;
    if (!hold) throw holdMissing(holdId);
    if (hold.status !== 'pending') return { hold, released: false };
    const released = await releaseLocked(tx, account, hold, reason, options.requestId ?? null, now);
    return { hold: released, released: true };
  });
}

export async function getHold(
  { sql }: LedgerDeps,
  holdId: string,
  options: TransactionOption = {},
): Promise<Hold | null> {
  const db = options.tx ?? sql;
  const [row] = await db<Hold[]>`SELECT * FROM credit_holds WHERE id = ${holdId}`;
  return row ?? null;
}

export async function setHoldExpiry(
  deps: LedgerDeps,
  holdId: string,
  expiresAt: Date | null,
  options: TransactionOption = {},
): Promise<Hold> {
  const db = options.tx ?? deps.sql;
  // Only the hold row changes (no money moves); a sweeper holding it waits and then re-reads expires_at.
  const [updated] = await db<Hold[]>`
    UPDATE credit_holds SET expires_at = ${expiresAt}
    WHERE id = ${holdId} AND status = 'pending'
    RETURNING *`;
  if (updated) return updated;
  const current = await getHold(deps, holdId, options);
  if (!current) throw holdMissing(holdId);
  return current;
}

/** One end for many pending holds (a batch's cache hits, born finished together); one statement. */
export async function setHoldsExpiry(
  deps: LedgerDeps,
  holdIds: readonly string[],
  expiresAt: Date,
  options: TransactionOption = {},
): Promise<void> {
  if (holdIds.length === 0) return;
  const db = options.tx ?? deps.sql;
  // The holds are found and locked by id alone (in id order, as every statement that locks several
  // does), and the pending ones among them are updated by id: with `status = 'pending'` beside the ids,
  // the planner ANDed the primary key with the partial index of every pending hold
  // (credit_holds_pending_expiry), reading all of it on every job's completion.
  await db`
    WITH held AS MATERIALIZED (
      SELECT id, status FROM credit_holds WHERE id = ANY(${db.array([...holdIds])}::text[])
      ORDER BY id FOR NO KEY UPDATE
    )
    UPDATE credit_holds SET expires_at = ${expiresAt}
    WHERE id = ANY(ARRAY(SELECT id FROM held WHERE status = 'pending'))`;
}

export async function expireHolds({ sql, clock }: LedgerDeps, now: Date = clock(), limit = 500) {
  const due = await sql<{ id: string }[]>`
    SELECT id FROM credit_holds
    WHERE status = 'pending' AND expires_at <= ${now}
    ORDER BY expires_at
    LIMIT ${limit}`;
  const released: Hold[] = [];
  for (const { id } of due) {
    const hold = await inTransaction(sql, { onConnectionLost: 'dependency_unavailable' }, async (tx) => {
      const orgId = await orgOfHold(tx, id);
      const account = await lockAccount(tx, orgId, now);
      const [row] = await tx<Hold[]>`SELECT * FROM credit_holds WHERE id = ${id} FOR NO KEY UPDATE`;
      // Settled, released or given a later end since the scan: not ours to end.
      if (row?.status !== 'pending' || row.expiresAt === null || row.expiresAt.getTime() > now.getTime()) {
        return null;
      }
      return releaseLocked(tx, account, row, EXPIRED_RELEASE_REASON, null, now);
    });
    if (hold) released.push(hold);
  }
  return released;
}

/** Pending holds of every organisation: their number and milli-credits (the holds-open metric). */
export async function openHolds({ sql }: LedgerDeps): Promise<{ count: number; milli: number }> {
  const [row] = await sql<{ count: number; milli: number }[]>`
    SELECT count(*)::int AS count, COALESCE(sum(amount), 0)::bigint AS milli
    FROM credit_holds WHERE status = 'pending'`;
  return { count: row!.count, milli: row!.milli };
}

export async function releasedHoldIds({ sql }: LedgerDeps, holdIds: readonly string[]): Promise<string[]> {
  if (holdIds.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM credit_holds WHERE id = ANY(${sql.array([...holdIds])}::text[]) AND status = 'released'`;
  return rows.map((row) => row.id);
}

// Returns a pending hold's credits; the caller holds the account and hold locks. Monthly credits of a
// month that has since ended go back only to expire at once: they would have been forfeited at the reset.
async function releaseLocked(
  tx: TransactionSql,
  account: AccountRow,
  hold: Hold,
  reason: string,
  requestId: string | null,
  now: Date,
): Promise<Hold> {
  const lapsedMonthly = hold.periodStart.getTime() < account.periodStart.getTime() ? hold.monthlyPart : 0;
  await guardedUpdate(
    tx`
      UPDATE credit_accounts
      SET monthly_held = monthly_held - ${hold.monthlyPart}, topup_held = topup_held - ${hold.topupPart},
          monthly_remaining = monthly_remaining - ${lapsedMonthly}, updated_at = ${now}
      WHERE org_id = ${hold.orgId} AND monthly_held >= ${hold.monthlyPart} AND topup_held >= ${hold.topupPart}
      RETURNING org_id`,
    'release',
  );
  const [released] = await tx<Hold[]>`
    UPDATE credit_holds SET status = 'released', released_at = ${now}, release_reason = ${reason}
    WHERE id = ${hold.id} AND status = 'pending'
    RETURNING *`;
  if (!released) throw new Error(`hold ${hold.id} changed under its lock`);
  await appendEntry(tx, {
    orgId: hold.orgId,
    kind: 'release',
    amount: hold.amount,
    monthlyHeldDelta: -hold.monthlyPart,
    topupHeldDelta: -hold.topupPart,
    periodStart: account.periodStart,
    holdId: hold.id,
    requestId,
    reason,
    createdAt: now,
  });
  if (lapsedMonthly > 0) {
    await appendEntry(tx, {
      orgId: hold.orgId,
      kind: 'expire',
      amount: lapsedMonthly,
      monthlyDelta: -lapsedMonthly,
      periodStart: account.periodStart,
      holdId: hold.id,
      reason: 'released monthly credits of an ended month',
      createdAt: now,
    });
  }
  return released;
}

async function orgOfHold(tx: TransactionSql, holdId: string): Promise<string> {
  // org_id never changes, so reading it before taking the account lock is safe.
  const [row] = await tx<{ orgId: string }[]>`SELECT org_id FROM credit_holds WHERE id = ${holdId}`;
  if (!row) throw holdMissing(holdId);
  return row.orgId;
}

function holdMissing(holdId: string): ApiError {
  return new ApiError('resource_missing', { message: `No reservation ${holdId}.`, param: 'reservation_id' });
}

export function chargeFromEntry(entry: LedgerEntry, replayed: boolean): Charge {
  return {
    entryId: entry.id,
    orgId: entry.orgId,
    holdId: entry.holdId,
    amount: entry.amount,
    monthlyPart: Math.abs(entry.monthlyDelta),
    topupPart: Math.abs(entry.topupDelta),
    chargedAt: entry.createdAt,
    requestId: entry.requestId,
    idempotencyKey: entry.idempotencyKey,
    replayed,
  };
}
