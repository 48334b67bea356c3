// What every job kind's use cases share (docs/ARCHITECTURE.md, "Job kinds"): the call that submits or
// delivers a job, how long a submission waits for its result, and what a delivery answers. Simulations and
// season projections both take these from here, neither from the other.
import type { Caller } from '../accounts/caller.js';
import type { TransactionSql } from '../db/connection.js';
import { databaseRead } from '../db/transactions.js';
import type { IdempotencyRecord } from '../idempotency/store.js';

/** How long a submission waits for its result unless it asks (docs/api.md: wait_seconds). */
export const DEFAULT_WAIT_SECONDS = 25;
/** The longest a submission (a simulation, a season projection) waits for its result: wait_seconds 0 to 25. */
export const MAX_WAIT_SECONDS = 25;

/** The request that delivers: its id and Idempotency-Key go on the delivery and its charge. */
export interface DeliveryRequest {
  requestId: string;
  idempotencyKey: string | null;
}

/** One call of a use case: who calls, the request id, and the idempotency record of this attempt. */
export interface CallContext extends DeliveryRequest {
  caller: Caller;
  /** The idempotency record of this attempt, when the request carries a key. */
  idempotency: IdempotencyRecord | null;
}

/**
 * The organisation's open job groups of every kind (queued or running; a batch counts once), counted in
 * the admission's transaction for the concurrent-jobs limit (docs/api.md §8); src/wiring.ts adds the
 * kinds' counts.
 */
export type OpenJobGroups = (tx: TransactionSql, orgId: string) => Promise<number>;

/**
 * What a job's result path and its submission's wait answer, whatever its kind: still pending (ask again
 * after `retryAfterSeconds`), or delivered (`D`: the job, what it made and this delivery's facts).
 */
export type DeliveryOutcome<J, D> =
  | { kind: 'pending'; job: J; retryAfterSeconds: number }
  | { kind: 'delivered'; delivered: D };

/**
 * A retry with the same Idempotency-Key that finds the job its earlier attempt delivered: that delivery
 * is this request's outcome, charged as it was (its first answer was lost or was an error), not the same
 * delivery given again for nothing (docs/decisions.md §7). A delivery made through the result path has no
 * key and stays a replay.
 */
export function asThisRequest<
  J,
  D extends { replayed: boolean; delivery: { idempotencyKey: string | null } },
>(request: DeliveryRequest, outcome: DeliveryOutcome<J, D>): DeliveryOutcome<J, D> {
  if (outcome.kind !== 'delivered' || !outcome.delivered.replayed) return outcome;
  const { delivery } = outcome.delivered;
  if (request.idempotencyKey === null || delivery.idempotencyKey !== request.idempotencyKey) return outcome;
  return { kind: 'delivered', delivered: { ...outcome.delivered, replayed: false } };
}

/** How long a submission waits for its job (wait_seconds, DEFAULT_WAIT_SECONDS when not given). */
export function waitMsOf(request: { wait_seconds?: number | undefined }): number {
  return (request.wait_seconds ?? DEFAULT_WAIT_SECONDS) * 1000;
}

/**
 * The job of an earlier attempt with the same Idempotency-Key that created its job (settlement
 * unconfirmed, or the process stopped), read by `read`: the same job and hold give the one true outcome
 * (docs/decisions.md §7). Null for a first attempt.
 */
export async function earlierJobOf<J>(
  ctx: Pick<CallContext, 'idempotency'>,
  read: (jobId: string) => Promise<J | null>,
): Promise<J | null> {
  const jobId = ctx.idempotency?.jobId;
  return jobId ? databaseRead(() => read(jobId)) : null;
}
