// Running jobs (docs/decisions.md §6): workers claim queued jobs with one `FOR UPDATE SKIP LOCKED`
// statement and keep a lease that a heartbeat extends; a job whose worker died is queued again when its
// lease runs out, and failed after MAX_ATTEMPTS claims.
//
// When a job ends (succeeded or failed) its hold gets an end: finished_at + HOLD_TTL (docs/decisions.md
// §2), its reserved GPU-seconds are replaced by the measured time, and the requests waiting for it are
// woken, all in the transaction of the status change.
import type { TransactionSql } from '../db/connection.js';
import { gpuSecondsToMs, settleGpuUsage, settleGpuUsages } from '../limits/daily-usage.js';
import { announcedWith, announceFinished, wakeOnFinish } from './job-news.js';
import { holdEnd, jobColumns } from './job-store.js';
import {
  type ClaimOnly,
  claimFrom,
  extendLeases,
  type JobTable,
  type Rescued,
  releaseHeld,
  rescueLapsed,
} from './kind-queue.js';
import type { Job, JobError, JobStoreDeps } from './types.js';

/** Claims of one job before a lapsed lease fails it instead of queueing it again. */
export const MAX_ATTEMPTS = 3;

export interface CompleteOptions {
  resultId: number;
  gpuSecondsUsed: number;
  engine: string;
  /** Only this worker's lease may complete the job (omit for a job completed outside a worker). */
  workerId?: string | undefined;
  tx?: TransactionSql | undefined;
}

export interface FailOptions {
  workerId?: string | undefined;
  /** GPU time spent before the failure; default none, so the reservation returns to the day's budget. */
  gpuSecondsUsed?: number | undefined;
  tx?: TransactionSql | undefined;
}

export type RescueOutcome = Rescued<Job>;

/**
 * The jobs table as the queue of every kind sees it (kind-queue.ts): claims bounded by draws, lapsed
 * leases rescued by the worker's maintenance; a run that ends without its outcome undoes its progress and
 * its start mark (kept on a job that fails: it did start), and a failed one used no GPU time.
 */
export const JOBS_TABLE: JobTable = {
  name: 'jobs',
  weight: 'draws',
  lapsed: 'rescued',
  background: (db) => db`(batch_id IS NOT NULL)`,
  position: (db) => db`batch_position`,
  claimed: (db) => jobColumns(db, 'j', 'engine'),
  ended: (db) => jobColumns(db, 'j'),
  runEnded: (db, failed) => db`
    , draws_done = 0, gpu_seconds_used = CASE WHEN ${failed} THEN 0 END,
      run_started_at = CASE WHEN ${failed} THEN j.run_started_at END`,
};

/**
 * Claims up to `n` queued jobs, in the fair order (kind-queue.ts claimFrom), under `workerId`'s lease, while the draws claimed before each
 * are fewer than `draws` (the worker's room, docs/decisions.md §6 "Claims"; kind-queue.ts claimFrom). The
 * rows the claim locked and left stay queued. A claimed job is not started yet (run_started_at null): a
 * batch's cancel may take it until the worker marks it started (startJobs).
 */
export async function claimJobs(
  deps: JobStoreDeps,
  workerId: string,
  n: number,
  leaseMs: number,
  draws: number = Number.MAX_SAFE_INTEGER,
  only?: ClaimOnly,
): Promise<Job[]> {
  const claim = { workerId, n, leaseMs, now: deps.clock(), room: draws, only };
  return claimFrom<Job>(deps.sql, JOBS_TABLE, claim);
}

/**
 * Marks jobs this worker holds as started, just before the engine begins their draws: the ids it may
 * start. A job a batch's cancel took first (cancelled, its lease gone) is not among them; once marked, the
 * cancel leaves the job to finish. Both statements lock the job's row first, in id order, and each checks
 * the row as the other left it, so exactly one wins (docs/decisions.md §6 "Cancel"). Asking again for a
 * job this worker has started answers it again.
 */
export async function startJobs(
  { sql, clock }: JobStoreDeps,
  workerId: string,
  jobIds: readonly string[],
): Promise<string[]> {
  if (jobIds.length === 0) return [];
  // Locked by id alone, and those still running under this lease updated by id: as completeJobs, so that
  // the planner does not read the partial index of every running job (jobs_running_lease). Updated from
  // the locked rows joined with `status = 'running'` beside them, it did: 14 ms a mark of some 90 jobs in
  // the server's log once a few thousand jobs had run (test/jobs/job-plans.test.ts).
  const rows = await sql<{ id: string }[]>`
    WITH held AS MATERIALIZED (
      SELECT id, status, lease_owner FROM jobs
      WHERE id = ANY(${sql.array([...jobIds])}::text[])
      ORDER BY id FOR NO KEY UPDATE
    )
    UPDATE jobs j SET run_started_at = COALESCE(j.run_started_at, ${clock()})
    WHERE j.id = ANY(ARRAY(SELECT id FROM held WHERE status = 'running' AND lease_owner = ${workerId}))
    RETURNING j.id`;
  return rows.map((row) => row.id);
}

/** Extends the leases this worker still holds (kind-queue.ts extendLeases); the ids it still holds. */
export async function heartbeat(
  { sql, clock }: JobStoreDeps,
  workerId: string,
  jobIds: readonly string[],
  leaseMs: number,
): Promise<string[]> {
  return extendLeases(sql, JOBS_TABLE, { workerId, jobIds, leaseEnd: new Date(clock().getTime() + leaseMs) });
}

export async function recordProgress(
  { sql }: JobStoreDeps,
  jobId: string,
  drawsDone: number,
  workerId?: string,
): Promise<void> {
  await sql`
    UPDATE jobs SET draws_done = LEAST(draws, GREATEST(draws_done, ${Math.floor(drawsDone)}))
    WHERE id = ${jobId} AND status = 'running'
      AND (${workerId ?? null}::text IS NULL OR lease_owner = ${workerId ?? null})`;
}

/** Running job whose lease `workerId` holds, locked until `tx` ends; null when it is no longer its. */
export async function lockOwnedJob(tx: TransactionSql, jobId: string, workerId: string): Promise<Job | null> {
  const [row] = await tx<Job[]>`
    SELECT ${jobColumns(tx)} FROM jobs WHERE id = ${jobId} AND status = 'running' AND lease_owner = ${workerId}
    FOR UPDATE`;
  return row ?? null;
}

async function inTx<T>(
  deps: JobStoreDeps,
  tx: TransactionSql | undefined,
  work: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  return tx ? work(tx) : ((await deps.sql.begin(work)) as T);
}

/** What a job's end changes: its news first (the jobs room's own), then its GPU usage, hold and events. */
async function finishJob(deps: JobStoreDeps, tx: TransactionSql, job: Job): Promise<void> {
  await announceFinished(deps, tx, [job.id]);
  await settleGpuUsage(
    tx,
    job.orgId,
    job.usageDay,
    gpuSecondsToMs(job.gpuSecondsReserved),
    gpuSecondsToMs(job.gpuSecondsUsed ?? 0),
  );
  if (job.mode === 'live') {
    await deps.ledger.setHoldExpiry(job.reservationId, holdEnd(deps, job.finishedAt!), { tx });
  }
  await deps.events?.jobsEnded(tx, [job]);
}

/** succeeded; null (a no-op) when the job is not running or, with workerId, not under that lease. */
export async function completeJob(
  deps: JobStoreDeps,
  jobId: string,
  options: CompleteOptions,
): Promise<Job | null> {
  const now = deps.clock();
  return inTx(deps, options.tx, async (tx) => {
    const [job] = await tx<Job[]>`
      UPDATE jobs
      SET status = 'succeeded', finished_at = ${now}, result_id = ${options.resultId},
          gpu_seconds_used = ${options.gpuSecondsUsed}, engine = ${options.engine}, draws_done = draws,
          lease_owner = NULL, lease_expires_at = NULL
      WHERE id = ${jobId} AND status = 'running'
        AND (${options.workerId ?? null}::text IS NULL OR lease_owner = ${options.workerId ?? null})
      RETURNING ${jobColumns(tx)}`;
    if (!job) return null;
    await finishJob(deps, tx, job);
    return job;
  });
}

/** One job of completeJobs. */
export interface Completion {
  jobId: string;
  resultId: number;
  gpuSecondsUsed: number;
  engine: string;
}

/**
 * completeJob for a worker's pack (the batched twin, after graphile-worker's completeJobs): the jobs
 * still under `workerId`'s lease become succeeded in one statement, and what their ends change (GPU
 * usage, hold ends, the waiters' news) takes one statement each. Returns the jobs completed; a job no
 * longer this worker's is left out.
 */
export async function completeJobs(
  deps: JobStoreDeps,
  tx: TransactionSql,
  workerId: string,
  completions: readonly Completion[],
): Promise<Job[]> {
  if (completions.length === 0) return [];
  const now = deps.clock();
  // The jobs are found and locked by id alone, and those still running under this lease are updated by
  // id: with `status = 'running'` beside the ids, the planner took the partial index of every running
  // job (jobs_running_lease, for the lease rescue) and read all of it, dead entries included, on every
  // store: 3–16 ms for a pack of one job once a few thousand jobs had run since the last vacuum.
  // The waiters' news (NOTIFY) goes in the same statement (job-news.ts announcedWith): a statement of
  // its own in every store cost the event loop and the server as much as any other.
  const jobs = await tx<Job[]>`
    WITH held AS MATERIALIZED (
      SELECT id, status, lease_owner FROM jobs
      WHERE id = ANY(${tx.array(completions.map((c) => c.jobId))}::text[])
      ORDER BY id FOR NO KEY UPDATE
    ), completed AS (
      UPDATE jobs j
      SET status = 'succeeded', finished_at = ${now}, result_id = c."resultId", gpu_seconds_used = c."gpuSecondsUsed",
          engine = c.engine, draws_done = j.draws, lease_owner = NULL, lease_expires_at = NULL
      FROM json_to_recordset(${JSON.stringify(completions)}::text::json)
           AS c("jobId" text, "resultId" bigint, "gpuSecondsUsed" double precision, engine text)
      WHERE j.id = c."jobId"
        AND j.id = ANY(ARRAY(SELECT id FROM held WHERE status = 'running' AND lease_owner = ${workerId}))
      RETURNING ${jobColumns(tx, 'j')}
    )
    SELECT * FROM completed WHERE ${announcedWith(tx, 'completed')}`;
  wakeOnFinish(
    deps,
    tx,
    jobs.map((job) => job.id),
  );
  await finishJobs(deps, tx, jobs, now);
  return jobs;
}

/** The GPU time the jobs measured instead of what they reserved, on the days they reserved it from. */
function settlePackGpuUsage(tx: TransactionSql, jobs: readonly Job[]): Promise<void> {
  return settleGpuUsages(
    tx,
    jobs.map((job) => ({
      orgId: job.orgId,
      day: job.usageDay,
      reservedMs: gpuSecondsToMs(job.gpuSecondsReserved),
      usedMs: gpuSecondsToMs(job.gpuSecondsUsed ?? 0),
    })),
  );
}

/** What a pack's completion changes beside the jobs (its news went with them): one statement per table. */
async function finishJobs(deps: JobStoreDeps, tx: TransactionSql, jobs: readonly Job[], now: Date) {
  const liveHolds = jobs.filter((job) => job.mode === 'live').map((job) => job.reservationId);
  // What the ends change does not depend on one another: sent together (pipelined, a round trip each
  // fewer; a lost connection rejects them all, patches/postgres+3.4.9.patch). Each call sends its first
  // statement before it returns, so they go in this order, and the server takes their locks in the same
  // order: the day's GPU usage, then the holds' ends and the events, as finishJob does.
  await Promise.all([
    settlePackGpuUsage(tx, jobs),
    deps.ledger.setHoldsExpiry(liveHolds, holdEnd(deps, now), { tx }),
    deps.events?.jobsEnded(tx, jobs),
  ]);
}

/** failed, from queued or running; null (a no-op) otherwise. */
export async function failJob(
  deps: JobStoreDeps,
  jobId: string,
  error: JobError,
  options: FailOptions = {},
): Promise<Job | null> {
  const now = deps.clock();
  return inTx(deps, options.tx, async (tx) => {
    const [job] = await tx<Job[]>`
      UPDATE jobs
      SET status = 'failed', finished_at = ${now}, error = ${JSON.stringify(error)}::text::jsonb,
          gpu_seconds_used = ${options.gpuSecondsUsed ?? 0}, lease_owner = NULL, lease_expires_at = NULL
      WHERE id = ${jobId} AND status IN ('queued', 'running')
        AND (${options.workerId ?? null}::text IS NULL OR lease_owner = ${options.workerId ?? null})
      RETURNING ${jobColumns(tx)}`;
    if (!job) return null;
    await finishJob(deps, tx, job);
    return job;
  });
}

/** Running jobs this worker holds back in the queue at once (a shutdown; kind-queue.ts releaseHeld). */
export async function releaseJobs(
  deps: JobStoreDeps,
  workerId: string,
  jobIds: readonly string[],
): Promise<string[]> {
  return releaseHeld(deps, JOBS_TABLE, workerId, jobIds);
}

/** Lapsed leases rescued (kind-queue.ts rescueLapsed); a job failed there ends as any failed job does. */
export async function rescueExpiredLeases(
  deps: JobStoreDeps,
  maxAttempts: number,
  now: Date = deps.clock(),
): Promise<RescueOutcome> {
  return rescueLapsed<Job>(deps, JOBS_TABLE, {
    now,
    maxAttempts,
    error: {
      code: 'simulation_failed',
      message: `The job's worker stopped answering ${maxAttempts} times.`,
    },
    ended: async (tx, failed) => {
      for (const job of failed) await finishJob(deps, tx, job);
    },
  });
}
