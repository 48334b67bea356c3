// POST /v1/simulations (docs/api.md §4.3): admission, the hold and the job in one transaction, then
// a wait of up to wait_seconds; a result ready in time is delivered and charged in the same response.
import { ownerOf } from '../accounts/caller.js';
import { priceOfDrawsMilli } from '../billing/amounts.js';
import type { TransactionSql } from '../db/connection.js';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  databaseRead,
  inTransaction,
  isTransientDatabaseError,
} from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { asThisRequest, type CallContext, earlierJobOf, waitMsOf } from '../jobs/call-context.js';
import { deliveryFacts } from '../jobs/delivery-core.js';
import type { Job } from '../jobs/types.js';
import { usageOrg } from '../limits/usage.js';
import {
  findCachedResult,
  findDeliveryForJob,
  insertDelivery,
  type SimulationResult,
} from '../results/result-store.js';
import { assertQueueHasRoom, newJobFor } from './admission.js';
import {
  announceDelivery,
  type DeliveredSimulation,
  deliverJob,
  type JobOutcome,
  pendingOutcome,
  recordSummary,
} from './deliver.js';
import { type PreparedRun, prepareRun } from './prepare-run.js';
import { DEFAULT_DRAWS, type SimulationDeps, type SimulationRequest } from './types.js';

export async function submitSimulation(
  deps: SimulationDeps,
  ctx: CallContext,
  request: SimulationRequest,
): Promise<JobOutcome> {
  const waitMs = waitMsOf(request);
  const earlier = await earlierJobOf(ctx, (jobId) => deps.queue.get(jobId));
  if (earlier) return asThisRequest(ctx, await finish(deps, ctx, earlier, waitMs));

  const { caller } = ctx;
  const run = await prepareRun(deps, caller, request, request.draws ?? DEFAULT_DRAWS, '');
  const cached = await databaseRead(() =>
    findCachedResult(
      deps.sql,
      { cacheKey: run.cacheKey, scope: run.resolved.scope, orgId: caller.org.id },
      deps.knownResults,
    ),
  );
  if (cached) return submitCacheHit(deps, ctx, request, run, cached);
  await assertQueueHasRoom(deps);
  const job = await inTransaction(deps.sql, {}, (tx) => createJob(deps, ctx, tx, { run, request }));
  return finish(deps, ctx, job, waitMs);
}

/** Admission, the hold and the queued job in the caller's transaction. */
async function createJob(
  deps: SimulationDeps,
  ctx: CallContext,
  tx: TransactionSql,
  { run, request }: { run: PreparedRun; request: SimulationRequest },
): Promise<Job> {
  const { caller } = ctx;
  const { draws } = run;
  const admission = await deps.usage.admitSubmission(tx, {
    org: usageOrg(caller),
    kind: 'simulation',
    gpuSecondsEstimates: caller.livemode ? [deps.engine.estimateSeconds(draws)] : [],
    countOpenJobGroups: (tx) => deps.openJobGroups(tx, caller.org.id),
  });
  const jobId = newId('job');
  const newJob = newJobFor(ctx, run, draws, {
    id: jobId,
    usageDay: admission.day,
    gpuSecondsReserved: admission.gpuSecondsReserved[0] ?? 0,
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
  // The job's id is chosen above: the idempotency record names it first, and the job is made last, so
  // that the request then stays with the job (made, waited for, delivered).
  if (ctx.idempotency) await deps.attachJob(tx, ctx.idempotency, { jobId });
  return deps.queue.enqueue(tx, newJob);
}

/**
 * A cache hit commits once (docs/decisions.md §6), in as few statements as it can: admission (one guarded
 * upsert), the hold made and settled at once (the account lock and one statement), then the job born
 * delivered, its delivery, the fixture's summary and the idempotency record's job, sent together. Nothing
 * of it exists unless all of it does. A connection lost before the commit was acknowledged is found
 * out (findOutCacheHit); a retry with the same Idempotency-Key finds the job if it committed (and gives
 * its delivery, charged as it was) or submits afresh if it did not.
 */
async function submitCacheHit(
  deps: SimulationDeps,
  ctx: CallContext,
  request: SimulationRequest,
  run: PreparedRun,
  result: SimulationResult,
): Promise<JobOutcome> {
  const { caller } = ctx;
  const now = deps.clock();
  const jobId = newId('job');
  const newJob = newJobFor(ctx, run, run.draws, {
    id: jobId,
    gpuSecondsReserved: 0,
    cachedResultId: result.id,
    deliveredAtSubmission: true,
    metadata: request.metadata ?? null,
    // It never runs: its row keeps what its deliveries show, not the engine's inputs.
    inputs: { request: run.payload.request },
  });
  const commit = inTransaction(deps.sql, { onConnectionLost: 'settlement_unknown' }, async (tx) => {
    const admission = await deps.usage.admitSubmission(tx, {
      org: usageOrg(caller),
      kind: 'simulation',
      gpuSecondsEstimates: [],
    });
    const settled = caller.livemode
      ? await deps.ledger.settleAtOnce(caller.org.id, newJob.priceMilli, {
          holdId: newJob.reservationId,
          requestId: ctx.requestId,
          idempotencyKey: ctx.idempotencyKey,
          tx,
        })
      : null;
    const charge = settled && { amount: settled.charge.amount, available: settled.available };
    const delivery = {
      ...deliveryFacts({ id: jobId, ...ownerOf(caller) }, ctx, charge, now),
      id: newId('sim'),
      resultId: result.id,
    };
    // Sent together (pipelined, one round trip): they do not depend on each other. A connection lost
    // while they are in flight rejects every one of them (patches/postgres+3.4.9.patch, fifth fix; the
    // fault test test/faults/one-commit.test.ts cuts the connection before and after each).
    const summary = recordSummary(tx, {
      job: {
        scope: run.resolved.scope,
        mode: caller.mode,
        fixtureId: run.fixture.fixtureId,
        dataVersion: run.fixture.dataVersion,
        draws: run.draws,
        inputs: run.payload,
      },
      delivery,
      result,
    });
    const attached = ctx.idempotency ? deps.attachJob(tx, ctx.idempotency, { jobId }) : null;
    const [job, stored] = await Promise.all([
      deps.queue.enqueue(tx, { ...newJob, usageDay: admission.day }),
      insertDelivery(tx, delivery),
      summary,
      attached,
    ]);
    return { job, result, delivery: stored, replayed: false };
  });
  const delivered = await commit.catch((error: unknown) =>
    findOutCacheHit(deps, ctx, { jobId, reservationId: newJob.reservationId, result }, error),
  );
  announceDelivery(deps, delivered);
  return { kind: 'delivered', delivered };
}

/** The ids a cache hit's submission chose for its job and hold, and the result it delivers. */
interface CacheHitIds {
  jobId: string;
  reservationId: string;
  result: SimulationResult;
}

/**
 * The cache hit's commit was not acknowledged (settlement_unknown): whether it happened is read back on
 * another connection before anything is answered (docs/decisions.md §7). Committed: its delivery is this
 * request's answer, charged as it was. Not committed: nothing of it exists, so the answer says nothing was
 * charged and names no job. Not readable either: settlement_unknown naming no job (it may not exist); a
 * retry with the same Idempotency-Key finds it through the record, which the same commit named it in.
 */
async function findOutCacheHit(
  deps: SimulationDeps,
  ctx: CallContext,
  attempt: CacheHitIds,
  error: unknown,
): Promise<DeliveredSimulation> {
  if (!(error instanceof ApiError) || error.code !== 'settlement_unknown') throw error;
  const found = await inTransaction(deps.sql, {}, (tx) => committedCacheHit(deps, ctx, tx, attempt)).catch(
    () => {
      throw error;
    },
  );
  if (found === 'absent') {
    throw new ApiError('dependency_unavailable', {
      message:
        'The connection to the database was lost before the simulation was stored; nothing was charged.',
      retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
      internal: error.options.internal,
    });
  }
  return found;
}

/**
 * What became of a cache hit whose commit was not acknowledged. A live one's hold is read through
 * `settle`, which locks the organisation's account first: a transaction of it the server is still
 * finishing ends before the hold is read, so the answer is final (a settled hold is answered, changing
 * nothing; a missing one is resource_missing). Then the job and its delivery, by the ids this request chose.
 */
async function committedCacheHit(
  deps: SimulationDeps,
  ctx: CallContext,
  tx: TransactionSql,
  { jobId, reservationId, result }: CacheHitIds,
): Promise<DeliveredSimulation | 'absent'> {
  if (ctx.caller.livemode) {
    const hold = await deps.ledger
      .settle(reservationId, {
        tx,
        orgId: ctx.caller.org.id,
        requestId: ctx.requestId,
        idempotencyKey: ctx.idempotencyKey,
      })
      .catch((error: unknown) => {
        if (error instanceof ApiError && error.code === 'resource_missing') return null;
        throw error;
      });
    if (!hold) return 'absent';
  }
  const [job, delivery] = await Promise.all([deps.queue.get(jobId, { tx }), findDeliveryForJob(tx, jobId)]);
  if (!job || !delivery) return 'absent';
  return { job, result, delivery, replayed: delivery.requestId !== ctx.requestId };
}

/** A shared live result shows on its fixture as the latest summary (docs/api.md §2.2). */
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
