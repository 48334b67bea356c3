// The job queue (docs/decisions.md §6) as one object for the submissions, deliveries, views, the worker
// and the sweeper: the one door to the jobs and batches tables (jobs live in PostgreSQL beside their
// credit holds). The statements are in job-store.ts (inserts, reads, delivery and expiry), batch-store.ts
// (batches, their pages and lists), delivery-locks.ts and leases.ts (claims, leases, completion);
// waits.ts wakes waiters.
import type { Owner } from '../accounts/keys.js';
import type { Ledger } from '../billing/ledger.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import {
  batchesByIds,
  batchJobsFrom,
  cancelUnstartedItems,
  getOwnedBatch,
  listBatches,
  listJobs,
  tallyBatchJobs,
} from './batch-store.js';
import { lockJobsForDelivery } from './delivery-locks.js';
import {
  countJobsByState,
  countOpenJobGroups,
  countQueuedJobs,
  getBatch,
  getJob,
  getOwnedJob,
  insertBatch,
  insertJobs,
  lockJobForDelivery,
  markDeliveryOutcome,
  markDeliveryOutcomes,
  sumQueuedDraws,
} from './job-store.js';
import { type ClaimOnly, cancelledOf } from './kind-queue.js';
import {
  type CompleteOptions,
  type Completion,
  claimJobs,
  completeJob,
  completeJobs,
  type FailOptions,
  failJob,
  heartbeat,
  JOBS_TABLE,
  lockOwnedJob,
  MAX_ATTEMPTS,
  type RescueOutcome,
  recordProgress,
  releaseJobs,
  rescueExpiredLeases,
  startJobs,
} from './leases.js';
import type {
  Batch,
  BatchJobTally,
  BatchStatusItem,
  Job,
  JobError,
  JobEvents,
  JobStoreDeps,
  ListPage,
  NewBatch,
  NewJob,
} from './types.js';
import { type JobWaits, makeJobWaits } from './waits.js';

export interface JobQueue {
  enqueue(tx: TransactionSql, job: NewJob): Promise<Job>;
  /** A batch row and its jobs; `batchId` of the jobs is set from the batch. */
  enqueueBatch(
    tx: TransactionSql,
    batch: NewBatch,
    jobs: readonly NewJob[],
  ): Promise<{ batch: Batch; jobs: Job[] }>;
  /**
   * Claims up to `n` queued jobs under this worker's lease, and while the draws claimed before each are
   * fewer than `draws` (default: no bound); the first is always taken. Claimed jobs are not started yet.
   */
  claim(workerId: string, n: number, leaseMs: number, draws?: number, only?: ClaimOnly): Promise<Job[]>;
  /**
   * Marks jobs this worker holds as started (the engine begins them): the ids it may start. A job that a
   * batch's cancel took first is not among them, and must not be run.
   */
  start(workerId: string, jobIds: readonly string[]): Promise<string[]>;
  /** Extends the leases this worker still holds; returns the ids it still holds. */
  heartbeat(workerId: string, jobIds: readonly string[], leaseMs: number): Promise<string[]>;
  /** Of `jobIds`, those a batch's cancel took (kind-queue.ts KindQueue.cancelledOf). */
  cancelledOf(jobIds: readonly string[]): Promise<string[]>;
  progress(jobId: string, drawsDone: number, workerId?: string): Promise<void>;
  /** Running job whose lease `workerId` holds, locked until `tx` ends; null when it is no longer its. */
  lockOwnedJob(tx: TransactionSql, jobId: string, workerId: string): Promise<Job | null>;
  /** succeeded; null (a no-op) when the job is not running or, with workerId, not under that lease. */
  complete(jobId: string, options: CompleteOptions): Promise<Job | null>;
  /** complete for a worker's pack in `tx`: the jobs still under its lease, in one statement per table. */
  completeMany(tx: TransactionSql, workerId: string, completions: readonly Completion[]): Promise<Job[]>;
  /** failed, from queued or running; null (a no-op) otherwise. */
  fail(jobId: string, error: JobError, options?: FailOptions): Promise<Job | null>;
  rescueExpiredLeases(now?: Date): Promise<RescueOutcome>;
  /** Running jobs of this worker back to queued at once (shutdown); the ids queued again. */
  release(workerId: string, jobIds: readonly string[]): Promise<string[]>;
  /**
   * Draws of the queued jobs as last counted, at most QUEUED_DRAWS_MAX_AGE_MS ago (a count older than that
   * is refreshed in the background): what retry advice adds for a job still waiting.
   */
  queuedDraws(): number;
  /** Jobs by state (queued, running, succeeded awaiting delivery): the queue-depth metric. */
  depth(): Promise<Record<string, number>>;
  get(jobId: string, options?: { tx?: TransactionSql | undefined }): Promise<Job | null>;
  /** Resolves when the job leaves queued/running or the time is up (then with its current state). */
  waitFor(jobId: string, timeoutMs: number): Promise<Job | null>;
  /** Queued + running jobs of the organisation, a batch counting once (docs/api.md §8). */
  openJobCount(orgId: string, options?: { tx?: TransactionSql | undefined }): Promise<number>;
  /**
   * The batch of this organisation and key mode, with its items as its status shows them (each delivered
   * one with its charge); null for anyone else's.
   */
  getBatch(batchId: string, owner: Owner): Promise<{ batch: Batch; items: BatchStatusItem[] } | null>;
  /**
   * Cancels a batch of `owner` in `tx`: its jobs no engine has started (queued, or claimed and not yet
   * started) become cancelled, returned for the caller to release their holds in the same transaction;
   * null when the batch is not theirs.
   */
  cancelUnstarted(
    tx: TransactionSql,
    batchId: string,
    owner: Owner,
  ): Promise<{ batch: Batch; cancelled: Job[] } | null>;
  /** Jobs waiting to run (the queue bound of admission). */
  countQueued(): Promise<number>;
  /** The job when it belongs to `owner` and carries its reservation; null for anyone else's. */
  getOwned(jobId: string, owner: Owner & { reservationId: string }): Promise<Job | null>;
  /** A job's delivery lock, taken before its organisation's account (docs/decisions.md §6). */
  lockForDelivery(tx: TransactionSql, jobId: string): Promise<Job | null>;
  /**
   * A results page's jobs, as the page read them succeeded, locked for delivery in one statement, in id
   * order: the rows with their status as locked (delivery-locks.ts).
   */
  lockManyForDelivery(tx: TransactionSql, jobs: readonly Job[]): Promise<Job[]>;
  /** succeeded → delivered or expired, under the delivery lock. */
  markDeliveryOutcome(tx: TransactionSql, jobId: string, status: DeliveryOutcome): Promise<Job>;
  /** markDeliveryOutcome for many locked jobs in one statement: the rows given, with their new status. */
  markDeliveryOutcomes(tx: TransactionSql, jobs: readonly Job[], status: DeliveryOutcome): Promise<Job[]>;
  /** The batch row of `owner`; null for anyone else's. */
  getOwnedBatch(batchId: string, owner: Owner): Promise<Batch | null>;
  /** Up to `limit` of a batch's jobs from position `from`, in position order (a results page). */
  batchJobsFrom(batchId: string, from: number, limit: number): Promise<Job[]>;
  /** The organisation's jobs and batches (key mode `owner.mode`), newest first (docs/decisions.md §6). */
  listJobs(owner: Owner, page: ListPage): Promise<Job[]>;
  listBatches(owner: Owner, page: ListPage): Promise<Batch[]>;
  /** Each batch's jobs counted by status, and when its last one finished. */
  tallyBatchJobs(batchIds: readonly string[]): Promise<Map<string, BatchJobTally>>;
  /** Calls `onWork` when jobs are queued (this process directly; others by NOTIFY on a server). */
  listenForWork(onWork: () => void): Promise<() => Promise<void>>;
  /** Shutdown: every wait ends now with the job's current state, and later ones at once. */
  endWaits(): void;
  close(): Promise<void>;
}

type DeliveryOutcome = 'delivered' | 'expired';

/**
 * Batches by id and their jobs counted by status, read in `db`: in the transaction that ended some of
 * their jobs (src/webhooks/batch-completions.ts decides batch.completed there, where no JobQueue exists
 * yet: the queue is built with the webhooks' outbox).
 */
export async function batchTalliesIn(
  db: Sql | TransactionSql,
  batchIds: readonly string[],
): Promise<{ batches: Batch[]; tallies: Map<string, BatchJobTally> }> {
  const batches = await batchesByIds(db, batchIds);
  return { batches, tallies: await tallyBatchJobs(db, batchIds) };
}

/** How old the queued draws figure of retry advice may be. */
const QUEUED_DRAWS_MAX_AGE_MS = 1000;

export interface JobQueueDeps {
  sql: Sql;
  ledger: Pick<Ledger, 'setHoldExpiry' | 'setHoldsExpiry'>;
  clock?: () => Date;
  /** HOLD_TTL_SECONDS: how long a finished job's hold waits for delivery. */
  holdTtlSeconds: number;
  /** True on a PostgreSQL server (LISTEN/NOTIFY reach other processes); false on PGlite. */
  notifications: boolean;
  /** The webhooks' outbox, told of jobs that ended in the transaction that ended them. */
  events?: JobEvents | undefined;
  maxAttempts?: number;
  /** How often waitFor polls: a fallback to the wake-ups of waits.ts. */
  pollMs?: number;
  /**
   * The waits of every job kind (made in src/wiring.ts and shared with the projections); made here from
   * `notifications` and `pollMs` when not given. Closed with the queue.
   */
  waits?: JobWaits | undefined;
}

export function makeJobQueue(options: JobQueueDeps): JobQueue {
  const waits =
    options.waits ??
    makeJobWaits({
      sql: options.sql,
      notifications: options.notifications,
      pollMs: options.pollMs ?? 1000,
    });
  const deps: JobStoreDeps = {
    sql: options.sql,
    ledger: options.ledger,
    clock: options.clock ?? (() => new Date()),
    holdTtlSeconds: options.holdTtlSeconds,
    wake: waits.wake,
    events: options.events,
  };
  const maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS;
  const queued = { draws: 0, countedAt: -Infinity, counting: false };
  const queuedDraws = () => {
    if (!queued.counting && Date.now() - queued.countedAt > QUEUED_DRAWS_MAX_AGE_MS) {
      queued.counting = true;
      sumQueuedDraws(options.sql)
        .then((draws) => Object.assign(queued, { draws, countedAt: Date.now() }))
        // A failed count keeps the last one; retry advice is advice.
        .catch(() => {})
        .finally(() => (queued.counting = false));
    }
    return queued.draws;
  };
  return {
    enqueue: async (tx, job) => (await insertJobs(deps, tx, [job]))[0]!,
    enqueueBatch: (tx, batch, jobs) => insertBatch(deps, tx, batch, jobs),
    claim: (workerId, n, leaseMs, draws, only) => claimJobs(deps, workerId, n, leaseMs, draws, only),
    start: (workerId, jobIds) => startJobs(deps, workerId, jobIds),
    heartbeat: (workerId, jobIds, leaseMs) => heartbeat(deps, workerId, jobIds, leaseMs),
    cancelledOf: (jobIds) => cancelledOf(options.sql, JOBS_TABLE, jobIds),
    progress: (jobId, drawsDone, workerId) => recordProgress(deps, jobId, drawsDone, workerId),
    lockOwnedJob,
    complete: (jobId, complete) => completeJob(deps, jobId, complete),
    completeMany: (tx, workerId, completions) => completeJobs(deps, tx, workerId, completions),
    fail: (jobId, error, fail) => failJob(deps, jobId, error, fail),
    rescueExpiredLeases: (now) => rescueExpiredLeases(deps, maxAttempts, now),
    release: (workerId, jobIds) => releaseJobs(deps, workerId, jobIds),
    queuedDraws,
    depth: () => countJobsByState(options.sql),
    get: (jobId, { tx } = {}) => getJob(tx ?? options.sql, jobId),
    waitFor: waits.waitFor,
    openJobCount: (orgId, { tx } = {}) => countOpenJobGroups(tx ?? options.sql, orgId),
    getBatch: (batchId, owner) => getBatch(options.sql, batchId, owner),
    cancelUnstarted: (tx, batchId, owner) => cancelUnstartedItems(deps, tx, batchId, owner, deps.clock()),
    countQueued: () => countQueuedJobs(options.sql),
    getOwned: (jobId, owner) => getOwnedJob(options.sql, jobId, owner),
    lockForDelivery: lockJobForDelivery,
    lockManyForDelivery: lockJobsForDelivery,
    markDeliveryOutcome,
    markDeliveryOutcomes,
    getOwnedBatch: (batchId, owner) => getOwnedBatch(options.sql, batchId, owner),
    batchJobsFrom: (batchId, from, limit) => batchJobsFrom(options.sql, batchId, from, limit),
    listJobs: (owner, page) => listJobs(options.sql, owner, page),
    listBatches: (owner, page) => listBatches(options.sql, owner, page),
    tallyBatchJobs: (batchIds) => tallyBatchJobs(options.sql, batchIds),
    listenForWork: waits.listenForWork,
    endWaits: waits.endWaits,
    close: waits.close,
  };
}
