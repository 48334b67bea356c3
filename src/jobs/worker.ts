// A simulation worker (docs/decisions.md §6): claims queued jobs in batches, runs them through the injected
// engine, heartbeats their leases while they run, stores each document and completes its job
// (job-outcomes.ts: exactly once, under the lease). The engine may run a job twice after a crash, but
// only one run completes it, and money moves only at delivery.
//
// It also does the periodic chores of the queue: rescuing lapsed leases and sweeping ended holds.
import type { Sql } from '../db/connection.js';
import type { RunBatch, RunOutcome } from '../engine/runner.js';
import { makeKnownResults } from '../results/known-results.js';
import type { KnownResults } from '../results/result-store.js';
import { cachedKeysAmong } from '../results/result-store.js';
import {
  completeFromCache,
  engineJob,
  type OutcomeContext,
  type RecordedOutcome,
  recordOutcomes,
} from './job-outcomes.js';
import type { JobQueue } from './queue.js';
import type { HoldSweeper } from './sweeper.js';
import type { Job } from './types.js';

export interface WorkerLogger {
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}

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
}

export interface Worker {
  workerId: string;
  stats: WorkerStats;
  /**
   * Stops claiming, lets the jobs in flight finish (drain), and stops the chores. With abortRuns the
   * engine's signal is aborted first (jobs not yet started get no outcome; their leases run out). With
   * timeoutMs the drain waits that long at most: the jobs still running are then put back in the queue
   * at once (`released`), and their runs, left behind, can no longer complete them.
   */
  stop(options?: { abortRuns?: boolean; timeoutMs?: number }): Promise<{ released: string[] }>;
}

const silentLogger: WorkerLogger = { info() {}, warn() {}, error() {} };

/** The running worker: its settings, counters and the jobs it holds. */
interface WorkerState extends OutcomeContext {
  runBatch: RunBatch;
  concurrency: number;
  /** The fewest jobs a claim takes while others are in flight. */
  packSize: number;
  pollMs: number;
  storeGatherMs: number;
  /** When the last outcome came (performance.now()): an outcome soon after another is in a stream. */
  lastOutcomeAt: number;
  leaseMs: number;
  logger: WorkerLogger;
  stats: WorkerStats;
  inFlight: Map<string, Job>;
  runs: Set<Promise<void>>;
  abort: AbortController;
  stopping: boolean;
  onJobFinished: (event: JobFinished) => void;
  /** Set by a wake-up that came while the loop was busy claiming, so that it does not then sleep. */
  woken: boolean;
  /**
   * The last claim found fewer queued jobs than it had room for, and no news of queued jobs has come
   * since: a slot that frees up then has nothing to claim, and no claim is sent for it (wakeForSlots).
   */
  queueDrained: boolean;
  /** Outcomes waiting to be stored, and the store under way (storeOutcome). */
  toStore: Array<{ job: Job; outcome: RunOutcome | undefined; stored: () => void }>;
  storing: Promise<void> | null;
  /** The wait before a store while other jobs run (storeOutcome), if one is under way. */
  gathering: NodeJS.Timeout | null;
  wakeLoop: () => void;
}

function wake(state: WorkerState): void {
  state.woken = true;
  state.wakeLoop();
}

/** Jobs may have been queued (a NOTIFY, this process's commit, a lease rescued, a stop): claim. */
function wakeForWork(state: WorkerState): void {
  state.queueDrained = false;
  wake(state);
}

/**
 * Slots freed (a pack ran, its outcomes were stored): claim into them, unless the last claim emptied the
 * queue and nothing was queued since, which news of the queue would have said (wakeForWork). A lone job
 * was claimed four times where once does (test/jobs/wake-ups.test.ts): besides the claim that took it,
 * one again at once (that claim had found fewer jobs than it had room for), one after its outcome was
 * stored and one after its run; on a server its own NOTIFY woke the worker too (waits.ts now skips a
 * process's own). The poll stays the fallback for what no news reaches (a queued row that another
 * transaction held locked at the claim, SKIP LOCKED, and then left queued).
 */
function wakeForSlots(state: WorkerState): void {
  if (!state.queueDrained) wake(state);
}

// A job can be claimed again by this same worker after its lease lapsed mid-run: each run forgets only
// its own entry, so the newer run keeps its heartbeat.
function forget(state: WorkerState, job: Job): void {
  if (state.inFlight.get(job.id) === job) state.inFlight.delete(job.id);
}

/**
 * The claimed jobs that still need the engine: the others were answered from the cache or lost. One
 * statement finds which may be in the cache; only those are locked and completed one by one.
 */
async function jobsToRun(state: WorkerState, jobs: Job[]): Promise<Job[]> {
  let cached: Set<string> | null = null;
  try {
    cached = await cachedKeysAmong(state.sql, jobs);
  } catch (error) {
    state.logger.error({ err: error, worker_id: state.workerId }, 'cache check failed');
  }
  const toRun: Job[] = [];
  for (const job of jobs) {
    if (cached && !cached.has(job.cacheKey)) {
      toRun.push(job);
      continue;
    }
    try {
      const found = await completeFromCache(state, job, () => state.stats.cacheHits++);
      if (found === 'run') toRun.push(job);
      else forget(state, job);
      if (found === 'cached') finished(state, job, 'cached');
    } catch (error) {
      state.logger.error({ err: error, job_id: job.id, worker_id: state.workerId }, 'cache check failed');
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
  const lastReport = new Map<string, number>();
  return async (jobId, drawsDone) => {
    const job = state.inFlight.get(jobId);
    if (!job || drawsDone >= job.draws) return;
    const now = state.clock().getTime();
    const last = lastReport.get(jobId);
    if (last === undefined) {
      lastReport.set(jobId, now);
      return;
    }
    if (now - last < PROGRESS_INTERVAL_MS) return;
    lastReport.set(jobId, now);
    await state.queue.progress(jobId, drawsDone, state.workerId);
  };
}

async function runEngine(
  state: WorkerState,
  jobs: Job[],
  onOutcome: (outcome: RunOutcome) => void,
): Promise<RunOutcome[]> {
  try {
    return await state.runBatch(jobs.map(engineJob), {
      progress: throttledProgress(state),
      signal: state.abort.signal,
      onOutcome,
    });
  } catch (error) {
    const jobIds = jobs.map((job) => job.id);
    state.logger.error({ err: error, job_ids: jobIds, worker_id: state.workerId }, 'engine run failed');
    const message = error instanceof Error ? error.message : String(error);
    return jobs.map((job) => ({ jobId: job.id, error: { code: 'simulation_failed', message } }));
  }
}

/**
 * Runs a claimed pack through the engine and hands each outcome to the store as soon as the engine gives
 * it, so the engine keeps running the pack's other jobs, and the packs claimed into the slots freed
 * meanwhile, while documents are written. A job the engine gave no outcome fails when the run ends.
 */
async function runClaimed(state: WorkerState, jobs: Job[]): Promise<void> {
  const toRun = await jobsToRun(state, jobs);
  if (toRun.length === 0) return;
  const pending = new Map(toRun.map((job) => [job.id, job]));
  const stored: Promise<void>[] = [];
  const store = (job: Job, outcome: RunOutcome | undefined) => {
    pending.delete(job.id);
    stored.push(storeOutcome(state, job, outcome));
  };
  const outcomes = await runEngine(state, toRun, (outcome) => {
    const job = pending.get(outcome.jobId);
    if (job) store(job, outcome);
  });
  const byJob = new Map(outcomes.map((outcome) => [outcome.jobId, outcome]));
  for (const job of [...pending.values()]) store(job, byJob.get(job.id));
  await Promise.all(stored);
}

/** Outcomes stored in one transaction at most (documents of some 70 KB each travel in its statement). */
export const STORE_PACK = 100;

/**
 * An outcome that comes within this long of the one before (a stream of them: a batch's jobs) waits up
 * to this long for more, or until STORE_GATHER_OUTCOMES wait, before a store starts, while other jobs of
 * the worker still run: jobs of some 10,000 draws finish one every few milliseconds, each alone in a
 * transaction of some ten statements otherwise. An outcome with none just before it (a lone simulation,
 * or a small job beside a long one) is stored at once.
 */
export const STORE_GATHER_MS = 50;
const STORE_GATHER_OUTCOMES = 16;

/**
 * Stores one job's outcome: outcomes that arrive while a store is under way, or while one gathers, wait
 * and are stored together (recordOutcomes: one transaction, one statement per table), so a host whose
 * engine finishes jobs faster than one transaction a job stores them in packs, and a lone job waits for
 * nobody.
 */
function storeOutcome(state: WorkerState, job: Job, outcome: RunOutcome | undefined): Promise<void> {
  return new Promise((resolve) => {
    state.toStore.push({ job, outcome, stored: resolve });
    const now = performance.now();
    const inStream = now - state.lastOutcomeAt < state.storeGatherMs;
    state.lastOutcomeAt = now;
    scheduleStore(state, inStream);
  });
}

/**
 * Starts a store of the waiting outcomes, or lets them gather while they are few, in a stream, and
 * other jobs of the worker still run; nothing while a store is under way (its end schedules the next).
 */
function scheduleStore(state: WorkerState, inStream: boolean): void {
  if (state.storing || state.toStore.length === 0) return;
  // Jobs in flight whose outcomes have not come yet: more may come soon.
  const othersRunning = state.inFlight.size > state.toStore.length;
  const gather = inStream && othersRunning && state.toStore.length < STORE_GATHER_OUTCOMES;
  if (gather && !state.stopping) {
    state.gathering ??= setTimeout(startStore, state.storeGatherMs, state);
    return;
  }
  startStore(state);
}

function startStore(state: WorkerState): void {
  if (state.gathering) clearTimeout(state.gathering);
  state.gathering = null;
  if (state.storing || state.toStore.length === 0) return;
  state.storing = storeWaiting(state).finally(() => {
    state.storing = null;
    // Outcomes that came during the store: stored now, or gathered on while they keep coming.
    scheduleStore(state, performance.now() - state.lastOutcomeAt < state.storeGatherMs);
  });
}

/** Stores the waiting outcomes, STORE_PACK at most, in one transaction. */
async function storeWaiting(state: WorkerState): Promise<void> {
  const pack = state.toStore.splice(0, STORE_PACK);
  try {
    const recorded = await recordOutcomes(state, pack);
    pack.forEach(({ job, outcome }, i) => {
      state.stats[recorded[i]!]++;
      const run =
        outcome && 'engine' in outcome
          ? { engine: outcome.engine, runMs: outcome.runMs, gpuMs: outcome.gpuMs }
          : undefined;
      finished(state, job, recorded[i]!, run);
    });
  } catch (error) {
    // The leases run out and the jobs are claimed again: the outcomes are not lost for good.
    state.logger.error(
      { err: error, job_ids: pack.map(({ job }) => job.id), worker_id: state.workerId },
      'could not record the outcomes of jobs',
    );
  } finally {
    for (const { job, stored } of pack) {
      forget(state, job);
      stored();
    }
    wakeForSlots(state);
  }
}

/** One log line and one metric per finished job. */
function finished(state: WorkerState, job: Job, outcome: JobFinished['outcome'], run?: JobFinished['run']) {
  const line = {
    job_id: job.id,
    org_id: job.orgId,
    batch_id: job.batchId ?? undefined,
    // The submitting request, so a job's lines join that request's.
    request_id: job.requestId,
    worker_id: state.workerId,
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

function track(state: WorkerState, jobs: Job[]): void {
  for (const job of jobs) state.inFlight.set(job.id, job);
  const run = runClaimed(state, jobs)
    .catch((error) => state.logger.error({ err: error, worker_id: state.workerId }, 'job batch failed'))
    .finally(() => {
      for (const job of jobs) forget(state, job);
      state.runs.delete(run);
      wakeForSlots(state);
    });
  state.runs.add(run);
}

/**
 * Claims up to the free slots once a pack's worth is free (or nothing is in flight); whether the claim
 * filled them all (more may be queued). Packs keep the GPU's dispatches full, and claiming while the earlier packs still run keeps
 * the CPU engine's threads busy across packs.
 */
async function claimFree(state: WorkerState): Promise<boolean> {
  const free = state.concurrency - state.inFlight.size;
  if (free <= 0 || (free < state.packSize && state.inFlight.size > 0)) return false;
  try {
    const jobs = await state.queue.claim(state.workerId, free, state.leaseMs);
    if (jobs.length > 0) {
      state.stats.claimed += jobs.length;
      track(state, jobs);
    }
    // Fewer than there was room for: the queue had no more when the claim read it. News of jobs queued
    // while it ran has set `woken` (the loop claims again at once) or comes later (wakeForWork).
    if (jobs.length < free) state.queueDrained = true;
    return jobs.length === free;
  } catch (error) {
    state.logger.error({ err: error, worker_id: state.workerId }, 'claim failed');
    return false;
  }
}

async function loop(state: WorkerState): Promise<void> {
  while (!state.stopping) {
    state.woken = false;
    const full = await claimFree(state);
    if (state.stopping) break;
    // Claim again at once while a claim filled its room (more may be queued) and a pack's room is free;
    // otherwise wait for a wake-up or the poll.
    if ((full && state.concurrency - state.inFlight.size >= state.packSize) || state.woken) continue;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, state.pollMs);
      state.wakeLoop = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    state.wakeLoop = () => {};
  }
}

async function heartbeat(state: WorkerState): Promise<void> {
  const ids = [...state.inFlight.keys()];
  if (ids.length === 0) return;
  const held = new Set(await state.queue.heartbeat(state.workerId, ids, state.leaseMs));
  const lost = ids.filter((id) => !held.has(id) && state.inFlight.has(id));
  if (lost.length > 0)
    state.logger.warn({ worker_id: state.workerId, job_ids: lost }, 'lost the lease of running jobs');
}

async function maintenance(state: WorkerState, sweeper: HoldSweeper | undefined): Promise<void> {
  const { logger, workerId } = state;
  const rescued = await state.queue.rescueExpiredLeases(state.clock());
  if (rescued.requeued.length > 0 || rescued.failed.length > 0) {
    const requeued = rescued.requeued.map((job) => job.id);
    const failed = rescued.failed.map((job) => job.id);
    logger.warn({ worker_id: workerId, requeued, failed }, 'rescued jobs whose lease ran out');
    wakeForWork(state);
  }
  if (!sweeper) return;
  const swept = await sweeper.sweep(state.clock());
  if (swept.expiredJobs.length > 0) {
    logger.info(
      {
        worker_id: workerId,
        released_holds: swept.releasedHolds.length,
        expired_jobs: swept.expiredJobs.length,
      },
      'swept ended holds',
    );
  }
}

// A periodic task that skips its turn while the previous run is still going.
function every(state: WorkerState, ms: number, task: () => Promise<void>, name: string) {
  let current: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (current) return;
    current = task()
      .catch((error) => state.logger.error({ err: error, worker_id: state.workerId }, `${name} failed`))
      .finally(() => {
        current = null;
      });
  }, ms);
  return async () => {
    clearInterval(timer);
    await current;
  };
}

/**
 * Waits for the jobs in flight to finish and complete; their leases keep being extended meanwhile. Past
 * timeoutMs the jobs still running go back to the queue (their runs can then no longer complete them).
 */
async function drain(state: WorkerState, timeoutMs: number | undefined): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const deadline =
    timeoutMs === undefined
      ? null
      : new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), timeoutMs);
        });
  try {
    while (state.runs.size > 0) {
      const all = Promise.all([...state.runs]);
      if ((await (deadline ? Promise.race([all, deadline]) : all)) !== 'timeout') continue;
      // Released before the abort: a run that the abort ends without an outcome cannot fail its job.
      const released = await state.queue.release(state.workerId, [...state.inFlight.keys()]);
      state.abort.abort();
      state.logger.warn(
        { worker_id: state.workerId, job_ids: released },
        'shutdown timeout: running jobs put back in the queue',
      );
      return released;
    }
    return [];
  } finally {
    clearTimeout(timer);
  }
}

export function startWorker(options: WorkerOptions): Worker {
  const leaseMs = options.leaseMs ?? 30_000;
  const state: WorkerState = {
    queue: options.queue,
    sql: options.sql,
    knownResults: options.knownResults ?? makeKnownResults(),
    workerId: options.workerId,
    clock: options.clock ?? (() => new Date()),
    runBatch: options.runBatch,
    concurrency: options.concurrency ?? 4,
    packSize: Math.max(
      1,
      Math.min(options.packSize ?? Math.ceil((options.concurrency ?? 4) / 4), options.concurrency ?? 4),
    ),
    pollMs: options.pollMs ?? 1000,
    storeGatherMs: options.storeGatherMs ?? STORE_GATHER_MS,
    lastOutcomeAt: Number.NEGATIVE_INFINITY,
    leaseMs,
    logger: options.logger ?? silentLogger,
    stats: { claimed: 0, completed: 0, failed: 0, dropped: 0, cacheHits: 0 },
    inFlight: new Map(),
    runs: new Set(),
    abort: new AbortController(),
    stopping: false,
    onJobFinished: options.onJobFinished ?? (() => {}),
    woken: false,
    queueDrained: false,
    wakeLoop: () => {},
    toStore: [],
    storing: null,
    gathering: null,
  };
  const stopHeartbeat = every(
    state,
    Math.max(10, Math.floor(leaseMs / 3)),
    () => heartbeat(state),
    'heartbeat',
  );
  const stopMaintenance = every(
    state,
    options.maintenanceMs ?? 5_000,
    () => maintenance(state, options.sweeper),
    'maintenance',
  );
  let stopListening = options.queue
    .listenForWork(() => wakeForWork(state))
    .catch((error) => {
      state.logger.warn({ err: error, worker_id: state.workerId }, 'LISTEN failed; polling only');
      return async () => {};
    });
  const looping = loop(state);

  return {
    workerId: state.workerId,
    stats: state.stats,
    async stop(stopOptions = {}) {
      state.stopping = true;
      if (stopOptions.abortRuns) state.abort.abort();
      wakeForWork(state);
      await looping;
      const released = await drain(state, stopOptions.timeoutMs);
      await stopHeartbeat();
      await stopMaintenance();
      const unlisten = await stopListening;
      stopListening = Promise.resolve(async () => {});
      await unlisten();
      return { released };
    },
  };
}
