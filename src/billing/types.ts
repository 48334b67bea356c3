// The ledger's records and the options of its operations (see ledger.ts).
import type { Sql, TransactionSql } from '../db/connection.js';

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

/** A credit_holds row. */
export interface Hold {
  id: string;
  orgId: string;
  amount: number;
  monthlyPart: number;
  topupPart: number;
  /** The billing period whose monthly credits back monthlyPart. */
  periodStart: Date;
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

/** A credit_ledger row. */
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
  /**
   * The hold's organisation when the caller knows it (a job names its organisation): the account is
   * then locked without first reading the hold's organisation. A hold of another organisation is
   * refused as unknown.
   */
  orgId?: string | undefined;
  /**
   * The caller's statements that depend only on the charge's amount and the credits available (a
   * delivery's row, its job's new status): started right behind the charge's statement, before it is
   * answered, so that they share its round trip while the account is locked, and awaited with it. Called
   * only when a pending hold is charged by this call.
   */
  alongside?: ((charge: { amount: number; available: number }) => Promise<unknown>) | undefined;
}

/** A settled hold's charge and the organisation's available credits once it is settled. */
export interface SettledCharge extends Charge {
  /** Unchanged by the settlement itself (held credits become spent ones), as under its account lock. */
  available: number;
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

export interface LedgerDeps {
  sql: Sql;
  clock: () => Date;
  /** Told of every charge in its transaction (the webhooks' credits.low, src/webhooks/outbox.ts). */
  balanceWatch?: BalanceWatch | undefined;
}

/** A charge moved an organisation's balance (monthly + top-up remaining) from `beforeMilli` to `afterMilli`. */
export interface BalanceLowered {
  orgId: string;
  beforeMilli: number;
  afterMilli: number;
}

export interface BalanceWatch {
  balanceLowered(tx: TransactionSql, change: BalanceLowered): Promise<void>;
}
