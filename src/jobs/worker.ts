// A simulation worker (docs/decisions.md §6): claims queued jobs in batches, runs them through the injected
// engine, heartbeats their leases while they run, stores each document and completes its job.
//
// Exactly once: completion locks the job and checks that this worker still holds its lease, and stores
// the result in the same transaction. A worker whose lease ran out (and whose job another worker claimed
// or will claim) finds the job no longer its own and drops its outcome. The engine may therefore run a
// job twice after a crash, but only one run completes it, and money moves only at delivery.
//
// It also does the periodic chores of the queue: rescuing lapsed leases and sweeping ended holds.
import type { Sql } from '../db/connection.js';
import type { EngineJob, JobPayload, RunBatch, RunOutcome } from '../engine/runner.js';
import { findCachedResult, storeResult } from '../results/result-store.js';
import type { JobQueue } from './queue.js';
import type { HoldSweeper } from './sweeper.js';
import type { Job } from './types.js';

/** A claimed job as the engine sees it (jobs.inputs holds the engine's payload). */
function engineJob(job: Job): EngineJob {
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

export interface WorkerLogger {
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}

export interface WorkerOptions {
  queue: JobQueue;
  sql: Sql;
  /** The engine (src/engine/runner.ts), injected: one outcome per job (missing ones fail their job). */
  runBatch: RunBatch;
  clock?: () => Date;
  workerId: string;
  /** Jobs in flight at most; a claim takes up to the free slots at once. */
  concurrency?: number;
  /** Idle wait between claims when nothing wakes the worker. */
  pollMs?: number;
  leaseMs?: number;
  /** Interval of lease rescue and hold sweeping. */
  maintenanceMs?: number;
  sweeper?: HoldSweeper | undefined;
  logger?: WorkerLogger | undefined;
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
   * engine's signal is aborted first (a shutdown that cannot wait); unfinished jobs are claimed again
   * when their leases run out.
   */
  stop(options?: { abortRuns?: boolean }): Promise<void>;
}

const silentLogger: WorkerLogger = { info() {}, warn() {}, error() {} };

export function startWorker(options: WorkerOptions): Worker {
  const { queue, sql, runBatch, workerId } = options;
  const clock = options.clock ?? (() => new Date());
  const concurrency = options.concurrency ?? 4;
  const pollMs = options.pollMs ?? 1000;
  const leaseMs = options.leaseMs ?? 30_000;
  const maintenanceMs = options.maintenanceMs ?? 5_000;
  const logger = options.logger ?? silentLogger;
  const stats: WorkerStats = { claimed: 0, completed: 0, failed: 0, dropped: 0, cacheHits: 0 };

  const inFlight = new Map<string, Job>();
  const runs = new Set<Promise<void>>();
  const abort = new AbortController();
  let stopping = false;
  let wakeLoop: () => void = () => {};

  // Set by a wake-up that came while the loop was busy claiming, so that it does not then sleep.
  let woken = false;
  const wake = () => {
    woken = true;
    wakeLoop();
  };

  // A job can be claimed again by this same worker after its lease lapsed mid-run: each run forgets
  // only its own entry, so the newer run keeps its heartbeat.
  function forget(job: Job): void {
    if (inFlight.get(job.id) === job) inFlight.delete(job.id);
  }

  async function finish(job: Job, outcome: RunOutcome | undefined): Promise<void> {
    if (!outcome) {
      outcome = {
        jobId: job.id,
        error: { code: 'simulation_failed', message: 'The engine gave no outcome.' },
      };
    }
    if ('error' in outcome) {
      const failed = await queue.fail(job.id, outcome.error, { workerId });
      if (failed) stats.failed++;
      else stats.dropped++;
      return;
    }
    const success = outcome;
    const completed = await sql.begin(async (tx) => {
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
          document: success.document,
          engine: success.engine,
          runMs: success.runMs,
          gpuMs: success.gpuMs,
        },
        clock(),
      );
      return queue.complete(job.id, {
        resultId: result.id,
        gpuSecondsUsed: success.gpuMs / 1000,
        engine: success.engine,
        workerId,
        tx,
      });
    });
    if (completed) stats.completed++;
    else stats.dropped++;
  }

  // Jobs whose inputs another job has finished meanwhile are completed from the cache without running.
  async function completeFromCache(job: Job): Promise<boolean> {
    return sql.begin(async (tx) => {
      const owned = await queue.lockOwnedJob(tx, job.id, workerId);
      if (!owned) return true;
      const cached = await findCachedResult(tx, {
        cacheKey: owned.cacheKey,
        scope: owned.scope,
        orgId: owned.orgId,
      });
      if (!cached) return false;
      await queue.complete(job.id, {
        resultId: cached.id,
        gpuSecondsUsed: 0,
        engine: cached.engine,
        workerId,
        tx,
      });
      stats.cacheHits++;
      return true;
    });
  }

  async function runClaimed(jobs: Job[]): Promise<void> {
    const toRun: Job[] = [];
    for (const job of jobs) {
      try {
        if (await completeFromCache(job)) forget(job);
        else toRun.push(job);
      } catch (error) {
        logger.error({ err: error, jobId: job.id, workerId }, 'cache check failed');
        toRun.push(job);
      }
    }
    if (toRun.length === 0) return;
    let outcomes: RunOutcome[];
    try {
      outcomes = await runBatch(toRun.map(engineJob), {
        progress: (jobId, drawsDone) => queue.progress(jobId, drawsDone, workerId),
        signal: abort.signal,
      });
    } catch (error) {
      logger.error({ err: error, jobIds: toRun.map((job) => job.id), workerId }, 'engine run failed');
      const message = error instanceof Error ? error.message : String(error);
      outcomes = toRun.map((job) => ({ jobId: job.id, error: { code: 'simulation_failed', message } }));
    }
    const byJob = new Map(outcomes.map((outcome) => [outcome.jobId, outcome]));
    for (const job of toRun) {
      try {
        await finish(job, byJob.get(job.id));
      } catch (error) {
        // The lease runs out and the job is claimed again: the outcome is not lost for good.
        logger.error({ err: error, jobId: job.id, workerId }, 'could not record the outcome of a job');
      } finally {
        forget(job);
      }
    }
  }

  function track(jobs: Job[]): void {
    for (const job of jobs) inFlight.set(job.id, job);
    const run = runClaimed(jobs)
      .catch((error) => logger.error({ err: error, workerId }, 'job batch failed'))
      .finally(() => {
        for (const job of jobs) forget(job);
        runs.delete(run);
        wake();
      });
    runs.add(run);
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      woken = false;
      let claimed = 0;
      const free = concurrency - inFlight.size;
      if (free > 0) {
        try {
          const jobs = await queue.claim(workerId, free, leaseMs);
          claimed = jobs.length;
          if (claimed > 0) {
            stats.claimed += claimed;
            track(jobs);
          }
        } catch (error) {
          logger.error({ err: error, workerId }, 'claim failed');
        }
      }
      if (stopping) break;
      // Claim again at once while there was work and room; otherwise wait for a wake-up or the poll.
      if ((claimed > 0 && concurrency - inFlight.size > 0) || woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wakeLoop = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeLoop = () => {};
    }
  }

  async function heartbeat(): Promise<void> {
    const ids = [...inFlight.keys()];
    if (ids.length === 0) return;
    const held = new Set(await queue.heartbeat(workerId, ids, leaseMs));
    const lost = ids.filter((id) => !held.has(id) && inFlight.has(id));
    if (lost.length > 0) logger.warn({ workerId, jobIds: lost }, 'lost the lease of running jobs');
  }

  async function maintenance(): Promise<void> {
    const rescued = await queue.rescueExpiredLeases(clock());
    if (rescued.requeued.length > 0 || rescued.failed.length > 0) {
      logger.warn(
        {
          workerId,
          requeued: rescued.requeued.map((job) => job.id),
          failed: rescued.failed.map((job) => job.id),
        },
        'rescued jobs whose lease ran out',
      );
      wake();
    }
    if (options.sweeper) {
      const swept = await options.sweeper.sweep(clock());
      if (swept.expiredJobs.length > 0) {
        logger.info(
          { workerId, releasedHolds: swept.releasedHolds.length, expiredJobs: swept.expiredJobs.length },
          'swept ended holds',
        );
      }
    }
  }

  // A periodic task that skips its turn while the previous run is still going.
  function every(ms: number, task: () => Promise<void>, name: string): () => Promise<void> {
    let current: Promise<void> | null = null;
    const timer = setInterval(() => {
      if (current) return;
      current = task()
        .catch((error) => logger.error({ err: error, workerId }, `${name} failed`))
        .finally(() => {
          current = null;
        });
    }, ms);
    return async () => {
      clearInterval(timer);
      await current;
    };
  }

  const stopHeartbeat = every(Math.max(10, Math.floor(leaseMs / 3)), heartbeat, 'heartbeat');
  const stopMaintenance = every(maintenanceMs, maintenance, 'maintenance');
  let stopListening: Promise<() => Promise<void>> = queue.listenForWork(wake).catch((error) => {
    logger.warn({ err: error, workerId }, 'LISTEN failed; polling only');
    return async () => {};
  });
  const looping = loop();

  return {
    workerId,
    stats,
    async stop(stopOptions = {}) {
      stopping = true;
      if (stopOptions.abortRuns) abort.abort();
      wake();
      await looping;
      // Drain: the jobs in flight finish and complete; their leases keep being extended meanwhile.
      while (runs.size > 0) await Promise.all([...runs]);
      await stopHeartbeat();
      await stopMaintenance();
      const unlisten = await stopListening;
      stopListening = Promise.resolve(async () => {});
      await unlisten();
    },
  };
}
