// POST /v1/projections (docs/api.md §4.12), as POST /v1/simulations: admission, the hold and the job in
// one transaction, then a wait of up to wait_seconds; a projection ready in time is delivered and charged
// in the same response, else the job (202) whose result path delivers it. A retry with the same
// Idempotency-Key continues with the job its first attempt created (docs/decisions.md §7).
import { ownerOf } from '../accounts/caller.js';
import type { TransactionSql } from '../db/connection.js';
import { inTransaction } from '../db/transactions.js';
import { newId } from '../ids.js';
import { asThisRequest, type CallContext, earlierJobOf, waitMsOf } from '../jobs/call-context.js';
import { announceQueued } from '../jobs/job-news.js';
import { usageOrg } from '../limits/usage.js';
import { deliverProjectionJob, type ProjectionOutcome, waitForProjection } from './deliver.js';
import { projectionIdentity } from './projection-identity.js';
import {
  findStoredProjection,
  getProjectionJob,
  insertProjectionJob,
  type ProjectionJob,
  toStoredSeason,
} from './projection-store.js';
import { preparedProjection } from './quote.js';
import type { ProjectionDeps, ProjectionRequest } from './types.js';

export async function submitProjection(
  deps: ProjectionDeps,
  ctx: CallContext,
  request: ProjectionRequest,
): Promise<ProjectionOutcome> {
  const waitMs = waitMsOf(request);
  const earlier = await earlierJobOf(ctx, (jobId) => getProjectionJob(deps.sql, jobId));
  if (earlier) return finish(deps, ctx, earlier, waitMs);
  const job = await createProjectionJob(deps, ctx, request);
  return finish(deps, ctx, job, waitMs);
}

/**
 * Admission, the hold of a live key and the job: queued, or born succeeded with the table an earlier job
 * of the same identity stored (docs/decisions.md §12), which then opens no job and is delivered at once,
 * charged as a run is. A queued job counts its open jobs with the simulations'.
 */
async function createProjectionJob(
  deps: ProjectionDeps,
  ctx: CallContext,
  request: ProjectionRequest,
): Promise<ProjectionJob> {
  const { caller } = ctx;
  const { season, seasons, priceMilli } = await preparedProjection(deps, caller, request);
  const inputs = toStoredSeason(season);
  const identity = projectionIdentity(inputs, seasons);
  return inTransaction(deps.sql, {}, async (tx) => {
    const stored = await findStoredProjection(tx, identity.cacheKey, caller.mode);
    await deps.usage.admitSubmission(tx, {
      org: usageOrg(caller),
      kind: 'simulation',
      // Projections run on the CPU: they take nothing from the daily GPU-seconds budget.
      gpuSecondsEstimates: [],
      // A stored table opens no job: only the daily submissions ceiling applies, as to a cache hit.
      ...(stored
        ? {}
        : {
            countOpenJobGroups: (db: TransactionSql) => deps.openJobGroups(db, caller.org.id),
          }),
    });
    const reservationId = newId('res');
    if (priceMilli > 0) {
      await deps.ledger.reserve(caller.org.id, priceMilli, {
        holdId: reservationId,
        requestId: ctx.requestId,
        idempotencyKey: ctx.idempotencyKey,
        tx,
      });
    }
    const now = deps.clock();
    const job = await insertProjectionJob(
      tx,
      {
        id: newId('pjob'),
        ...ownerOf(caller),
        reservationId,
        competitionId: season.competition.competitionId,
        dataVersion: season.dataVersion,
        seasons,
        seed: identity.seed,
        cacheKey: identity.cacheKey,
        inputs,
        priceMilli,
        createdAt: now,
        requestId: ctx.requestId,
        idempotencyKey: ctx.idempotencyKey,
      },
      stored && { result: stored, now },
    );
    if (ctx.idempotency) await deps.attachJob(tx, ctx.idempotency, { jobId: job.id });
    if (!stored) {
      await announceQueued(deps.waits, tx);
      return job;
    }
    // Born succeeded, as the worker leaves a job it ran: its event, and its hold's end should the
    // delivery that follows not happen (the result path still delivers it until then).
    await deps.events?.projectionSucceeded(tx, job);
    if (priceMilli > 0) {
      await deps.ledger.setHoldExpiry(reservationId, new Date(now.getTime() + deps.holdTtlSeconds * 1000), {
        tx,
      });
    }
    return job;
  });
}

async function finish(
  deps: ProjectionDeps,
  ctx: CallContext,
  job: ProjectionJob,
  waitMs: number,
): Promise<ProjectionOutcome> {
  const current = await waitForProjection(deps, job, waitMs);
  return asThisRequest(ctx, await deliverProjectionJob(deps, ctx, current));
}
