// The projection result path (docs/api.md §4.12), as a simulation's (docs/decisions.md §6): delivering a
// finished job settles its hold, records the delivery and marks the job delivered in one transaction,
// through the job system's delivery core (src/jobs/delivery-core.ts); a delivered job is given again,
// charging nothing; a hold that ended first answers reservation_expired.
import { belongsTo } from '../accounts/caller.js';
import type { TransactionSql } from '../db/connection.js';
import { databaseRead, inTransaction } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import type { CallContext, DeliveryOutcome, DeliveryRequest } from '../jobs/call-context.js';
import { settleAndDeliver, withJobRecovery } from '../jobs/delivery-core.js';
import {
  findProjectionDeliveryForJob,
  getProjectionJob,
  insertProjectionDelivery,
  lockProjectionJob,
  type ProjectionDelivery,
  type ProjectionJob,
  setProjectionJobStatus,
} from './projection-store.js';
import type { ProjectionDeps } from './types.js';

export interface DeliveredProjection {
  job: ProjectionJob;
  delivery: ProjectionDelivery;
  /** The job was delivered before: the same delivery is given again and nothing is charged. */
  replayed: boolean;
}

export type ProjectionOutcome = DeliveryOutcome<ProjectionJob, DeliveredProjection>;

/** A queued or running projection is done within seconds: ask again in one. */
const PENDING_RETRY_AFTER_SECONDS = 1;

function pending(job: ProjectionJob): ProjectionOutcome {
  return { kind: 'pending', job, retryAfterSeconds: PENDING_RETRY_AFTER_SECONDS };
}

function isOpen(job: ProjectionJob): boolean {
  return job.status === 'queued' || job.status === 'running';
}

/** Waits up to `waitMs` for the job to finish (the job system's waits); the job as last read. */
export async function waitForProjection(deps: ProjectionDeps, job: ProjectionJob, waitMs: number) {
  if (!isOpen(job) || waitMs <= 0) return job;
  let current = job;
  const read = async () => {
    // A failed read keeps the job as last read; the wait goes on.
    current = (await databaseRead(() => getProjectionJob(deps.sql, job.id)).catch(() => current)) ?? current;
    return current;
  };
  return (await deps.waits.waitUntilDone(job.id, waitMs, read, isOpen)) ?? current;
}

/** GET /v1/projections/jobs/{job_id}?reservation_id=…: only the organisation and key mode that made it. */
export async function deliverProjectionResult(
  deps: ProjectionDeps,
  ctx: CallContext,
  jobId: string,
  reservationId: string,
): Promise<ProjectionOutcome> {
  const job = await databaseRead(() => getProjectionJob(deps.sql, jobId));
  if (!job || !belongsTo(job, ctx.caller) || job.reservationId !== reservationId) {
    throw new ApiError('resource_missing', {
      message: `No projection job ${jobId} with reservation ${reservationId}.`,
    });
  }
  return deliverProjectionJob(deps, ctx, job);
}

export async function deliverProjectionJob(
  deps: ProjectionDeps,
  ctx: DeliveryRequest,
  job: ProjectionJob,
): Promise<ProjectionOutcome> {
  if (isOpen(job)) return pending(job);
  const decided = await inTransaction(deps.sql, { onConnectionLost: 'settlement_unknown' }, (tx) =>
    deliverLocked(deps, ctx, tx, job.id),
  ).catch((error: unknown) => {
    throw withJobRecovery(error, job);
  });
  if (decided === 'pending') return pending(job);
  if (decided === 'expired') {
    throw new ApiError('reservation_expired', {
      message: `The credit hold ${job.reservationId} ended without delivery.`,
      recovery: { job_id: job.id, reservation_id: job.reservationId },
    });
  }
  const charged = decided.delivery.creditsChargedMilli;
  if (!decided.replayed && charged > 0) deps.onCharged?.(charged, true);
  return { kind: 'delivered', delivered: decided };
}

async function deliverLocked(
  deps: ProjectionDeps,
  ctx: DeliveryRequest,
  tx: TransactionSql,
  jobId: string,
): Promise<DeliveredProjection | 'pending' | 'expired'> {
  const job = await lockProjectionJob(tx, jobId);
  if (!job) throw new ApiError('resource_missing', { message: `No projection job ${jobId}.` });
  switch (job.status) {
    case 'queued':
    case 'running':
      return 'pending';
    case 'failed':
      throw new ApiError('projection_failed', {
        message: job.error?.message ?? 'The projection job failed.',
        recovery: { job_id: job.id, reservation_id: job.reservationId },
      });
    case 'expired':
      return 'expired';
    case 'delivered': {
      const delivery = await findProjectionDeliveryForJob(tx, job.id);
      if (!delivery) throw new Error(`projection job ${job.id} is delivered but has no delivery`);
      return { job, delivery, replayed: true };
    }
    case 'succeeded':
      break;
  }
  const settled = await settleAndDeliver(deps, ctx, tx, job, {
    record: (facts) =>
      Promise.all([
        insertProjectionDelivery(tx, { ...facts, id: newId('proj') }),
        setProjectionJobStatus(tx, job.id, 'delivered'),
      ]),
    expire: () => setProjectionJobStatus(tx, job.id, 'expired'),
  });
  if (settled.status === 'expired') return 'expired';
  const [delivery] = settled.recorded;
  return { job: { ...job, status: 'delivered' }, delivery, replayed: false };
}
