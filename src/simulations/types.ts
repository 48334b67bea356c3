// What the simulation use cases take and share (docs/api.md §4.3-4.5, §4.8). Each use case is a file:
// quote.ts, submit.ts, submit-batch.ts, deliver.ts (the result path) and batch-status.ts; they return
// domain values that the HTTP layer turns into responses.
import type { Ledger } from '../billing/ledger.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import type { MarketFit } from '../engine/market-fit.js';
import type { FromState, MarketInputs, MatchInputs } from '../engine-contract/match-inputs.js';
import type { LineupsRequest } from '../fixtures/lineups.js';
import type { FixtureReadCache } from '../fixtures/read-cache.js';
import type { IdempotencyRecord } from '../idempotency/store.js';
import type { OpenJobGroups } from '../jobs/call-context.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Metadata } from '../jobs/types.js';
import type { UsageLimits } from '../limits/usage.js';
import type { KnownResults } from '../results/result-store.js';
import type { MarketRequest, OfferedOddsRequest } from './market-request.js';

/** Queued jobs beyond which new submissions answer engine_overloaded. */
export const QUEUE_BOUND = 20_000;
export const DEFAULT_DRAWS = 1000;

/** How a request names its fixture: by id, or by team names and an optional day. */
export interface FixtureSelector {
  fixture_id?: number | string | undefined;
  home?: string | undefined;
  away?: string | undefined;
  date?: string | undefined;
  lineups?: LineupsRequest | undefined;
  /** Bookmaker odds to fit the run to (market-request.ts). */
  market?: MarketRequest | undefined;
  /** Odds offered to the client, priced in the document's value section. */
  offered_odds?: OfferedOddsRequest | undefined;
  /** The in-play state to simulate the rest of the match from (state-request.ts). */
  from_state?: FromState | undefined;
}

export interface SimulationRequest extends FixtureSelector {
  draws?: number | undefined;
  wait_seconds?: number | undefined;
  metadata?: Metadata | undefined;
}

/** A batch item: its selector and the client's name for it (unique within the batch). */
export interface BatchItemRequest extends FixtureSelector {
  custom_id?: string | undefined;
}

export interface BatchRequest {
  fixtures: BatchItemRequest[];
  draws?: number | undefined;
  metadata?: Metadata | undefined;
}

/** What the simulations need to know of the engine that will run their jobs. */
export interface EngineGate {
  estimateSeconds(draws: number): number;
  /** Draws of the jobs waiting in the queue, as last counted (at most a second ago); 0 when unknown. */
  queuedDraws?: (() => number) | undefined;
  /** Throws engine_cold_start / engine_unavailable when new work cannot be taken. */
  assertAvailable(): void;
  /**
   * A fitted run's market fit (src/engine/compile.ts marketFitOfInputs) on the job threads of this
   * process's engine; absent where it runs none (market-request.ts marketFitFor then fits on the event
   * loop).
   */
  fitMarket?: ((match: MatchInputs & { market: MarketInputs }) => Promise<MarketFit>) | undefined;
}

export interface SimulationDeps {
  sql: Sql;
  /**
   * The fixture a request names by id, and the freshness facts of a batch status's fixtures, from the
   * process's read cache (src/fixtures/read-cache.ts: emptied by feed loads here at once and elsewhere
   * through NOTIFY); without it, read from the database.
   */
  fixtures?: Pick<FixtureReadCache, 'fixture' | 'freshnessFacts'> | undefined;
  ledger: Ledger;
  queue: JobQueue;
  /** The results rows this process has read or written (src/results/known-results.ts). */
  knownResults: KnownResults;
  usage: UsageLimits;
  /** Records on the idempotency record, in the creating transaction, what this attempt created. */
  attachJob: (
    tx: TransactionSql,
    record: IdempotencyRecord,
    created: { jobId: string } | { batchId: string },
  ) => Promise<void>;
  engine: EngineGate;
  clock: () => Date;
  onCharged?: ((milli: number, livemode: boolean) => void) | undefined;
  /** The organisation's open jobs of every kind: the concurrent-jobs limit counts them all. */
  openJobGroups: OpenJobGroups;
  /** After a delivery that wrote a fixture summary committed: the fixture list's cached pages go. */
  onSummariesChanged?: (() => void) | undefined;
  /** Queued jobs beyond which submissions answer engine_overloaded. */
  queueBound: number;
}
