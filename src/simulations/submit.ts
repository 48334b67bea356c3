// POST /v1/simulations (docs/api.md §4.3): admission, the hold and the job in one transaction, then
// a wait of up to wait_seconds; a result ready in time is delivered and charged in the same response.
import { priceOfDrawsMilli } from '../billing/amounts.js';
import type { TransactionSql } from '../db/connection.js';
import { databaseRead, inTransaction, isTransientDatabaseError } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { countOpenJobGroups } from '../jobs/job-store.js';
import type { Job } from '../jobs/types.js';
import { findCachedResult } from '../results/result-store.js';
import { assertQueueHasRoom, newJobFor, usageOrg } from './admission.js';
import {
  committedOutcome,
  deliverInTransaction,
  deliverJob,
  type JobOutcome,
  pendingOutcome,
  withJobRecovery,
} from './deliver.js';
import { type PreparedRun, prepareRun } from './prepare-run.js';
import {
  type CallContext,
  DEFAULT_DRAWS,
  DEFAULT_WAIT_SECONDS,
  type SimulationDeps,
  type SimulationRequest,
} from './types.js';

export async function submitSimulation(
  deps: SimulationDeps,
  ctx: CallContext,
  request: SimulationRequest,
): Promise<JobOutcome> {
  const waitMs = (request.wait_seconds ?? DEFAULT_WAIT_SECONDS) * 1000;
  // A retry of an attempt that created its job (settlement unconfirmed, or the process stopped):
  // the same job and hold give the one true outcome (docs/decisions.md §7).
  const earlierId = ctx.idempotency?.jobId;
  const earlier = earlierId ? await databaseRead(() => deps.queue.get(earlierId)) : null;
  if (earlier) return finish(deps, ctx, earlier, waitMs);

  const { caller } = ctx;
  const run = await prepareRun(deps, caller, request, request.draws ?? DEFAULT_DRAWS, '');
  const cached = await databaseRead(() =>
    findCachedResult(deps.sql, { cacheKey: run.cacheKey, scope: run.resolved.scope, orgId: caller.org.id }),
  );
  if (cached) return submitCacheHit(deps, ctx, request, run, cached.id);
  await assertQueueHasRoom(deps);
  const job = await inTransaction(deps.sql, {}, (tx) =>
    createJob(deps, ctx, tx, { run, request, cachedResultId: null }),
  );
  return finish(deps, ctx, job, waitMs);
}

/**
 * Admission, the hold and the job in the caller's transaction; a cache hit's job is born succeeded
 * with `cachedResultId` as its result.
 */
async function createJob(
  deps: SimulationDeps,
  ctx: CallContext,
  tx: TransactionSql,
  what: { run: PreparedRun; request: SimulationRequest; cachedResultId: number | null },
): Promise<Job> {
  const { caller } = ctx;
  const { run, request, cachedResultId } = what;
  const cached = cachedResultId != null;
  const { draws } = run;
  const admission = await deps.usage.admitSubmission(tx, {
    org: usageOrg(caller),
    kind: 'simulation',
    gpuSecondsEstimates: cached || !caller.livemode ? [] : [deps.engine.estimateSeconds(draws)],
    countOpenJobGroups: cached ? undefined : (db) => countOpenJobGroups(db, caller.org.id),
  });
  const newJob = newJobFor(ctx, run, draws, {
    id: newId('job'),
    usageDay: admission.day,
    gpuSecondsReserved: admission.gpuSecondsReserved[0] ?? 0,
    cachedResultId,
    metadata: request.metadata ?? null,
  });
  if (caller.livemode) {
    await deps.ledger.reserve(caller.org.id, priceOfDrawsMilli(draws), {
      holdId: newJob.reservationId,
      requestId: ctx.requestId,
      idempotencyKey: ctx.idempotencyKey,
      tx,
    });
  }
  const created = await deps.queue.enqueue(tx, newJob);
  if (ctx.idempotency) await deps.attachJob(tx, ctx.idempotency, { jobId: created.id });
  return created;
}

/**
 * A cache hit commits once (docs/decisions.md §6): admission, hold, job, settlement, delivery and the
 * fixture's summary in one transaction, so nothing of it exists unless all of it does. A connection lost
 * before the commit was acknowledged is settlement_unknown; a retry with the same Idempotency-Key finds
 * the job if it committed (and gives its delivery again) or submits afresh if it did not.
 */
async function submitCacheHit(
  deps: SimulationDeps,
  ctx: CallContext,
  request: SimulationRequest,
  run: PreparedRun,
  resultId: number,
): Promise<JobOutcome> {
  let job: Job | null = null;
  const decision = await inTransaction(deps.sql, { onConnectionLost: 'settlement_unknown' }, async (tx) => {
    job = await createJob(deps, ctx, tx, { run, request, cachedResultId: resultId });
    return deliverInTransaction(deps, ctx, tx, job.id);
  }).catch((error: unknown) => {
    throw job ? withJobRecovery(error, job) : error;
  });
  return committedOutcome(deps, decision);
}

async function finish(deps: SimulationDeps, ctx: CallContext, job: Job, waitMs: number): Promise<JobOutcome> {
  let current: Job | null = job;
  if ((job.status === 'queued' || job.status === 'running') && waitMs > 0) {
    // The job exists: a database that stops answering during the wait still leaves the client its
    // result_url (a 202) rather than an error that hides the job.
    current = await deps.queue.waitFor(job.id, waitMs).catch((error: unknown) => {
      if (isTransientDatabaseError(error)) return job;
      throw error;
    });
  }
  if (!current) throw new ApiError('resource_missing', { message: `No simulation job ${job.id}.` });
  if (current.status === 'queued' || current.status === 'running') return pendingOutcome(deps, current);
  return deliverJob(deps, ctx, current);
}
