// The only code that moves credits (docs/decisions.md §2). Every movement is one guarded UPDATE of the
// organisation's credit_accounts row plus its append-only credit_ledger rows, in one transaction, so
// that each account column always equals the sum of its ledger deltas. The monthly reset is lazy: the
// first operation of an organisation in a new UTC month applies it, under the same lock.
//
// Concurrency: every operation on an organisation first locks its account row (SELECT … FOR UPDATE), then
// any hold row, always in that order, so operations on one organisation run one at a time and never
// deadlock. The lock decides how a price is split between monthly and top-up credits; the UPDATE that
// moves the money still carries the guard (`WHERE available >= price …`) and refuses on its own.
//
// This file holds the ledger's interface and factory (its records are in types.ts); the statements live
// beside it by kind:
// credit-accounts.ts (the account lock, monthly reset, guards), holds.ts (reserve, settle, release,
// expiry), charges.ts (top-ups, one-step charges, balances) and ledger-audit.ts (sums and checks).
import type { Sql, TransactionSql } from '../db/connection.js';
import { balance, chargeDirect, openAccount, type SettledAtOnce, settleAtOnce, topUp } from './charges.js';
import {
  expireHolds,
  getHold,
  type ManySettled,
  openHolds,
  release,
  releasedHoldIds,
  setHoldExpiry,
  setHoldsExpiry,
  settle,
  settleMany,
  settleUnlessEnded,
} from './holds.js';
import { checkBalanced, entries, findUnbalancedAccounts, ledgerSum } from './ledger-audit.js';
import { type NewHold, reserve, reserveMany } from './reservations.js';
import type {
  Balance,
  BalanceWatch,
  Charge,
  ChargeDirectOptions,
  Hold,
  LedgerDeps,
  LedgerEntry,
  LedgerSum,
  ReleaseOptions,
  ReleaseOutcome,
  ReserveOptions,
  SettledCharge,
  SettleOptions,
  TopUpOptions,
  TransactionOption,
} from './types.js';

export interface Ledger {
  openAccount(orgId: string, options?: TransactionOption): Promise<Balance>;
  topUp(orgId: string, milli: number, options?: TopUpOptions): Promise<LedgerEntry>;
  reserve(orgId: string, milli: number, options: ReserveOptions): Promise<Hold>;
  /** Holds for many jobs, all or none, in three statements (a batch); in the order given. */
  reserveMany(
    orgId: string,
    holds: readonly NewHold[],
    options: Omit<ReserveOptions, 'holdId'>,
  ): Promise<Hold[]>;
  /** The hold's charge, and the available credits it leaves (the same as before it). */
  settle(holdId: string, options: SettleOptions): Promise<SettledCharge>;
  /** settle for a delivery: the charge, or 'expired' when the hold ended first (released if not yet). */
  settleUnlessEnded(holdId: string, options: SettleOptions): Promise<SettledCharge | 'expired'>;
  /**
   * Many holds of one organisation settled in the caller's transaction, the pending ones by one statement;
   * by hold id, each its charge or 'expired'.
   */
  settleMany(
    orgId: string,
    holdIds: readonly string[],
    options: SettleOptions & { tx: TransactionSql },
  ): Promise<Map<string, ManySettled>>;
  /** A hold made and settled at once in the caller's transaction (a cache hit); its charge and balance. */
  settleAtOnce(
    orgId: string,
    milli: number,
    options: ReserveOptions & { holdId: string; tx: TransactionSql },
  ): Promise<SettledAtOnce>;
  release(holdId: string, reason: string, options?: ReleaseOptions): Promise<ReleaseOutcome>;
  chargeDirect(orgId: string, milli: number, options: ChargeDirectOptions): Promise<Charge>;
  balance(orgId: string, options?: TransactionOption): Promise<Balance>;
  getHold(holdId: string, options?: TransactionOption): Promise<Hold | null>;
  setHoldExpiry(holdId: string, expiresAt: Date | null, options?: TransactionOption): Promise<Hold>;
  /** The same end for many pending holds, in one statement. */
  setHoldsExpiry(holdIds: readonly string[], expiresAt: Date, options?: TransactionOption): Promise<void>;
  expireHolds(now?: Date, limit?: number): Promise<Hold[]>;
  /** Pending holds of every organisation: their number and milli-credits. */
  openHolds(): Promise<{ count: number; milli: number }>;
  /** Of these hold ids, the ones that are released (the sweeper expires their jobs). */
  releasedHoldIds(holdIds: readonly string[]): Promise<string[]>;
  entries(orgId: string): Promise<LedgerEntry[]>;
  ledgerSum(orgId: string): Promise<LedgerSum>;
  checkBalanced(orgId: string): Promise<{ balanced: boolean; account: LedgerSum; ledger: LedgerSum }>;
  /** Organisations whose account differs from the sum of their ledger (empty when all is well). */
  findUnbalancedAccounts(): Promise<string[]>;
}

export function makeLedger({
  sql,
  clock = () => new Date(),
  balanceWatch,
}: {
  sql: Sql;
  clock?: () => Date;
  /** Told of every charge in its transaction (credits.low webhooks). */
  balanceWatch?: BalanceWatch | undefined;
}): Ledger {
  const deps: LedgerDeps = { sql, clock, balanceWatch };
  return {
    openAccount: (orgId, options) => openAccount(deps, orgId, options),
    topUp: (orgId, milli, options) => topUp(deps, orgId, milli, options),
    reserve: (orgId, milli, options) => reserve(deps, orgId, milli, options),
    reserveMany: (orgId, holds, options) => reserveMany(deps, orgId, holds, options),
    settle: (holdId, options) => settle(deps, holdId, options),
    settleMany: (orgId, holdIds, options) => settleMany(deps, orgId, holdIds, options),
    settleUnlessEnded: (holdId, options) => settleUnlessEnded(deps, holdId, options),
    settleAtOnce: (orgId, milli, options) => settleAtOnce(deps, orgId, milli, options),
    release: (holdId, reason, options) => release(deps, holdId, reason, options),
    chargeDirect: (orgId, milli, options) => chargeDirect(deps, orgId, milli, options),
    balance: (orgId, options) => balance(deps, orgId, options),
    getHold: (holdId, options) => getHold(deps, holdId, options),
    setHoldExpiry: (holdId, expiresAt, options) => setHoldExpiry(deps, holdId, expiresAt, options),
    setHoldsExpiry: (holdIds, expiresAt, options) => setHoldsExpiry(deps, holdIds, expiresAt, options),
    expireHolds: (now, limit) => expireHolds(deps, now, limit),
    openHolds: () => openHolds(deps),
    releasedHoldIds: (holdIds) => releasedHoldIds(deps, holdIds),
    entries: (orgId) => entries(deps, orgId),
    ledgerSum: (orgId) => ledgerSum(deps, orgId),
    checkBalanced: (orgId) => checkBalanced(deps, orgId),
    findUnbalancedAccounts: () => findUnbalancedAccounts(deps),
  };
}
