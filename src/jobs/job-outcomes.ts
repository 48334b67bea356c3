// What a worker does with a claimed job besides running it: complete it from the result cache when
// another job has finished the same inputs meanwhile, and record the engine's outcome. Exactly once:
// completion locks the job and checks that this worker still holds its lease, and stores the result in
// the same transaction; a worker whose lease ran out finds the job no longer its own and drops it.
import type { Sql } from '../db/connection.js';
import type { EngineJob, RunOutcome, RunSuccess } from '../engine/runner.js';
import {
  cachedKeysAmong,
  findCachedResult,
  insertResults,
  type KnownResults,
  type SimulationResult,
  takeBackResults,
} from '../results/result-store.js';
import { laneOf } from './kind-queue.js';
import type { JobQueue } from './queue.js';
import type { Job } from './types.js';

export interface OutcomeContext {
  queue: JobQueue;
  sql: Sql;
  /** The results rows this process has read or written (src/results/known-results.ts). */
  knownResults: KnownResults;
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
    // The claim reads the payload as its stored text (jobColumns 'engine').
    payloadJson: job.inputs as string,
    dataVersion: job.dataVersion,
    queuedMs: job.startedAt ? Math.max(0, job.startedAt.getTime() - job.createdAt.getTime()) : 0,
    // The engine's turns are by lane, as the claim's order is; a single simulation (its request waits)
    // before the lane's batch items.
    share: { lane: laneOf(job), weight: job.laneWeight ?? 1, interactive: job.batchId === null },
  };
}

/** 'completed' or 'failed' as recorded; 'dropped' when the job was no longer this worker's. */
export type RecordedOutcome = 'completed' | 'failed' | 'dropped';

/**
 * The outcomes of claimed jobs, in order: the failures one by one (rare), the successes together in one
 * transaction, one statement per table (the documents, the jobs and what their ends change), however many
 * there are. A success whose job is no longer this worker's is dropped, and stores nothing.
 */
export async function recordOutcomes(
  ctx: OutcomeContext,
  items: ReadonlyArray<{ job: Job; outcome: RunOutcome | undefined }>,
): Promise<RecordedOutcome[]> {
  const { queue, workerId } = ctx;
  const recorded = new Map<string, RecordedOutcome>();
  const successes: Array<{ job: Job; outcome: RunSuccess }> = [];
  for (const { job, outcome } of items) {
    const given = outcome ?? {
      jobId: job.id,
      error: { code: 'simulation_failed', message: 'The engine gave no outcome.' },
    };
    if ('error' in given) {
      recorded.set(job.id, (await queue.fail(job.id, given.error, { workerId })) ? 'failed' : 'dropped');
    } else {
      successes.push({ job, outcome: given });
    }
  }
  if (successes.length > 0) {
    const stored = await ctx.sql.begin(async (tx) => {
      // The documents first, then the completions: completeMany locks the jobs in id order (so two
      // workers' packs never wait on each other in a circle) and completes those still under this
      // worker's lease. A document stored for a job no longer this worker's (its lease lapsed, or a
      // batch's cancel took it) is taken back before the commit: it stores nothing. Locking the jobs in a
      // statement of their own first, to store only the documents of those still held, cost every
      // store a statement for what a lost lease alone needs (docs/decisions.md §6, "What a batch job
      // costs the host").
      const inserted = await insertResults(
        tx,
        successes.map(({ job, outcome }) => ({
          cacheKey: job.cacheKey,
          scope: job.scope,
          orgId: job.orgId,
          fixtureId: job.fixtureId,
          dataVersion: job.dataVersion,
          draws: job.draws,
          summary: outcome.summary,
          document: outcome.document,
          engine: outcome.engine,
          runMs: outcome.runMs,
          gpuMs: outcome.gpuMs,
        })),
        ctx.clock(),
      );
      const completions = successes.map(({ job, outcome }, i) => ({
        jobId: job.id,
        resultId: inserted.results[i]!.id,
        gpuSecondsUsed: outcome.gpuMs / 1000,
        engine: outcome.engine,
      }));
      const completed = new Set((await queue.completeMany(tx, workerId, completions)).map((job) => job.id));
      const kept = new Set(completions.filter((c) => completed.has(c.jobId)).map((c) => c.resultId));
      const unheld = completions
        .filter((c) => !completed.has(c.jobId) && inserted.newIds.has(c.resultId) && !kept.has(c.resultId))
        .map((c) => c.resultId);
      await takeBackResults(tx, [...new Set(unheld)]);
      return { results: inserted.results.filter((result) => kept.has(result.id)), completed };
    });
    // Remembered once committed (a delivery by this process then reads no document back).
    for (const result of stored.results) ctx.knownResults.remember(result);
    for (const { job } of successes)
      recorded.set(job.id, stored.completed.has(job.id) ? 'completed' : 'dropped');
  }
  return items.map(({ job }) => recorded.get(job.id)!);
}

/**
 * The results already stored for claimed jobs' inputs (another job finished the same meanwhile), by job
 * id, found in one step: one statement says which of their keys are stored, and only those are read
 * (mostly from memory, src/results/known-results.ts). A stored result never changes, so what is found
 * here still holds once the job is locked (completeFromCache).
 */
export async function cachedResultsOf(
  ctx: Pick<OutcomeContext, 'sql' | 'knownResults'>,
  jobs: readonly Job[],
): Promise<Map<string, SimulationResult>> {
  const found = new Map<string, SimulationResult>();
  const keys = await cachedKeysAmong(ctx.sql, jobs);
  for (const job of jobs) {
    if (!keys.has(job.cacheKey)) continue;
    const lookup = { cacheKey: job.cacheKey, scope: job.scope, orgId: job.orgId };
    const result = await findCachedResult(ctx.sql, lookup, ctx.knownResults);
    if (result) found.set(job.id, result);
  }
  return found;
}

/**
 * Completes a claimed job with the stored result of its inputs (cachedResultsOf): true once completed,
 * false when the job is no longer this worker's.
 */
export async function completeFromCache(
  ctx: OutcomeContext,
  job: Job,
  result: Pick<SimulationResult, 'id' | 'engine'>,
  /** Called before the completion commits, so a waiter woken by it sees the count already moved. */
  onCached: () => void,
): Promise<boolean> {
  return ctx.sql.begin(async (tx) => {
    const owned = await ctx.queue.lockOwnedJob(tx, job.id, ctx.workerId);
    if (!owned) return false;
    await ctx.queue.complete(job.id, {
      resultId: result.id,
      gpuSecondsUsed: 0,
      engine: result.engine,
      workerId: ctx.workerId,
      tx,
    });
    onCached();
    return true;
  });
}
