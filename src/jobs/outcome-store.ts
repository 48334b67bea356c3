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
 * An outcome that comes within this long of the one before (a stream of them: a batch's jobs) waits for
 * more before a store starts, while other jobs of the worker still run: jobs of some 10,000 draws finish
 * one every few milliseconds, each alone in a transaction of some ten statements otherwise. The wait ends
 * once this long passes with no new outcome (the stream paused), once STORE_GATHER_OUTCOMES wait, or once
 * the oldest has waited STORE_GATHER_MAX_FACTOR times this long (this long alone where a single
 * simulation's outcome waits, since its request waits for it, and where fewer of the worker's jobs still
 * run than outcomes wait, since the engine then runs short of work). An outcome with none just before it
 * (a lone simulation, or a small job beside a long one) is stored at once.
 */
export const STORE_GATHER_MS = 50;
/**
 * The longest a stream of batch items' outcomes gathers, as a multiple of the gather (so 200 ms): a
 * gather ended 50 ms after its first outcome stored 1,000 small batch jobs in some 57 transactions of
 * 9 statements each, some 17 outcomes a store, on a loaded 2-core machine (docs/decisions.md §6, "What a
 * small job costs besides its draws", a third look).
 */
const STORE_GATHER_MAX_FACTOR = 4;
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

/** An outcome waiting for its store; `at`: when it came (performance.now()). */
interface Waiting {
  job: Job;
  outcome: RunOutcome | undefined;
  at: number;
  stored: () => void;
}

/**
 * When a gather ends (performance.now()): a gather after the last outcome, and no later than its longest
 * after the oldest waiting one; that is one gather while a single simulation's outcome waits, or while
 * fewer jobs still run than outcomes wait: the engine's work is running out (a worker holding few jobs,
 * PGlite's 16), and the slots the store frees are claimed again only once it has ended.
 */
function gatherEndOf(
  waiting: readonly Waiting[],
  lastOutcomeAt: number,
  gatherMs: number,
  held: number,
): number {
  const interactive = waiting.some(({ job }) => job.batchId === null);
  const engineBusy = held - waiting.length >= waiting.length;
  const longest = gatherMs * (interactive || !engineBusy ? 1 : STORE_GATHER_MAX_FACTOR);
  return Math.min(lastOutcomeAt + gatherMs, waiting[0]!.at + longest);
}

export function makeOutcomeStore(options: OutcomeStoreOptions): OutcomeStore {
  const waiting: Waiting[] = [];
  let storing: Promise<void> | null = null;
  /** The wait before a store while other jobs run, if one is under way, and when it ends. */
  let gathering: NodeJS.Timeout | null = null;
  let gatheringUntil = Number.POSITIVE_INFINITY;
  /** When the last outcome came (performance.now()): an outcome soon after another is in a stream. */
  let lastOutcomeAt = Number.NEGATIVE_INFINITY;
  const gatherEnd = () => gatherEndOf(waiting, lastOutcomeAt, options.gatherMs, options.jobsHeld());

  /**
   * Whether the waiting outcomes gather on: few, in a stream, other jobs of the worker still running (more
   * may come soon), the worker not stopping.
   */
  function gathers(streaming: boolean): boolean {
    return (
      streaming &&
      options.jobsHeld() > waiting.length &&
      waiting.length < STORE_GATHER_OUTCOMES &&
      !options.stopping()
    );
  }

  /**
   * (Re)arms the gather's timer for its end; as it fires, a store starts unless the gather goes on (an
   * outcome that came meanwhile moved its end on).
   */
  function gather(): void {
    if (gathering) clearTimeout(gathering);
    gatheringUntil = gatherEnd();
    gathering = setTimeout(
      () => {
        gathering = null;
        if (storing || waiting.length === 0) return;
        if (gathers(true) && gatherEnd() > performance.now()) gather();
        else start();
      },
      Math.max(0, gatheringUntil - performance.now()),
    );
  }

  /**
   * Starts a store of the waiting outcomes, or lets them gather (`gathers`); nothing while a store is
   * under way (its end schedules the next). A gather under way is left to its timer, unless its end came
   * sooner (a single simulation's outcome, the engine's work running out).
   */
  function schedule(streaming: boolean): void {
    if (storing || waiting.length === 0) return;
    if (gathers(streaming)) {
      if (!gathering || gatherEnd() < gatheringUntil) gather();
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
        const now = performance.now();
        waiting.push({ job, outcome, at: now, stored: resolve });
        const streaming = now - lastOutcomeAt < options.gatherMs;
        lastOutcomeAt = now;
        schedule(streaming);
      });
    },
  };
}
