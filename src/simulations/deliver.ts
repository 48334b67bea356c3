// The result path (docs/decisions.md §6): delivering a finished job settles its hold, records the
// delivery and marks the job delivered in one transaction. When the database does not acknowledge that
// transaction the outcome is unknown to us too: settlement_unknown, and a retry (same job, same hold)
// gives the one true outcome. A delivered job is given again, charging nothing.
import { ownerOf } from '../accounts/caller.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { databaseRead, inTransaction } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { type FixtureSummary, recordFixtureSummary } from '../fixtures/fixture-list.js';
import { newId } from '../ids.js';
import type { CallContext, DeliveryOutcome, DeliveryRequest } from '../jobs/call-context.js';
import { settleAndDeliver, withJobRecovery } from '../jobs/delivery-core.js';
import type { Job } from '../jobs/types.js';
import {
  type Delivery,
  findDeliveryForJob,
  getResult,
  insertDelivery,
  type SimulationResult,
} from '../results/result-store.js';
import { retryAfterSeconds } from './retry-advice.js';
import type { RunPayload } from './run-payload.js';
import type { SimulationDeps } from './types.js';

/** What delivery needs: the database, the ledger, the clock, and the engine for retry advice. */
export type DeliveryDeps = Pick<
  SimulationDeps,
  'sql' | 'ledger' | 'queue' | 'knownResults' | 'clock' | 'engine' | 'onCharged' | 'onSummariesChanged'
>;

/** A delivered simulation: its job, the document and this delivery's facts. */
export interface DeliveredSimulation {
  job: Job;
  result: SimulationResult;
  delivery: Delivery;
  /** The job was delivered before: the same delivery is given again and nothing is charged. */
  replayed: boolean;
}

export type JobOutcome = DeliveryOutcome<Job, DeliveredSimulation>;

/** How long a client should wait before asking again for a job that is not finished. */
export function pendingOutcome(deps: Pick<SimulationDeps, 'engine'>, job: Job): JobOutcome {
  const seconds = retryAfterSeconds(deps.engine, job.draws - job.drawsDone, job.status === 'queued');
  return { kind: 'pending', job, retryAfterSeconds: seconds };
}

/** GET /v1/simulations/jobs/{job_id}?reservation_id=…: only the organisation and key mode that made it. */
export async function deliverResult(
  deps: DeliveryDeps,
  ctx: CallContext,
  jobId: string,
  reservationId: string,
): Promise<JobOutcome> {
  const owner = { ...ownerOf(ctx.caller), reservationId };
  const job = await databaseRead(() => deps.queue.getOwned(jobId, owner));
  if (!job) {
    throw new ApiError('resource_missing', {
      message: `No simulation job ${jobId} with reservation ${reservationId}.`,
    });
  }
  // Only a succeeded job's delivery changes anything (its hold settled, the job marked delivered), so only
  // it is locked in a transaction; any other status is answered from the row as read. A client polling an
  // open job's result path costs one statement, not a transaction's three round trips (BEGIN, the lock,
  // COMMIT) besides; a delivered job's delivery, which never changes once made, is read as it is.
  const asRead = await databaseRead(() => outcomeAsRead(deps, deps.sql, job)).catch((error: unknown) => {
    throw withJobRecovery(error, job);
  });
  return asRead ? committedOutcome(deps, asRead) : deliverJob(deps, ctx, job);
}

export type LockedOutcome =
  | { status: 'pending'; job: Job }
  | { status: 'expired'; job: Job }
  | { status: 'delivered'; delivered: DeliveredSimulation };

/** Settles and delivers a finished job, gives a delivered one again, or reports a pending one. */
export async function deliverJob(deps: DeliveryDeps, ctx: DeliveryRequest, job: Job): Promise<JobOutcome> {
  const outcome = await inTransaction(deps.sql, { onConnectionLost: 'settlement_unknown' }, (tx) =>
    deliverInTransaction(deps, ctx, tx, job.id),
  ).catch((error: unknown) => {
    throw withJobRecovery(error, job);
  });
  return committedOutcome(deps, outcome);
}

/** What a delivery transaction decided, once it has committed. */
export type DeliveryDecision = LockedOutcome;

/** The answer to a delivery transaction that committed: pending, reservation_expired or delivered. */
export function committedOutcome(deps: DeliveryDeps, outcome: DeliveryDecision): JobOutcome {
  if (outcome.status === 'pending') return pendingOutcome(deps, outcome.job);
  if (outcome.status === 'expired') {
    throw new ApiError('reservation_expired', {
      message: `The credit hold ${outcome.job.reservationId} ended without delivery.`,
      recovery: { job_id: outcome.job.id, reservation_id: outcome.job.reservationId },
    });
  }
  announceDelivery(deps, outcome.delivered);
  return { kind: 'delivered', delivered: outcome.delivered };
}

/** After a delivery's commit: the credits metric, and the fixture list shows the new summary. */
export function announceDelivery(deps: DeliveryDeps, delivered: DeliveredSimulation): void {
  announceDeliveries(deps, [delivered]);
}

/**
 * After the commit of several deliveries (a page of a batch's results stream): each charge counted, and
 * the fixture caches emptied once for all of them (read-cache.ts), not once per item.
 */
export function announceDeliveries(deps: DeliveryDeps, deliveries: readonly DeliveredSimulation[]): void {
  let summaryChanged = false;
  for (const delivered of deliveries) {
    if (delivered.replayed) continue;
    if (delivered.delivery.creditsChargedMilli > 0)
      deps.onCharged?.(delivered.delivery.creditsChargedMilli, true);
    if (delivered.job.scope === 'shared' && delivered.job.mode === 'live') summaryChanged = true;
  }
  // The fixture list shows the new summaries: at once here (the read cache's lists are emptied), within
  // the cache's lifetime elsewhere.
  if (summaryChanged) deps.onSummariesChanged?.();
}

/**
 * The delivery's statements in the caller's transaction: the job locked, its hold settled, the delivery
 * recorded, the job marked delivered and the fixture's summary updated, all committed together (a
 * cache hit's submission runs them in its own transaction: one commit per request, docs/decisions.md §6).
 */
export async function deliverInTransaction(
  deps: DeliveryDeps,
  ctx: DeliveryRequest,
  tx: TransactionSql,
  jobId: string,
): Promise<LockedOutcome> {
  const job = await deps.queue.lockForDelivery(tx, jobId);
  if (!job) throw new ApiError('resource_missing', { message: `No simulation job ${jobId}.` });
  return deliverLockedJob(deps, ctx, tx, job);
}

/**
 * The delivery of a job its caller has locked (`queue.lockForDelivery`, or a page's `queue.lockManyForDelivery`):
 * the account is locked only after the job, by every delivery, so deliveries never wait for each other
 * in a circle (docs/decisions.md §6).
 */
export async function deliverLockedJob(
  deps: DeliveryDeps,
  ctx: DeliveryRequest,
  tx: TransactionSql,
  job: Job,
): Promise<LockedOutcome> {
  const asRead = await outcomeAsRead(deps, tx, job);
  if (asRead) return asRead;
  const result = await getResult(tx, job.resultId!, deps.knownResults);
  if (!result) throw new ApiError('payload_missing', { message: `The result of ${job.id} is missing.` });
  const settled = await settleAndDeliver(deps, ctx, tx, job, {
    // The delivery, the job's new status and the fixture's summary do not depend on each other: sent
    // together (pipelined, one round trip; a lost connection rejects them all, patches/postgres+3.4.9.patch).
    record: (facts) => {
      const delivery = { ...facts, id: newId('sim'), resultId: result.id };
      return Promise.all([
        insertDelivery(tx, delivery),
        deps.queue.markDeliveryOutcome(tx, job.id, 'delivered'),
        recordSummary(tx, { job, result, delivery }),
      ]);
    },
    expire: () => deps.queue.markDeliveryOutcome(tx, job.id, 'expired'),
  });
  if (settled.status === 'expired') return { status: 'expired', job: settled.expired };
  const [stored, delivered] = settled.recorded;
  return { status: 'delivered', delivered: { job: delivered, result, delivery: stored, replayed: false } };
}

/** What a job's status answers by itself, with no delivery to read or make. */
export type StatusOutcome =
  | { status: 'pending'; job: Job }
  | { status: 'expired'; job: Job }
  | { status: 'ended'; job: Job; error: ApiError };

/**
 * The answer of a job whose status gives it alone: an open job is pending, a failed or cancelled one has
 * its error, an expired one is reservation_expired. Null for a succeeded job (its delivery settles it)
 * and a delivered one (its delivery is read again). The result path (outcomeAsRead) and a page of the
 * results stream (deliver-page.ts `pageAsRead`) both answer through it.
 */
export function statusOutcome(job: Job): StatusOutcome | null {
  switch (job.status) {
    case 'succeeded':
    case 'delivered':
      return null;
    case 'queued':
    case 'running':
      return { status: 'pending', job };
    case 'failed':
    case 'cancelled':
      return { status: 'ended', job, error: endedWithoutDocument(job) };
    case 'expired':
      return { status: 'expired', job };
  }
}

/**
 * What a job that is not succeeded answers: its delivery changes nothing (an open job is pending, an ended
 * one has its error, a delivered one gives its delivery again), so the row as read gives it, locked or not.
 * Null for a succeeded job, which only its delivery settles.
 */
async function outcomeAsRead(
  deps: DeliveryDeps,
  db: Sql | TransactionSql,
  job: Job,
): Promise<LockedOutcome | null> {
  if (job.status === 'succeeded') return null;
  if (job.status === 'delivered') {
    return { status: 'delivered', delivered: await previousDelivery(deps, db, job) };
  }
  const outcome = statusOutcome(job)!;
  if (outcome.status === 'ended') throw outcome.error;
  return outcome;
}

/** The error of a job that ended without a document: simulation_failed, or simulation_cancelled. */
export function endedWithoutDocument(job: Job): ApiError {
  const recovery = { job_id: job.id, reservation_id: job.reservationId };
  if (job.status === 'cancelled') {
    return new ApiError('simulation_cancelled', {
      message: `The job ${job.id} was cancelled with its batch before it ran; its hold was released.`,
      recovery,
    });
  }
  return new ApiError('simulation_failed', {
    message: job.error?.message ?? 'The simulation job failed.',
    recovery,
  });
}

async function previousDelivery(
  deps: DeliveryDeps,
  db: Sql | TransactionSql,
  job: Job,
): Promise<DeliveredSimulation> {
  const delivery = await findDeliveryForJob(db, job.id);
  if (!delivery) throw new Error(`job ${job.id} is delivered but has no delivery`);
  const result = await getResult(db, delivery.resultId, deps.knownResults);
  if (!result) throw new ApiError('payload_missing', { message: `The result of ${job.id} is missing.` });
  return { job, result, delivery, replayed: true };
}

/** What a delivery's fixture summary says of its run. */
/** `inputs`: the job's payload, or its `{request}` part (an in-play run records no summary). */
export type SummaryFacts = Pick<Job, 'scope' | 'mode' | 'fixtureId' | 'dataVersion' | 'draws' | 'inputs'>;

/** What a delivery's fixture summary is made of. */
export interface SummarySource {
  job: SummaryFacts;
  delivery: Pick<Delivery, 'id' | 'createdAt'>;
  result: SimulationResult;
}

/**
 * The fixture list shows the latest shared live simulation of a fixture's data_version: the summary a
 * delivery writes, or null when it writes none (a private or test run).
 */
export function summaryOf({ job, delivery, result }: SummarySource): FixtureSummary | null {
  if (job.scope !== 'shared' || job.mode !== 'live') return null;
  const request = (job.inputs as Partial<RunPayload> | null)?.request;
  if (request?.in_play || request?.fitted) return null;
  return {
    fixtureId: job.fixtureId,
    dataVersion: job.dataVersion,
    simulationId: delivery.id,
    createdAt: delivery.createdAt,
    draws: job.draws,
    ...result.summary,
  };
}

/**
 * The summary is written in the delivery's transaction (an upsert that keeps the newest), so it commits
 * with it. The one writer of it: the result path's delivery and a cache hit's submission (submit.ts) call
 * this, a page of the results stream writes its summaries in one statement (deliver-page.ts).
 */
export async function recordSummary(tx: TransactionSql, source: SummarySource): Promise<void> {
  const summary = summaryOf(source);
  if (summary) await recordFixtureSummary(tx, summary);
}
