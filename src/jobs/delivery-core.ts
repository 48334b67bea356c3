// The delivery of a finished job, whatever its kind (docs/decisions.md §6; docs/ARCHITECTURE.md "Job
// kinds"): in the caller's transaction, with the job locked, its hold is settled, then its delivery is
// recorded and the job marked delivered; a hold that ended first marks the job expired instead. A
// simulation's result path, a batch's results page and a projection's result path all build their
// delivery's facts here and settle by the same rule; what is a kind's own (its delivery table, its status
// change, a simulation's fixture summary) it brings as `record` and `expire`. A delivery's 503 names its
// job the same way for every kind (withJobRecovery).
import type { Owner } from '../accounts/keys.js';
import type { Ledger } from '../billing/ledger.js';
import type { TransactionSql } from '../db/connection.js';
import { ApiError } from '../errors.js';
import type { DeliveryRequest } from './call-context.js';

/** What a delivery settles: the job's hold (its reservation), its organisation and key mode, its price. */
export interface HeldJob extends Owner {
  id: string;
  reservationId: string;
  priceMilli: number;
}

/** A charge as a delivery records it: the amount and the credits left once it was made. */
export interface ChargeFacts {
  amount: number;
  available: number;
}

/** What every kind's delivery record says: whose, of which job, what it charged, for which request. */
export interface DeliveryFacts extends Owner {
  jobId: string;
  creditsChargedMilli: number;
  /** The organisation's available credits right after the charge; null without one (test keys). */
  creditsRemainingMilli: number | null;
  requestId: string;
  idempotencyKey: string | null;
  createdAt: Date;
}

/** Whether the job holds credits to settle: a live key's priced job (a test key's job holds none). */
export function holdsCredits(job: Pick<HeldJob, 'mode' | 'priceMilli'>): boolean {
  return job.mode === 'live' && job.priceMilli > 0;
}

/** The facts of the job's delivery for `request`, charged `charge` (null: nothing to charge). */
export function deliveryFacts(
  job: Pick<HeldJob, 'id' | 'orgId' | 'mode'>,
  request: DeliveryRequest,
  charge: ChargeFacts | null,
  createdAt: Date,
): DeliveryFacts {
  return {
    orgId: job.orgId,
    jobId: job.id,
    mode: job.mode,
    creditsChargedMilli: charge?.amount ?? 0,
    creditsRemainingMilli: charge ? charge.available : null,
    requestId: request.requestId,
    idempotencyKey: request.idempotencyKey,
    createdAt,
  };
}

/** A kind's part of a delivery: its record and its status change, and what it does when the hold ended. */
export interface DeliveryKind<D, E> {
  /** The delivery recorded and the job marked delivered (sent together: they do not depend on each other). */
  record(facts: DeliveryFacts): Promise<D>;
  /** The hold ended before the delivery: the job marked expired. */
  expire(): Promise<E>;
}

export type SettledDelivery<D, E> = { status: 'delivered'; recorded: D } | { status: 'expired'; expired: E };

/**
 * The delivery of a succeeded job its caller has locked, in `tx`: the hold settled, then the kind's
 * record; or its expiry when the hold ended first. The record is sent behind a charge made now (the
 * ledger's `alongside`), so the account, which every delivery of the organisation waits for, stays
 * locked for one round trip fewer (docs/decisions.md §6, "Delivery").
 */
export async function settleAndDeliver<D, E>(
  deps: { ledger: Pick<Ledger, 'settleUnlessEnded'>; clock: () => Date },
  request: DeliveryRequest,
  tx: TransactionSql,
  job: HeldJob,
  kind: DeliveryKind<D, E>,
): Promise<SettledDelivery<D, E>> {
  const now = deps.clock();
  let recorded: Promise<D> | undefined;
  const record = (charge: ChargeFacts | null) =>
    (recorded = kind.record(deliveryFacts(job, request, charge, now)));
  const charge = holdsCredits(job)
    ? await deps.ledger.settleUnlessEnded(job.reservationId, {
        tx,
        orgId: job.orgId,
        requestId: request.requestId,
        idempotencyKey: request.idempotencyKey,
        alongside: record,
      })
    : null;
  if (charge === 'expired') return { status: 'expired', expired: await kind.expire() };
  return { status: 'delivered', recorded: await (recorded ?? record(charge)) };
}

/**
 * A delivery the database did not confirm (settlement_unknown) or could not run (503) names its job, so
 * that a client without an Idempotency-Key can read the one true outcome at its result path
 * (docs/decisions.md §7).
 */
export function withJobRecovery(error: unknown, job: Pick<HeldJob, 'id' | 'reservationId'>): unknown {
  if (!(error instanceof ApiError) || error.status !== 503) return error;
  return new ApiError(error.code, {
    ...error.options,
    message: error.message,
    recovery: { ...error.options.recovery, job_id: job.id, reservation_id: job.reservationId },
  });
}
