// The worker's outcome store: each outcome the engine gives is handed here at once, and outcomes that
// arrive while a store is under way, or while one gathers, wait and are stored together (job-outcomes.ts
// recordOutcomes: one transaction, one statement per table), so a host whose engine finishes jobs faster
// than one transaction a job stores them in packs, and a lone job waits for nobody (docs/ARCHITECTURE.md,
// Invariants). It owns the outcomes waiting, the store under way and the gathering timer; what a stored
// outcome means for the worker (its counters, its log line, its freed slot) is the worker's, told back.
import type { RunOutcome } from '../engine/runner.js';
import { type OutcomeContext, type RecordedOutcome, recordOutcomes } from './job-outcomes.js';
import type { Job, WorkerLogger } from './types.js';

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
/**
 * A claimed pack on a server (src/server.ts workerClaims: a quarter of 256 jobs): a store's statements
 * cost the server little more for 64 outcomes than for 16 (docs/decisions.md §6, "What a job costs the
 * host"). A worker holding fewer (PGlite's 16) stores what it holds.
 */
const STORE_GATHER_OUTCOMES = 64;

export interface OutcomeStoreOptions {
  context: OutcomeContext;
  logger: WorkerLogger;
  /** STORE_GATHER_MS by default (WorkerOptions.storeGatherMs). */
  gatherMs: number;
  /** Jobs the worker holds, their outcomes stored or not: while more than those waiting, more may come. */
  jobsHeld(): number;
  /** The worker is stopping: what waits is stored at once. */
  stopping(): boolean;
  /** A job's outcome as recorded (a store that failed records none: its lease runs out). */
  recorded(job: Job, recorded: RecordedOutcome, outcome: RunOutcome | undefined): void;
  /** A job whose store ended, recorded or not: no longer the worker's to hold. */
  release(job: Job): void;
  /** A store ended: its jobs' slots are free. */
  slotsFreed(): void;
}

export interface OutcomeStore {
  /** Resolves once the outcome's store has ended (recorded or not). */
  store(job: Job, outcome: RunOutcome | undefined): Promise<void>;
}

export function makeOutcomeStore(options: OutcomeStoreOptions): OutcomeStore {
  const waiting: Array<{ job: Job; outcome: RunOutcome | undefined; stored: () => void }> = [];
  let storing: Promise<void> | null = null;
  /** The wait before a store while other jobs run, if one is under way. */
  let gathering: NodeJS.Timeout | null = null;
  /** When the last outcome came (performance.now()): an outcome soon after another is in a stream. */
  let lastOutcomeAt = Number.NEGATIVE_INFINITY;

  /**
   * Starts a store of the waiting outcomes, or lets them gather while they are few, in a stream, and
   * other jobs of the worker still run; nothing while a store is under way (its end schedules the next).
   */
  function schedule(streaming: boolean): void {
    if (storing || waiting.length === 0) return;
    // Jobs in flight whose outcomes have not come yet: more may come soon.
    const othersRunning = options.jobsHeld() > waiting.length;
    const gather = streaming && othersRunning && waiting.length < STORE_GATHER_OUTCOMES;
    if (gather && !options.stopping()) {
      gathering ??= setTimeout(start, options.gatherMs);
      return;
    }
    start();
  }

  function start(): void {
    if (gathering) clearTimeout(gathering);
    gathering = null;
    if (storing || waiting.length === 0) return;
    storing = storeWaiting().finally(() => {
      storing = null;
      // Outcomes that came during the store: stored now, or gathered on while they keep coming.
      schedule(performance.now() - lastOutcomeAt < options.gatherMs);
    });
  }

  /** Stores the waiting outcomes, STORE_PACK at most, in one transaction. */
  async function storeWaiting(): Promise<void> {
    const pack = waiting.splice(0, STORE_PACK);
    try {
      const recorded = await recordOutcomes(options.context, pack);
      pack.forEach(({ job, outcome }, i) => {
        options.recorded(job, recorded[i]!, outcome);
      });
    } catch (error) {
      // The leases run out and the jobs are claimed again: the outcomes are not lost for good.
      options.logger.error(
        { err: error, job_ids: pack.map(({ job }) => job.id), worker_id: options.context.workerId },
        'could not record the outcomes of jobs',
      );
    } finally {
      for (const { job, stored } of pack) {
        options.release(job);
        stored();
      }
      options.slotsFreed();
    }
  }

  return {
    store(job, outcome) {
      return new Promise((resolve) => {
        waiting.push({ job, outcome, stored: resolve });
        const now = performance.now();
        const streaming = now - lastOutcomeAt < options.gatherMs;
        lastOutcomeAt = now;
        schedule(streaming);
      });
    },
  };
}
