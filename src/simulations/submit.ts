// POST /v1/simulations (docs/api.md §4.3): admission, the hold and the job in one transaction, then
// a wait of up to wait_seconds; a result ready in time is delivered and charged in the same response.
import { priceOfDrawsMilli } from '../billing/amounts.js';
import { databaseRead, inTransaction, isTransientDatabaseError } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { recordJobMetadata } from '../jobs/batch-store.js';
import { countOpenJobGroups } from '../jobs/job-store.js';
import type { Job } from '../jobs/types.js';
import { findCachedResult } from '../results/result-store.js';
import { assertQueueHasRoom, newJobFor, usageOrg } from './admission.js';
import { deliverJob, type JobOutcome, pendingOutcome } from './deliver.js';
import { prepareRun } from './prepare-run.js';
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
  const { draws } = run;
  const cached = await databaseRead(() =>
    findCachedResult(deps.sql, { cacheKey: run.cacheKey, scope: run.resolved.scope, orgId: caller.org.id }),
  );
  if (!cached) await assertQueueHasRoom(deps);
  const job = await inTransaction(deps.sql, {}, async (tx) => {
    const admission = await deps.usage.admitSubmission(tx, {
      org: usageOrg(caller),
      kind: 'simulation',
      gpuSecondsEstimates: cached || !caller.livemode ? [] : [deps.engine.estimateSeconds(draws)],
      countOpenJobGroups: cached ? undefined : (db) => countOpenJobGroups(db, caller.org.id),
    });
    const newJob = newJobFor(ctx, run, draws, {
      usageDay: admission.day,
      gpuSecondsReserved: admission.gpuSecondsReserved[0] ?? 0,
      cachedResultId: cached?.id ?? null,
    });
    if (caller.livemode) {
      await deps.ledger.reserve(caller.org.id, priceOfDrawsMilli(draws), {
        holdId: newJob.reservationId,
        requestId: ctx.requestId,
        idempotencyKey: ctx.idempotencyKey,
        tx,
      });
    }
    const enqueued = await deps.queue.enqueue(tx, newJob);
    const created = request.metadata ? { ...enqueued, metadata: request.metadata } : enqueued;
    if (request.metadata) await recordJobMetadata(tx, created.id, request.metadata);
    if (ctx.idempotency) await deps.attachJob(tx, ctx.idempotency, { jobId: created.id });
    return created;
  });
  return finish(deps, ctx, job, waitMs);
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
