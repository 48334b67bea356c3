// What the projection use cases take and share (docs/api.md §4.12). Each use case is a file: quote.ts,
// submit.ts, deliver.ts (the result path) and retrieve.ts; they return domain values that the HTTP layer
// turns into responses (src/http/routes/projections.ts).
import type { Ledger } from '../billing/ledger.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import type { IdempotencyRecord } from '../idempotency/store.js';
import type { OpenJobGroups } from '../jobs/call-context.js';
import type { JobWaits } from '../jobs/waits.js';
import type { UsageLimits } from '../limits/usage.js';
import type { ProjectionEvents } from './projection-worker.js';

/** docs/api.md §4.12: 1,000 to 100,000 seasons, 10,000 unless asked. */
export const DEFAULT_SEASONS = 10_000;
export const MIN_SEASONS = 1000;
export const MAX_SEASONS = 100_000;
/**
 * Seasons of one test-key projection: test keys cost nothing, so their work is bounded instead, as a
 * test-key simulation's draws are (TEST_KEY_MAX_DRAWS, docs/decisions.md §2); a request for more runs this many.
 */
export const TEST_KEY_MAX_SEASONS = 10_000;

export interface ProjectionRequest {
  competition_id: number;
  seasons?: number | undefined;
  wait_seconds?: number | undefined;
}

export interface ProjectionDeps {
  sql: Sql;
  ledger: Ledger;
  /** The organisation's open jobs of every kind: the concurrent-jobs limit counts them all. */
  openJobGroups: OpenJobGroups;
  usage: UsageLimits;
  /** Records on the idempotency record, in the creating transaction, the job this attempt created. */
  attachJob: (tx: TransactionSql, record: IdempotencyRecord, created: { jobId: string }) => Promise<void>;
  clock: () => Date;
  /** How long a succeeded job's hold waits for its delivery (HOLD_TTL_SECONDS), as the worker sets it. */
  holdTtlSeconds: number;
  /**
   * The job system's waits (made in src/wiring.ts): a job queued wakes the workers, and a submission waits
   * for its job through them, woken when the worker stores it (or polling).
   */
  waits: Pick<JobWaits, 'waitUntilDone' | 'wake'>;
  /** Told of a job born succeeded from a stored table, as the worker's are of the jobs it runs. */
  events?: ProjectionEvents | undefined;
  onCharged?: ((milli: number, livemode: boolean) => void) | undefined;
}
