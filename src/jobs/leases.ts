// Running jobs (docs/decisions.md §6): workers claim queued jobs with one `FOR UPDATE SKIP LOCKED`
// statement and keep a lease that a heartbeat extends; a job whose worker died is queued again when its
// lease runs out, and failed after MAX_ATTEMPTS claims.
//
// When a job ends (succeeded or failed) its hold gets an end: finished_at + HOLD_TTL (docs/decisions.md
// §2), its reserved GPU-seconds are replaced by the measured time, and the requests waiting for it are
// woken, all in the transaction of the status change.
import type { TransactionSql } from '../db/connection.js';
import { gpuSecondsToMs, settleGpuUsage } from '../limits/daily-usage.js';
import { announceFinished, announceQueued } from './job-news.js';
import { holdEnd, jobColumns } from './job-store.js';
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

export interface RescueOutcome {
  requeued: Job[];
  failed: Job[];
}

/**
 * Claims up to `n` queued jobs, oldest first, under `workerId`'s lease: those whose draws claimed before
 * them, in this claim, are fewer than `draws` (the worker's room, docs/decisions.md §6 "Claims"), so the
 * first is always taken and a claim ends past its room by one job at most. The rows the claim locked and
 * left stay queued. A claimed job is not started yet (run_started_at null): a batch's cancel may take it
 * until the worker marks it started (startJobs).
 */
export async function claimJobs(
  deps: JobStoreDeps,
  workerId: string,
  n: number,
  leaseMs: number,
  draws: number = Number.MAX_SAFE_INTEGER,
) {
  if (n <= 0) return [];
  const now = deps.clock();
  const leaseEnd = new Date(now.getTime() + leaseMs);
  const room = Number.isFinite(draws) ? Math.max(1, Math.floor(draws)) : Number.MAX_SAFE_INTEGER;
  // One statement (after River): pick, lock and lease, skipping rows other workers hold. A window
  // function may not stand beside FOR UPDATE: the draws are summed over the rows locked.
  const rows = await deps.sql<Job[]>`
    WITH next AS (
      SELECT id, draws, created_at FROM jobs
      WHERE status = 'queued'
      ORDER BY created_at, id
      LIMIT ${n}
      FOR UPDATE SKIP LOCKED
    ), fits AS (
      SELECT id FROM (
        SELECT id, sum(draws) OVER (ORDER BY created_at, id) - draws AS before FROM next
      ) summed
      WHERE before < ${room}::bigint
    )
    UPDATE jobs j
    SET status = 'running', lease_owner = ${workerId}, lease_expires_at = ${leaseEnd},
        attempts = j.attempts + 1, started_at = COALESCE(j.started_at, ${now}), draws_done = 0,
        run_started_at = NULL
    FROM fits WHERE j.id = fits.id
    RETURNING ${jobColumns(deps.sql, 'j', 'engine')}`;
  return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
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
  // Locked by id alone, then updated where still running under this lease: as completeJobs, so that the
  // planner does not read the partial index of every running job.
  const rows = await sql<{ id: string }[]>`
    WITH held AS MATERIALIZED (
      SELECT id FROM jobs
      WHERE id = ANY(${sql.array([...jobIds])}::text[])
      ORDER BY id FOR NO KEY UPDATE
    )
    UPDATE jobs j SET run_started_at = COALESCE(j.run_started_at, ${clock()})
    FROM held
    WHERE j.id = held.id AND j.status = 'running' AND j.lease_owner = ${workerId}
    RETURNING j.id`;
  return rows.map((row) => row.id);
}

/**
 * Extends the leases this worker still holds; returns the ids it still holds. The rows are locked in id
 * order first, as a store of outcomes locks them (lockOwnedJobs): an UPDATE alone locks in scan order,
 * and a heartbeat and a store of the same jobs then waited for each other in a circle, PostgreSQL ended
 * the store as the deadlock's victim, and its outcomes waited for their leases to run out (~30 s).
 */
export async function heartbeat(
  { sql, clock }: JobStoreDeps,
  workerId: string,
  jobIds: readonly string[],
  leaseMs: number,
): Promise<string[]> {
  if (jobIds.length === 0) return [];
  const leaseEnd = new Date(clock().getTime() + leaseMs);
  const rows = await sql<{ id: string }[]>`
    WITH held AS (
      SELECT id FROM jobs
      WHERE id = ANY(${sql.array([...jobIds])}::text[]) AND status = 'running' AND lease_owner = ${workerId}
      ORDER BY id
      FOR NO KEY UPDATE
    )
    UPDATE jobs SET lease_expires_at = ${leaseEnd} FROM held
    WHERE jobs.id = held.id AND jobs.status = 'running' AND jobs.lease_owner = ${workerId}
    RETURNING jobs.id`;
  return rows.map((row) => row.id);
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

/** lockOwnedJob for many jobs, in one statement and in id order: the ids still under `workerId`'s lease. */
export async function lockOwnedJobs(
  tx: TransactionSql,
  jobIds: readonly string[],
  workerId: string,
): Promise<Set<string>> {
  if (jobIds.length === 0) return new Set();
  const rows = await tx<{ id: string }[]>`
    SELECT id FROM jobs
    WHERE id = ANY(${tx.array([...jobIds])}::text[]) AND status = 'running' AND lease_owner = ${workerId}
    ORDER BY id
    FOR UPDATE`;
  return new Set(rows.map((row) => row.id));
}

async function inTx<T>(
  deps: JobStoreDeps,
  tx: TransactionSql | undefined,
  work: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  return tx ? work(tx) : ((await deps.sql.begin(work)) as T);
}

async function finishJob(deps: JobStoreDeps, tx: TransactionSql, job: Job): Promise<void> {
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
  await announceFinished(deps, tx, [job.id]);
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
  const jobs = await tx<Job[]>`
    WITH held AS MATERIALIZED (
      SELECT id, status, lease_owner FROM jobs
      WHERE id = ANY(${tx.array(completions.map((c) => c.jobId))}::text[])
      ORDER BY id FOR NO KEY UPDATE
    )
    UPDATE jobs j
    SET status = 'succeeded', finished_at = ${now}, result_id = c."resultId", gpu_seconds_used = c."gpuSecondsUsed",
        engine = c.engine, draws_done = j.draws, lease_owner = NULL, lease_expires_at = NULL
    FROM json_to_recordset(${JSON.stringify(completions)}::text::json)
         AS c("jobId" text, "resultId" bigint, "gpuSecondsUsed" double precision, engine text)
    WHERE j.id = c."jobId"
      AND j.id = ANY(ARRAY(SELECT id FROM held WHERE status = 'running' AND lease_owner = ${workerId}))
    RETURNING ${jobColumns(tx, 'j')}`;
  await finishJobs(deps, tx, jobs, now);
  return jobs;
}

/** The GPU-seconds the jobs used instead of those they reserved, summed by organisation and day. */
async function settlePackGpuUsage(tx: TransactionSql, jobs: readonly Job[]): Promise<void> {
  const usage = jobs
    .map((job) => ({
      org_id: job.orgId,
      day: job.usageDay,
      delta: gpuSecondsToMs(job.gpuSecondsUsed ?? 0) - gpuSecondsToMs(job.gpuSecondsReserved),
    }))
    .filter((row) => row.delta !== 0);
  if (usage.length === 0) return;
  await tx`
    UPDATE usage_days u SET gpu_ms = GREATEST(0, u.gpu_ms + d.delta)
    FROM (SELECT org_id, day, sum(delta) AS delta
          FROM json_to_recordset(${JSON.stringify(usage)}::text::json) AS r(org_id text, day date, delta bigint)
          GROUP BY org_id, day) d
    WHERE u.org_id = d.org_id AND u.day = d.day`;
}

/** finishJob for jobs that ended together at `now`: one statement per table. */
async function finishJobs(deps: JobStoreDeps, tx: TransactionSql, jobs: readonly Job[], now: Date) {
  const liveHolds = jobs.filter((job) => job.mode === 'live').map((job) => job.reservationId);
  // What the ends change does not depend on one another: sent together (pipelined, a round trip each
  // fewer; a lost connection rejects them all, patches/postgres+3.4.9.patch). Each call sends its first
  // statement before it returns, so they go in this order, the order they went one by one, and the server
  // takes their locks in the same order.
  await Promise.all([
    settlePackGpuUsage(tx, jobs),
    deps.ledger.setHoldsExpiry(liveHolds, holdEnd(deps, now), { tx }),
    announceFinished(
      deps,
      tx,
      jobs.map((job) => job.id),
    ),
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

/**
 * Puts running jobs this worker holds back in the queue at once (a shutdown that could not wait for
 * them), instead of letting their leases run out. The claim is given back too: a shutdown is not a
 * failed attempt, so it does not bring the job closer to MAX_ATTEMPTS. Returns the ids queued again.
 */
export async function releaseJobs(
  deps: JobStoreDeps,
  workerId: string,
  jobIds: readonly string[],
): Promise<string[]> {
  if (jobIds.length === 0) return [];
  return deps.sql.begin(async (tx) => {
    const rows = await tx<{ id: string }[]>`
      UPDATE jobs
      SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, draws_done = 0,
          attempts = GREATEST(attempts - 1, 0), run_started_at = NULL
      WHERE id IN ${tx(jobIds)} AND status = 'running' AND lease_owner = ${workerId}
      RETURNING id`;
    if (rows.length > 0) await announceQueued(deps, tx);
    return rows.map((row) => row.id);
  });
}

export async function rescueExpiredLeases(
  deps: JobStoreDeps,
  maxAttempts: number,
  now: Date = deps.clock(),
): Promise<RescueOutcome> {
  const error: JobError = {
    code: 'simulation_failed',
    message: `The job's worker stopped answering ${maxAttempts} times.`,
  };
  return deps.sql.begin(async (tx) => {
    const jobs = await tx<Job[]>`
      WITH lapsed AS (
        SELECT id FROM jobs
        WHERE status = 'running' AND lease_expires_at <= ${now}
        ORDER BY lease_expires_at
        LIMIT 500
        FOR UPDATE SKIP LOCKED
      )
      UPDATE jobs j
      SET status = CASE WHEN j.attempts >= ${maxAttempts} THEN 'failed' ELSE 'queued' END,
          finished_at = CASE WHEN j.attempts >= ${maxAttempts} THEN ${now}::timestamptz END,
          error = CASE WHEN j.attempts >= ${maxAttempts} THEN ${JSON.stringify(error)}::text::jsonb END,
          gpu_seconds_used = CASE WHEN j.attempts >= ${maxAttempts} THEN 0 END,
          lease_owner = NULL, lease_expires_at = NULL, draws_done = 0,
          run_started_at = CASE WHEN j.attempts >= ${maxAttempts} THEN j.run_started_at END
      FROM lapsed WHERE j.id = lapsed.id
      RETURNING ${jobColumns(tx, 'j')}`;
    const failed = jobs.filter((job) => job.status === 'failed');
    for (const job of failed) await finishJob(deps, tx, job);
    const requeued = jobs.filter((job) => job.status === 'queued');
    if (requeued.length > 0) await announceQueued(deps, tx);
    return { requeued, failed };
  });
}
