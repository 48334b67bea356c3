// What a worker does with a claimed job besides running it: complete it from the result cache when
// another job has finished the same inputs meanwhile, and record the engine's outcome. Exactly once:
// completion locks the job and checks that this worker still holds its lease, and stores the result in
// the same transaction; a worker whose lease ran out finds the job no longer its own and drops it.
import type { Sql } from '../db/connection.js';
import type { EngineJob, JobPayload, RunOutcome } from '../engine/runner.js';
import { knownResultsOf } from '../results/known-results.js';
import { findCachedResult, storeResult } from '../results/result-store.js';
import type { JobQueue } from './queue.js';
import type { Job } from './types.js';

export interface OutcomeContext {
  queue: JobQueue;
  sql: Sql;
  workerId: string;
  clock: () => Date;
}

/** A claimed job as the engine sees it (jobs.inputs holds the engine's payload). */
export function engineJob(job: Job): EngineJob {
  return {
    id: job.id,
    mode: job.mode,
    draws: job.draws,
    seed: job.seed,
    payload: job.inputs as JobPayload,
    dataVersion: job.dataVersion,
    queuedMs: job.startedAt ? Math.max(0, job.startedAt.getTime() - job.createdAt.getTime()) : 0,
  };
}

/** 'completed' or 'failed' as recorded; 'dropped' when the job was no longer this worker's. */
export type RecordedOutcome = 'completed' | 'failed' | 'dropped';

export async function recordOutcome(
  ctx: OutcomeContext,
  job: Job,
  outcome: RunOutcome | undefined,
): Promise<RecordedOutcome> {
  const { queue, workerId } = ctx;
  const given = outcome ?? {
    jobId: job.id,
    error: { code: 'simulation_failed', message: 'The engine gave no outcome.' },
  };
  if ('error' in given) {
    return (await queue.fail(job.id, given.error, { workerId })) ? 'failed' : 'dropped';
  }
  const recorded = await ctx.sql.begin(async (tx) => {
    const owned = await queue.lockOwnedJob(tx, job.id, workerId);
    if (!owned) return null;
    const result = await storeResult(
      tx,
      {
        cacheKey: owned.cacheKey,
        scope: owned.scope,
        orgId: owned.orgId,
        fixtureId: owned.fixtureId,
        dataVersion: owned.dataVersion,
        draws: owned.draws,
        summary: given.summary,
        documentJson: given.documentJson,
        engine: given.engine,
        runMs: given.runMs,
        gpuMs: given.gpuMs,
      },
      ctx.clock(),
    );
    const completed = await queue.complete(job.id, {
      resultId: result.id,
      gpuSecondsUsed: given.gpuMs / 1000,
      engine: given.engine,
      workerId,
      tx,
    });
    return { result, completed };
  });
  // Remembered once committed (a delivery by this process then reads no document back).
  if (recorded) knownResultsOf(ctx.sql).remember(recorded.result);
  return recorded?.completed ? 'completed' : 'dropped';
}

/**
 * Completes the job from the cache when its inputs were finished meanwhile: 'cached' then, 'gone' when
 * the job is no longer this worker's, 'run' when the engine must run it.
 */
export async function completeFromCache(
  ctx: OutcomeContext,
  job: Job,
  /** Called before the completion commits, so a waiter woken by it sees the count already moved. */
  onCached: () => void,
): Promise<'cached' | 'gone' | 'run'> {
  return ctx.sql.begin(async (tx) => {
    const owned = await ctx.queue.lockOwnedJob(tx, job.id, ctx.workerId);
    if (!owned) return 'gone';
    const cached = await findCachedResult(
      tx,
      { cacheKey: owned.cacheKey, scope: owned.scope, orgId: owned.orgId },
      knownResultsOf(ctx.sql),
    );
    if (!cached) return 'run';
    await ctx.queue.complete(job.id, {
      resultId: cached.id,
      gpuSecondsUsed: 0,
      engine: cached.engine,
      workerId: ctx.workerId,
      tx,
    });
    onCached();
    return 'cached';
  });
}
