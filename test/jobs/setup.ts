// Shared set-up of the queue, worker and fault tests: the real queue, ledger and result store over a
// test database, jobs made the way a submission makes them (hold and job in one transaction), and a
// deterministic engine stand-in whose document is a pure function of the job's seed and inputs.
import { createHash } from 'node:crypto';
import type { Caller } from '../../src/accounts/caller.js';
import { type Ledger, makeLedger } from '../../src/billing/ledger.js';
import type { Sql } from '../../src/db/connection.js';
import { documentSummary } from '../../src/engine/document-schema.js';
import type { EngineJob, RunBatch, RunOutcome } from '../../src/engine/runner.js';
import { storedDocument } from '../../src/engine/stored-document.js';
import { newId } from '../../src/ids.js';
import { recordOutcomes } from '../../src/jobs/job-outcomes.js';
import { type JobQueue, makeJobQueue } from '../../src/jobs/queue.js';
import { type HoldSweeper, makeHoldSweeper } from '../../src/jobs/sweeper.js';
import type { Job, NewJob } from '../../src/jobs/types.js';
import { makeKnownResults } from '../../src/results/known-results.js';
import type { KnownResults } from '../../src/results/result-store.js';
import {
  type DeliveryDeps,
  deliverJob,
  deliverResult,
  type JobOutcome,
} from '../../src/simulations/deliver.js';
import type { TestDatabase } from '../helpers/database.js';

export const HOLD_TTL_SECONDS = 3600;

export interface SimParts {
  sql: Sql;
  ledger: Ledger;
  queue: JobQueue;
  /** The results rows the deliveries (and the workers given it) have read or written. */
  knownResults: KnownResults;
  sweeper: HoldSweeper;
  /** What the result path delivers with (src/simulations/deliver.ts). */
  delivery: DeliveryDeps;
}

export function makeSimParts(db: TestDatabase, clock: () => Date = () => new Date()): SimParts {
  const ledger = makeLedger({ sql: db.sql, clock });
  const queue = makeJobQueue({
    sql: db.sql,
    ledger,
    clock,
    holdTtlSeconds: HOLD_TTL_SECONDS,
    notifications: db.kind === 'server',
    pollMs: 20,
  });
  const sweeper = makeHoldSweeper({ sql: db.sql, ledger, clock, holdTtlSeconds: HOLD_TTL_SECONDS });
  const knownResults = makeKnownResults();
  const delivery: DeliveryDeps = {
    sql: db.sql,
    ledger,
    queue,
    knownResults,
    clock,
    engine: { estimateSeconds: (draws) => draws * 1e-6, assertAvailable() {} },
  };
  return { sql: db.sql, ledger, queue, knownResults, sweeper, delivery };
}

/** The result path for a job, as a request with this id (and Idempotency-Key) follows it. */
export function deliver(
  parts: SimParts,
  job: Job,
  requestId = 'req_deliver',
  idempotencyKey: string | null = null,
): Promise<JobOutcome> {
  return deliverJob(parts.delivery, { requestId, idempotencyKey }, job);
}

/** GET on a job's result path by an organisation (key mode `mode`): its ownership is checked first. */
export function followResultPath(
  parts: SimParts,
  owner: { orgId: string; mode?: 'live' | 'test' },
  job: { id: string; reservationId: string },
  requestId = 'req_deliver',
): Promise<JobOutcome> {
  const caller = { org: { id: owner.orgId }, mode: owner.mode ?? 'live' } as Caller;
  const ctx = { caller, requestId, idempotencyKey: null, idempotency: null };
  return deliverResult(parts.delivery, ctx, job.id, job.reservationId);
}

export interface SubmitOptions {
  mode?: 'live' | 'test';
  draws?: number;
  fixtureId?: number;
  dataVersion?: string;
  scope?: 'shared' | 'private';
  cacheKey?: string;
  inputs?: unknown;
  cachedResultId?: number;
}

/** A submission as the route makes it: the hold (live) and the job in one transaction. */
export async function submitJob(parts: SimParts, orgId: string, options: SubmitOptions = {}): Promise<Job> {
  const draws = options.draws ?? 1000;
  const mode = options.mode ?? 'live';
  const inputs = options.inputs ?? { home: 'Arsenal', away: 'Chelsea', nonce: newId('req') };
  return parts.sql.begin(async (tx) => {
    const reservationId = newId('res');
    if (mode === 'live')
      await parts.ledger.reserve(orgId, draws, { holdId: reservationId, requestId: 'req_test', tx });
    return parts.queue.enqueue(tx, newJob(orgId, { ...options, draws, mode, inputs, reservationId }));
  });
}

/**
 * A live batch of `items` jobs of `draws` draws (1,000) as a batch submission makes it: each item's hold
 * and the batch with its jobs in one transaction. Item i runs fixture `fixtureFrom` + i with inputs
 * `{ orgId, i }`.
 */
export async function submitLiveBatch(
  parts: SimParts,
  orgId: string,
  items: number,
  fixtureFrom = 2000,
  draws = 1000,
) {
  return parts.sql.begin(async (tx) => {
    const jobs: NewJob[] = [];
    for (let i = 0; i < items; i++) {
      const reservationId = newId('res');
      await parts.ledger.reserve(orgId, draws, { holdId: reservationId, requestId: 'req_batch', tx });
      jobs.push(
        newJob(orgId, {
          reservationId,
          draws,
          mode: 'live',
          inputs: { orgId, i },
          fixtureId: fixtureFrom + i,
        }),
      );
    }
    return parts.queue.enqueueBatch(tx, { orgId, mode: 'live', draws, requestId: 'req_batch' }, jobs);
  });
}

export function newJob(
  orgId: string,
  options: SubmitOptions & { reservationId: string; draws: number; mode: 'live' | 'test'; inputs: unknown },
): NewJob {
  const fixtureId = options.fixtureId ?? 1001;
  const dataVersion = options.dataVersion ?? 'dv1';
  return {
    orgId,
    mode: options.mode,
    reservationId: options.reservationId,
    fixtureId,
    dataVersion,
    draws: options.draws,
    seed: seedOf(options.inputs),
    inputs: options.inputs,
    cacheKey: options.cacheKey ?? `${fixtureId}:${dataVersion}:${options.draws}:${seedOf(options.inputs)}`,
    scope: options.scope ?? 'shared',
    priceMilli: options.mode === 'live' ? options.draws : 0,
    gpuSecondsReserved: 0,
    requestId: 'req_test',
    cachedResultId: options.cachedResultId ?? null,
  };
}

function seedOf(inputs: unknown): string {
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
}

/** The stand-in document: a pure function of the job's seed and draws (same inputs, same document). */
export function documentFor(job: Pick<Job, 'seed' | 'draws'>) {
  const digest = createHash('sha256').update(`${job.seed}:${job.draws}`).digest();
  const a = digest.readUInt16BE(0) + 1;
  const b = digest.readUInt16BE(2) + 1;
  const c = digest.readUInt16BE(4) + 1;
  const total = a + b + c;
  return {
    schema: 'vendor.simulation.v1',
    basis: { draws: job.draws, seed: job.seed },
    result: { home_win: a / total, draw: b / total, away_win: c / total, calibrated: false },
    goals: { expected: { home: 1 + a / 65536, away: 1 + b / 65536 } },
  };
}

/** Each claimed job's successful outcome as the engine hands it to the worker, with documentFor's document. */
export function succeededOutcomes(claimed: readonly Job[]) {
  return claimed.map((job) => {
    const document = documentFor(job);
    return {
      job,
      outcome: {
        jobId: job.id,
        summary: documentSummary(document),
        document: storedDocument(JSON.stringify(document)),
        engine: 'cpu' as const,
        runMs: 1,
        gpuMs: 0,
      },
    };
  });
}

/** Jobs claimed by worker `workerId`, stored succeeded as its worker stores them, each with documentFor's document. */
export async function storeSucceeded(
  parts: SimParts,
  claimed: readonly Job[],
  workerId = 'w',
): Promise<void> {
  await recordOutcomes(
    {
      queue: parts.queue,
      sql: parts.sql,
      knownResults: parts.knownResults,
      workerId,
      clock: () => new Date(),
    },
    succeededOutcomes(claimed),
  );
}

/** A deterministic engine: every job succeeds with documentFor, unless `failWhen` says otherwise. */
export function deterministicEngine(
  options: { runs?: string[]; failWhen?: (job: EngineJob) => boolean; delayMs?: number } = {},
): RunBatch {
  return async (jobs, context) => {
    const outcomes: RunOutcome[] = [];
    for (const job of jobs) {
      options.runs?.push(job.id);
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      await context.progress(job.id, job.draws);
      if (options.failWhen?.(job)) {
        outcomes.push({
          jobId: job.id,
          error: { code: 'simulation_failed', message: 'engine refused the inputs' },
        });
      } else {
        const document = documentFor(job);
        outcomes.push({
          jobId: job.id,
          summary: documentSummary(document),
          document: storedDocument(JSON.stringify(document)),
          engine: 'cpu',
          runMs: 3,
          gpuMs: 0,
        });
      }
    }
    return outcomes;
  };
}

export async function chargeRows(sql: Sql, holdId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM credit_ledger WHERE hold_id = ${holdId} AND kind = 'charge'`;
  return row!.n;
}
