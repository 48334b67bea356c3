// The projection job kind's handler (docs/ARCHITECTURE.md, "Job kinds"): runs a claimed job's seasons off
// the event loop (season-runner.ts) and stores the outcome under its lease, on the worker of every kind
// (src/jobs/kind-worker.ts: claims, heartbeat, drain, wake-ups) and the queue of every kind on its table
// (src/jobs/kind-queue.ts, PROJECTION_JOBS_TABLE). A succeeded live job's hold gets its end (HOLD_TTL
// after the job's end), as a simulation's does; a failed job's hold is released. Started beside the
// simulations' worker by roles worker and all, through src/wiring.ts.
import type { Ledger } from '../billing/ledger.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { inTransaction } from '../db/transactions.js';
import { announceFinished } from '../jobs/job-news.js';
import { tableQueue } from '../jobs/kind-queue.js';
import { type KindWorker, startKindWorker } from '../jobs/kind-worker.js';
import type { WorkerLogger } from '../jobs/types.js';
import type { JobWaits } from '../jobs/waits.js';
import { buildProjectionContent, samplerInput } from './projection-document.js';
import {
  claimProjectionJob,
  finishProjectionJob,
  PROJECTION_JOBS_TABLE,
  type ProjectionJob,
  type StoredSeason,
} from './projection-store.js';
import type { RunSeasons } from './season-runner.js';

/** A lease far longer than a run (100,000 seasons from round 1 take about 6 s on one core), and extended. */
const LEASE_MS = 120_000;
/** Claims of one job after which it fails instead of running again (its runs never stored an outcome). */
const MAX_ATTEMPTS = 3;
/** How often an idle worker looks for jobs queued by other processes. */
const IDLE_POLL_MS = 1000;

/**
 * Told of a projection job that succeeded, in the transaction that stores it (the webhooks'
 * projection.succeeded, filled by src/wiring.ts: src/projections sits below src/webhooks).
 */
export interface ProjectionEvents {
  projectionSucceeded(tx: TransactionSql, job: ProjectionJob): Promise<void>;
}

export interface ProjectionWorkerDeps {
  sql: Sql;
  events?: ProjectionEvents | undefined;
  ledger: Pick<Ledger, 'setHoldExpiry' | 'release'>;
  runSeasons: RunSeasons;
  clock: () => Date;
  workerId: string;
  holdTtlSeconds: number;
  /** The worker's log lines (src/logger.ts); none by default. */
  logger?: WorkerLogger | undefined;
  /**
   * The job system's waits (made in src/wiring.ts): news of queued jobs wakes this worker, and a finished
   * job's wakes the requests waiting for it. Without them both sides poll.
   */
  waits?: Pick<JobWaits, 'listenForWork' | 'wake'> | undefined;
}

export type ProjectionWorker = KindWorker;

export function seasonFromStored(stored: StoredSeason) {
  return { ...stored, asOf: stored.asOf === null ? null : new Date(stored.asOf) };
}

/** Claims one queued job (or one whose lease ran out) and runs it; false when none was claimed. */
export function makeProjectionRunner(deps: ProjectionWorkerDeps): () => Promise<boolean> {
  return async () => {
    const job = await claimProjectionJob(deps.sql, {
      workerId: deps.workerId,
      now: deps.clock(),
      leaseMs: LEASE_MS,
    });
    if (!job) return false;
    await runProjection(deps, job);
    return true;
  };
}

/** The kind's handler: runs a claimed job and stores its outcome (a job claimed too often fails unrun). */
async function runProjection(deps: ProjectionWorkerDeps, job: ProjectionJob): Promise<void> {
  if (job.attempts > MAX_ATTEMPTS) {
    await finishOutcome(deps, job, {
      status: 'failed',
      error: { message: 'the projection did not finish' },
    });
    return;
  }
  const season = seasonFromStored(job.inputs);
  const tally = await deps.runSeasons(samplerInput(season), job.seasons, job.seed).catch((error: unknown) => {
    deps.logger?.error({ err: error, job_id: job.id, worker_id: deps.workerId }, 'projection job failed');
    return null;
  });
  // A failure to store the outcome is left to the lease: the job is claimed and run again.
  if (tally)
    await finishOutcome(deps, job, { status: 'succeeded', result: buildProjectionContent(season, tally) });
  else await finishOutcome(deps, job, { status: 'failed', error: { message: 'the season sampler failed' } });
}

const silentLogger: WorkerLogger = { info() {}, warn() {}, error() {} };

/**
 * Runs jobs one at a time until stopped, on the worker of every kind (src/jobs/kind-worker.ts): at once
 * when a job is queued (this process's commit, or a NOTIFY on a server), else polling every second.
 */
export function startProjectionWorker(deps: ProjectionWorkerDeps): ProjectionWorker {
  return startKindWorker<ProjectionJob>({
    kind: {
      queue: tableQueue<ProjectionJob>(
        { sql: deps.sql, clock: deps.clock, wake: deps.waits?.wake },
        PROJECTION_JOBS_TABLE,
      ),
      handler: () => async (jobs) => {
        for (const job of jobs) await runProjection(deps, job);
      },
    },
    workerId: deps.workerId,
    logger: deps.logger ?? silentLogger,
    concurrency: 1,
    packSize: 1,
    pollMs: IDLE_POLL_MS,
    leaseMs: LEASE_MS,
    maintenanceMs: IDLE_POLL_MS * 5,
    clock: deps.clock,
    waits: deps.waits,
  });
}

/** The job's outcome and its hold's fate in one transaction. */
async function finishOutcome(
  deps: ProjectionWorkerDeps,
  job: ProjectionJob,
  outcome:
    | { status: 'succeeded'; result: ProjectionJob['result'] & object }
    | { status: 'failed'; error: { message: string } },
): Promise<void> {
  const now = deps.clock();
  await inTransaction(deps.sql, {}, async (tx) => {
    const finished = await finishProjectionJob(tx, job.id, { ...outcome, workerId: deps.workerId, now });
    if (finished && outcome.status === 'succeeded') {
      const succeeded = { ...job, status: 'succeeded' as const, result: outcome.result, finishedAt: now };
      await deps.events?.projectionSucceeded(tx, { ...succeeded, leaseOwner: null, leaseExpiresAt: null });
    }
    // A job without a hold (a test key, or nothing left to simulate) has no hold to end or release.
    if (!finished || job.priceMilli === 0) {
      if (finished) await announceFinished({ wake: deps.waits?.wake }, tx, [job.id]);
      return;
    }
    if (outcome.status === 'succeeded') {
      await deps.ledger.setHoldExpiry(
        job.reservationId,
        new Date(now.getTime() + deps.holdTtlSeconds * 1000),
        {
          tx,
        },
      );
    } else {
      await deps.ledger.release(job.reservationId, 'projection_failed', { tx });
    }
    await announceFinished({ wake: deps.waits?.wake }, tx, [job.id]);
  });
}
