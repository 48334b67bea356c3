// The simulation kind's handler (docs/decisions.md §6) on the worker of every kind (kind-worker.ts: claims
// in packs bounded by draws, heartbeat, maintenance, drain): runs each claimed pack through the injected
// engine, answers from the result cache the jobs another finished meanwhile, marks a batch's items
// started just before the engine begins them (a cancel takes those not started), and hands each outcome
// to the outcome store (outcome-store.ts), which completes its job exactly once, under the lease
// (job-outcomes.ts). The engine may run a job twice after a crash, but only one run completes it, and
// money moves only at delivery. Its worker also does the queue's chores: rescuing lapsed leases and
// sweeping ended holds.
import type { Sql } from '../db/connection.js';
import type { RunBatch, RunContext, RunOutcome } from '../engine/runner.js';
import { makeKnownResults } from '../results/known-results.js';
import type { KnownResults, SimulationResult } from '../results/result-store.js';
import {
  cachedResultsOf,
  completeFromCache,
  engineJob,
  type OutcomeContext,
  type RecordedOutcome,
} from './job-outcomes.js';
import { type HeldJobs, type KindWorker, startKindWorker } from './kind-worker.js';
import { makeOutcomeStore, type OutcomeStore, STORE_GATHER_MS } from './outcome-store.js';
import type { JobQueue } from './queue.js';
import type { HoldSweeper } from './sweeper.js';
import type { Job, WorkerLogger } from './types.js';

export interface WorkerOptions {
  queue: JobQueue;
  sql: Sql;
  /**
   * The results rows this process has read or written (src/results/known-results.ts), shared with its
   * deliveries (src/wiring.ts), so that a result this worker stored is delivered without reading it back;
   * default a cache of the worker's own.
   */
  knownResults?: KnownResults;
  /** The engine (src/engine/runner.ts), injected: one outcome per job (missing ones fail their job). */
  runBatch: RunBatch;
  clock?: () => Date;
  workerId: string;
  /** Jobs in flight at most; a claim takes up to the free slots at once. */
  concurrency?: number;
  /**
   * Draws in flight at most (claimed, not yet stored), read before each claim: what the engine can start
   * soon (src/engine/runner.ts drawsAhead; WORKER_CLAIM_DRAWS). A claim takes jobs while the draws before
   * each leave room, so small jobs still pack `concurrency` to a claim and large ones few
   * (docs/decisions.md §6 "Claims"). Default DEFAULT_CLAIM_DRAWS.
   */
  claimDraws?: (() => number) | undefined;
  /**
   * A job of at most these draws is claimed even while the draws held leave no room: a small run is
   * begun beside large ones rather than after them (the engine's smallDraws; docs/decisions.md §6 "Fair
   * shares"). Default none.
   */
  smallDraws?: number | undefined;
  /**
   * While jobs are in flight, a claim waits until this many slots are free (default a quarter of
   * `concurrency`): the engine runs packs, and the next pack is claimed while the others still run.
   */
  packSize?: number;
  /** How long an outcome in a stream of them waits for the next (STORE_GATHER_MS by default). */
  storeGatherMs?: number;
  /** Idle wait between claims when nothing wakes the worker. */
  pollMs?: number;
  leaseMs?: number;
  /** Interval of lease rescue and hold sweeping. */
  maintenanceMs?: number;
  sweeper?: HoldSweeper | undefined;
  logger?: WorkerLogger | undefined;
  /** Told of every job the worker finishes (metrics). */
  onJobFinished?: ((event: JobFinished) => void) | undefined;
}

/** A job this worker finished: how, and for a run of the engine, which engine and how long. */
export interface JobFinished {
  job: Job;
  outcome: RecordedOutcome | 'cached';
  /** gpuMs: the job's share of its dispatch's GPU time (gpu/engine.ts); 0 when the CPU ran it. */
  run?: { engine: string; runMs: number; gpuMs: number } | undefined;
}

export interface WorkerStats {
  claimed: number;
  completed: number;
  failed: number;
  /** Outcomes dropped because the job was no longer this worker's (lease lost). */
  dropped: number;
  /** Claimed jobs answered from the result cache without running. */
  cacheHits: number;
  /**
   * Claimed jobs refused at their start, never run: a batch's cancel took them, or (a lapsed lease)
   * another worker holds them now.
   */
  refused: number;
}

/** Draws a worker holds at most when not told (WorkerOptions.claimDraws): a second of a 2-core CPU engine. */
export const DEFAULT_CLAIM_DRAWS = 2_000_000;

/**
 * A simulation worker: its stop is kind-worker.ts's (with abortRuns, jobs the engine has not started get
 * no outcome and their leases run out).
 */
export interface Worker extends KindWorker {
  stats: WorkerStats;
}

const silentLogger: WorkerLogger = { info() {}, warn() {}, error() {} };

/** The handler's state: what its parts share, and the jobs its worker holds. */
interface WorkerState {
  context: OutcomeContext;
  runBatch: RunBatch;
  logger: WorkerLogger;
  stats: WorkerStats;
  onJobFinished: (event: JobFinished) => void;
  /** The jobs the worker holds (claimed and not yet stored); the engine's signal is theirs. */
  held: HeldJobs<Job>;
  store: OutcomeStore;
}

/**
 * The claimed jobs that still need the engine: the others were answered from the cache or lost. Their
 * stored results are found first (job-outcomes.ts cachedResultsOf, one statement unless some are stored),
 * then only the jobs answered by one are locked and completed, one by one.
 */
async function jobsToRun(state: WorkerState, jobs: Job[]): Promise<Job[]> {
  const { context, logger } = state;
  let cached = new Map<string, SimulationResult>();
  try {
    cached = await cachedResultsOf(context, jobs);
  } catch (error) {
    // The engine runs them: an outcome whose inputs were stored meanwhile finds the stored result.
    logger.error({ err: error, worker_id: context.workerId }, 'cache check failed');
  }
  const toRun: Job[] = [];
  for (const job of jobs) {
    const result = cached.get(job.id);
    if (!result) {
      toRun.push(job);
      continue;
    }
    try {
      const completed = await completeFromCache(context, job, result, () => state.stats.cacheHits++);
      state.held.letGo(job);
      if (completed) finished(state, job, 'cached');
    } catch (error) {
      logger.error({ err: error, job_id: job.id, worker_id: context.workerId }, 'cache check failed');
      toRun.push(job);
    }
  }
  return toRun;
}

/**
 * Progress is written for long runs only: a job's first report is not written, and a later one only when
 * this long has passed since the job's last (or first) report. A run shorter than that (most batch items)
 * then writes none, however long its pack has run: its status goes from running to succeeded, with
 * draws_done = draws, in the statement that completes it. For the same reason a report of every draw
 * (the engine gives one when a job's draws are done) is never written.
 */
export const PROGRESS_INTERVAL_MS = 500;

/** The engine's progress reports, one statement per job and PROGRESS_INTERVAL_MS at most. */
function throttledProgress(state: WorkerState): (jobId: string, drawsDone: number) => Promise<void> {
  const { queue, clock, workerId } = state.context;
  const lastReport = new Map<string, number>();
  return async (jobId, drawsDone) => {
    const job = state.held.get(jobId);
    if (!job || drawsDone >= job.draws) return;
    const now = clock().getTime();
    const last = lastReport.get(jobId);
    if (last === undefined) {
      lastReport.set(jobId, now);
      return;
    }
    if (now - last < PROGRESS_INTERVAL_MS) return;
    lastReport.set(jobId, now);
    await queue.progress(jobId, drawsDone, workerId);
  };
}

async function runEngine(
  state: WorkerState,
  jobs: Job[],
  hooks: Pick<RunContext, 'onOutcome' | 'start'>,
): Promise<RunOutcome[]> {
  try {
    return await state.runBatch(jobs.map(engineJob), {
      progress: throttledProgress(state),
      signal: state.held.signal,
      ...hooks,
    });
  } catch (error) {
    const jobIds = jobs.map((job) => job.id);
    state.logger.error(
      { err: error, job_ids: jobIds, worker_id: state.context.workerId },
      'engine run failed',
    );
    const message = error instanceof Error ? error.message : String(error);
    return jobs.map((job) => ({ jobId: job.id, error: { code: 'simulation_failed', message } }));
  }
}

/**
 * RunContext.start: the jobs the engine is about to begin, marked started unless a batch's cancel took
 * them first (docs/decisions.md §6 "Cancel") or their lease lapsed meanwhile. Only a batch's items are
 * asked: nothing cancels a lone job, which so begins without a round trip (its lapsed lease, if any, is
 * found at its store). Those refused are the worker's no more: never run, no outcome, their slots and
 * draws free at once. A mark that fails lets the jobs run: a job cancelled meanwhile then stores nothing
 * and charges nothing, since an outcome is stored only under its lease.
 */
async function startPending(
  state: WorkerState,
  pending: Map<string, Job>,
  jobIds: readonly string[],
): Promise<ReadonlySet<string>> {
  const { queue, workerId } = state.context;
  const items = jobIds.filter((id) => pending.get(id)?.batchId !== null);
  if (items.length === 0) return new Set(jobIds);
  let marked: Set<string>;
  try {
    marked = new Set(await queue.start(workerId, items));
  } catch (error) {
    state.logger.error({ err: error, job_ids: items, worker_id: workerId }, 'could not mark jobs started');
    return new Set(jobIds);
  }
  const refused = items.filter((id) => !marked.has(id));
  for (const id of refused) {
    const job = pending.get(id);
    if (!job) continue;
    pending.delete(id);
    state.held.letGo(job);
    state.stats.refused++;
  }
  if (refused.length > 0) {
    state.logger.info(
      { worker_id: workerId, job_ids: refused },
      "jobs refused at their start: cancelled, or no longer this worker's",
    );
    state.held.slotsFreed();
  }
  const refusedIds = new Set(refused);
  return new Set(jobIds.filter((id) => !refusedIds.has(id)));
}

/**
 * Runs a claimed pack through the engine and hands each outcome to the store as soon as the engine gives
 * it, so the engine keeps running the pack's other jobs, and the packs claimed into the slots freed
 * meanwhile, while documents are written. A job the engine gave no outcome fails when the run ends,
 * unless a cancel took it before it started.
 */
async function runClaimed(state: WorkerState, jobs: Job[]): Promise<void> {
  const toRun = await jobsToRun(state, jobs);
  if (toRun.length === 0) return;
  const pending = new Map(toRun.map((job) => [job.id, job]));
  const stored: Promise<void>[] = [];
  const store = (job: Job, outcome: RunOutcome | undefined) => {
    pending.delete(job.id);
    stored.push(state.store.store(job, outcome));
  };
  const outcomes = await runEngine(state, toRun, {
    start: (jobIds) => startPending(state, pending, jobIds),
    onOutcome: (outcome) => {
      const job = pending.get(outcome.jobId);
      if (job) store(job, outcome);
    },
  });
  const byJob = new Map(outcomes.map((outcome) => [outcome.jobId, outcome]));
  for (const job of [...pending.values()]) store(job, byJob.get(job.id));
  await Promise.all(stored);
}

/** A stored outcome counted, then its job's log line and metric. */
function recorded(state: WorkerState, job: Job, outcome: RecordedOutcome, given: RunOutcome | undefined) {
  state.stats[outcome]++;
  const run =
    given && 'engine' in given ? { engine: given.engine, runMs: given.runMs, gpuMs: given.gpuMs } : undefined;
  finished(state, job, outcome, run);
}

/** One log line and one metric per finished job. */
function finished(state: WorkerState, job: Job, outcome: JobFinished['outcome'], run?: JobFinished['run']) {
  const line = {
    job_id: job.id,
    org_id: job.orgId,
    batch_id: job.batchId ?? undefined,
    // The submitting request, so a job's lines join that request's.
    request_id: job.requestId,
    worker_id: state.context.workerId,
    outcome,
    draws: job.draws,
    engine: run?.engine,
    run_ms: run?.runMs,
    gpu_ms: run?.gpuMs,
  };
  if (outcome === 'dropped') state.logger.warn(line, 'job outcome dropped: its lease was lost');
  else state.logger.info(line, 'job finished');
  state.onJobFinished({ job, outcome, run });
}

/** The simulation kind on the worker of every kind: the jobs table's queue, draws, and the engine. */
function simulationKind(options: WorkerOptions, context: OutcomeContext, stats: WorkerStats) {
  const logger = options.logger ?? silentLogger;
  return {
    queue: options.queue,
    weight: (job: Job) => job.draws,
    handler(held: HeldJobs<Job>) {
      const state: WorkerState = {
        context,
        runBatch: options.runBatch,
        logger,
        stats,
        onJobFinished: options.onJobFinished ?? (() => {}),
        held,
        store: makeOutcomeStore({
          context,
          logger,
          gatherMs: options.storeGatherMs ?? STORE_GATHER_MS,
          jobsHeld: held.count,
          stopping: held.stopping,
          recorded: (job, outcome, given) => recorded(state, job, outcome, given),
          release: held.letGo,
          slotsFreed: held.slotsFreed,
        }),
      };
      return (jobs: Job[]) => {
        stats.claimed += jobs.length;
        return runClaimed(state, jobs);
      };
    },
  };
}

export function startWorker(options: WorkerOptions): Worker {
  const concurrency = options.concurrency ?? 4;
  const context: OutcomeContext = {
    queue: options.queue,
    sql: options.sql,
    knownResults: options.knownResults ?? makeKnownResults(),
    workerId: options.workerId,
    clock: options.clock ?? (() => new Date()),
  };
  const stats: WorkerStats = { claimed: 0, completed: 0, failed: 0, dropped: 0, cacheHits: 0, refused: 0 };
  const worker = startKindWorker({
    kind: simulationKind(options, context, stats),
    workerId: options.workerId,
    logger: options.logger ?? silentLogger,
    concurrency,
    packSize: options.packSize ?? Math.ceil(concurrency / 4),
    pollMs: options.pollMs ?? 1000,
    leaseMs: options.leaseMs ?? 30_000,
    maintenanceMs: options.maintenanceMs ?? 5_000,
    clock: context.clock,
    room: options.claimDraws ?? (() => DEFAULT_CLAIM_DRAWS),
    smallWeight: options.smallDraws,
    sweeper: options.sweeper,
    waits: options.queue,
  });
  return { ...worker, stats };
}
