// The records of the job queue (docs/decisions.md §6): jobs and the batches that group them.
import type { Owner } from '../accounts/keys.js';
import type { Ledger } from '../billing/ledger.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import type { ResultScope } from '../results/result-store.js';

export const JOB_STATUSES = [
  'queued',
  'running',
  'succeeded',
  'delivered',
  'failed',
  'expired',
  'cancelled',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export interface JobError {
  code: string;
  message: string;
  [detail: string]: unknown;
}

/**
 * What a job of every kind records of its runs (docs/ARCHITECTURE.md, "Job kinds"): its claims, the lease
 * of the worker that holds it while it runs, and when it was made, first claimed and ended.
 */
export interface JobRunFacts {
  attempts: number;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** A jobs row. */
export interface Job extends JobRunFacts, Owner {
  id: string;
  reservationId: string;
  batchId: string | null;
  batchPosition: number | null;
  fixtureId: number;
  dataVersion: string;
  draws: number;
  seed: string;
  /** What the job carries for the engine and its delivery (src/simulations/run-payload.ts). */
  inputs: unknown;
  cacheKey: string;
  scope: ResultScope;
  priceMilli: number;
  status: JobStatus;
  drawsDone: number;
  resultId: number | null;
  error: JobError | null;
  /** The UTC day (YYYY-MM-DD) whose GPU budget the job reserved from. */
  usageDay: string;
  gpuSecondsReserved: number;
  gpuSecondsUsed: number | null;
  engine: string | null;
  requestId: string;
  idempotencyKey: string | null;
  /** The client's name for a batch item, unique within its batch. */
  customId: string | null;
  /** The metadata the job was submitted with (its own, or its batch's); null when none was given. */
  metadata: Metadata | null;
  /**
   * The weight of its lane in the engine's fair shares, as the claim that took it read it (kind-queue.ts
   * Claimed; its organisation's plan); absent on a job not read by a claim.
   */
  laneWeight?: number | undefined;
}

/** Up to 16 string pairs a client attaches to a simulation or a batch (docs/api.md §4.5). */
export type Metadata = Record<string, string>;

export interface NewJob extends Owner {
  /** Chosen by the caller when it must be known before the insert; default a new `job_…`. */
  id?: string | undefined;
  /** The hold's id for live keys (reserve it in the same transaction); a new `res_…` for test keys. */
  reservationId: string;
  batchId?: string | null | undefined;
  fixtureId: number;
  dataVersion: string;
  draws: number;
  seed: string | number | bigint;
  inputs: unknown;
  cacheKey: string;
  scope: ResultScope;
  /** Milli-credits held for the job; 0 for test keys. */
  priceMilli: number;
  /** From the admission (src/limits/usage.ts): the day and the GPU-seconds reserved for this job. */
  usageDay?: string | undefined;
  gpuSecondsReserved?: number | undefined;
  requestId: string;
  idempotencyKey?: string | null | undefined;
  /** A cache hit: the job is born succeeded with this result and never queued. */
  cachedResultId?: number | null | undefined;
  /**
   * A cache hit delivered in its submitting transaction: born delivered (its hold settled at once,
   * its delivery written beside it) rather than succeeded.
   */
  deliveredAtSubmission?: boolean | undefined;
  /** A batch item's place in the request (rejected items included). */
  batchPosition?: number | undefined;
  customId?: string | null | undefined;
  metadata?: Metadata | null | undefined;
}

export interface NewBatch extends Owner {
  id?: string | undefined;
  draws: number;
  requestId: string;
  idempotencyKey?: string | null | undefined;
  /** The batch's metadata, also recorded on each of its jobs. */
  metadata?: Metadata | undefined;
  rejectedItems?: RejectedBatchItem[] | undefined;
}

/** A batches row. */
export interface Batch extends Owner {
  id: string;
  draws: number;
  itemCount: number;
  createdAt: Date;
  requestId: string;
  idempotencyKey: string | null;
  metadata: Metadata;
  /** The items that could not run, in the order they were rejected; they have no job row. */
  rejectedItems: RejectedBatchItem[];
  /** When cancellation was first asked for; null while the batch was never cancelled. */
  cancelRequestedAt: Date | null;
}

/** A batch item that could not run: its place in the request and its error body. */
export interface RejectedBatchItem {
  position: number;
  fixture: number | null;
  custom_id: string | null;
  error: { code: string; message: string; param: string | null; recovery: Record<string, unknown> | null };
}

export interface JobStoreDeps {
  sql: Sql;
  clock: () => Date;
  /** HOLD_TTL_SECONDS: how long a finished job's hold waits for delivery. */
  holdTtlSeconds: number;
  /** A live job's hold gets its end when the job ends. */
  ledger: Pick<Ledger, 'setHoldExpiry' | 'setHoldsExpiry'>;
  /** This process's worker and waiters, woken on commit (waits.ts); other processes hear NOTIFY. */
  wake?: JobWakeUps | undefined;
  /** Told, in the transaction that ended them, of jobs that left queued/running (the webhooks' outbox). */
  events?: JobEvents | undefined;
}

/**
 * The outbox of src/webhooks/outbox.ts as the job statements see it: called in the transaction that
 * ended the jobs (succeeded, delivered at birth, failed, cancelled), so the events commit with the change.
 */
export interface JobEvents {
  jobsEnded(tx: TransactionSql, jobs: readonly Job[]): Promise<void>;
}

/** In-process wake-ups: the worker for queued jobs, the requests waiting for a finished one. */
export interface JobWakeUps {
  queued(): void;
  finished(jobId: string): void;
  /**
   * Names this process's wake-ups in the NOTIFY of jobs queued, whose listener here then skips it:
   * `queued` has already woken this process's worker at the commit (waits.ts).
   */
  origin: string;
}

export function isOpenStatus(status: JobStatus): boolean {
  return status === 'queued' || status === 'running';
}

/** How many jobs of each batch are in each status, and when the last of them finished. */
export interface BatchJobTally {
  counts: Partial<Record<JobStatus, number>>;
  lastFinishedAt: Date | null;
}

export interface ListPage {
  limit: number;
  /** The id of the last row of the previous page: the page starts after it. */
  startingAfter?: string | undefined;
  status?: string | undefined;
}

/** A batch's status as the API names it (docs/decisions.md §6), from its open jobs and its cancellation. */
export const BATCH_STATUSES = ['in_progress', 'completed', 'cancelling', 'cancelled'] as const;
export type BatchStatusName = (typeof BATCH_STATUSES)[number];

/** What a batch's status shows of each item (docs/api.md §2.6), and what its counts follow from. */
export type BatchItemJob = Pick<
  Job,
  | 'id'
  | 'mode'
  | 'batchPosition'
  | 'fixtureId'
  | 'draws'
  | 'priceMilli'
  | 'status'
  | 'drawsDone'
  | 'scope'
  | 'reservationId'
  | 'error'
  | 'customId'
  | 'finishedAt'
>;

/** A batch item as its status reads it: the job, and what its delivery charged (0 before it is delivered). */
export type BatchStatusItem = BatchItemJob & { creditsChargedMilli: number };

/** The log lines of the worker and its parts (src/logger.ts gives one; tests a silent one). */
export interface WorkerLogger {
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}
