// Every statement on projection_jobs and projections (migrations/0012_projections.sql) but the queue's: the
// jobs and their stored result, the delivery row, and the sweeper's chore. Claims, leases and releases are
// the job system's, one implementation for every kind (src/jobs/kind-queue.ts) run on this table as
// PROJECTION_JOBS_TABLE says. Its news (a job queued, a job finished)
// goes through the job system's (src/jobs/job-news.ts): this process on commit, others by NOTIFY.
import type { Owner } from '../accounts/keys.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import type { CompetitionSeason } from '../fixtures/competition-season.js';
import type { DeliveryFacts } from '../jobs/delivery-core.js';
import { claimFrom, type JobTable } from '../jobs/kind-queue.js';
import type { JobRunFacts } from '../jobs/types.js';
import type { ProjectionContent } from './projection-document.js';

export type ProjectionJobStatus = 'queued' | 'running' | 'succeeded' | 'delivered' | 'failed' | 'expired';

/** The season as a job stores it (JSON: its as_of as an ISO string). */
export type StoredSeason = Omit<CompetitionSeason, 'asOf'> & { asOf: string | null };

export function toStoredSeason(season: CompetitionSeason): StoredSeason {
  return { ...season, asOf: season.asOf ? season.asOf.toISOString() : null };
}

export interface ProjectionJob extends JobRunFacts, Owner {
  id: string;
  reservationId: string;
  competitionId: number;
  dataVersion: string;
  seasons: number;
  seed: string;
  /** The identity's key (projection-identity.ts); null on jobs made before projections were cached. */
  cacheKey: string | null;
  inputs: StoredSeason;
  priceMilli: number;
  status: ProjectionJobStatus;
  result: ProjectionContent | null;
  error: { message: string } | null;
  requestId: string;
  idempotencyKey: string | null;
}

export type NewProjectionJob = Pick<
  ProjectionJob,
  | 'id'
  | 'orgId'
  | 'mode'
  | 'reservationId'
  | 'competitionId'
  | 'dataVersion'
  | 'seasons'
  | 'seed'
  | 'cacheKey'
  | 'inputs'
  | 'priceMilli'
  | 'createdAt'
  | 'requestId'
  | 'idempotencyKey'
>;

/** A projection_deliveries row: the facts every kind's delivery records (delivery-core.ts), and its id. */
export interface ProjectionDelivery extends DeliveryFacts {
  id: string;
}

type Db = Sql | TransactionSql;

/**
 * A new job: queued, or, given a table stored by an earlier job of the same identity (`stored`), born
 * succeeded with that table, finished at `stored.now`, never run.
 */
export async function insertProjectionJob(
  tx: TransactionSql,
  job: NewProjectionJob,
  stored: { result: ProjectionContent; now: Date } | null = null,
): Promise<ProjectionJob> {
  const [row] = await tx<ProjectionJob[]>`
    INSERT INTO projection_jobs (id, org_id, mode, reservation_id, competition_id, data_version, seasons, seed,
                                 cache_key, inputs, price_milli, created_at, request_id, idempotency_key,
                                 status, result, started_at, finished_at)
    VALUES (${job.id}, ${job.orgId}, ${job.mode}, ${job.reservationId}, ${job.competitionId},
            ${job.dataVersion}, ${job.seasons}, ${job.seed}, ${job.cacheKey}, ${tx.json(job.inputs as never)},
            ${job.priceMilli}, ${job.createdAt}, ${job.requestId}, ${job.idempotencyKey},
            ${stored ? 'succeeded' : 'queued'}, ${stored ? tx.json(stored.result as never) : null},
            ${stored?.now ?? null}, ${stored?.now ?? null})
    RETURNING *`;
  return row!;
}

/** The table an earlier job of this identity and key mode stored, if any (migrations/0018). */
export async function findStoredProjection(
  db: Db,
  cacheKey: string,
  mode: 'live' | 'test',
): Promise<ProjectionContent | null> {
  const [row] = await db<{ result: ProjectionContent }[]>`
    SELECT result FROM projection_jobs
    WHERE cache_key = ${cacheKey} AND mode = ${mode} AND result IS NOT NULL
    LIMIT 1`;
  return row?.result ?? null;
}

export async function getProjectionJob(db: Db, jobId: string): Promise<ProjectionJob | null> {
  const [row] = await db<ProjectionJob[]>`SELECT * FROM projection_jobs WHERE id = ${jobId}`;
  return row ?? null;
}

export async function lockProjectionJob(tx: TransactionSql, jobId: string): Promise<ProjectionJob | null> {
  const [row] = await tx<ProjectionJob[]>`SELECT * FROM projection_jobs WHERE id = ${jobId} FOR UPDATE`;
  return row ?? null;
}

export async function countOpenProjectionJobs(db: Db, orgId: string): Promise<number> {
  const [row] = await db<{ count: number }[]>`
    SELECT count(*)::int AS count FROM projection_jobs WHERE org_id = ${orgId} AND status IN ('queued', 'running')`;
  return row!.count;
}

/**
 * projection_jobs as the queue of every kind sees it (src/jobs/kind-queue.ts): a claim counts jobs, and
 * takes over a running job whose lease ran out (its worker is gone; the worker's handler fails a job
 * claimed too often, projection-worker.ts); no column of its own to reset.
 */
export const PROJECTION_JOBS_TABLE: JobTable = {
  name: 'projection_jobs',
  weight: null,
  lapsed: 'taken over',
  background: (db) => db`FALSE`,
  position: (db) => db`NULL::integer`,
  claimed: (db) => db`j.*`,
  ended: (db) => db`j.*`,
  runEnded: (db) => db``,
};

/** Claims the oldest queued job, or a running one whose lease ran out (its worker is gone). */
export async function claimProjectionJob(
  sql: Sql,
  claim: { workerId: string; now: Date; leaseMs: number },
): Promise<ProjectionJob | null> {
  const [job] = await claimFrom<ProjectionJob>(sql, PROJECTION_JOBS_TABLE, { ...claim, n: 1 });
  return job ?? null;
}

/** Ends a running job this worker still holds; false when its lease was taken over. */
export async function finishProjectionJob(
  tx: TransactionSql,
  jobId: string,
  outcome: { workerId: string; now: Date } & (
    | { status: 'succeeded'; result: ProjectionContent }
    | { status: 'failed'; error: { message: string } }
  ),
): Promise<boolean> {
  const result = outcome.status === 'succeeded' ? tx.json(outcome.result as never) : null;
  const error = outcome.status === 'failed' ? tx.json(outcome.error) : null;
  const rows = await tx`
    UPDATE projection_jobs
    SET status = ${outcome.status}, result = ${result}, error = ${error}, finished_at = ${outcome.now},
        lease_owner = NULL, lease_expires_at = NULL
    WHERE id = ${jobId} AND status = 'running' AND lease_owner = ${outcome.workerId}`;
  return rows.count === 1;
}

export async function setProjectionJobStatus(
  tx: TransactionSql,
  jobId: string,
  status: 'delivered' | 'expired',
): Promise<void> {
  await tx`UPDATE projection_jobs SET status = ${status} WHERE id = ${jobId}`;
}

export async function insertProjectionDelivery(
  tx: TransactionSql,
  delivery: ProjectionDelivery,
): Promise<ProjectionDelivery> {
  const [row] = await tx<ProjectionDelivery[]>`
    INSERT INTO projections (id, job_id, org_id, mode, credits_charged_milli, credits_remaining_milli,
                             request_id, idempotency_key, created_at)
    VALUES (${delivery.id}, ${delivery.jobId}, ${delivery.orgId}, ${delivery.mode},
            ${delivery.creditsChargedMilli}, ${delivery.creditsRemainingMilli}, ${delivery.requestId},
            ${delivery.idempotencyKey}, ${delivery.createdAt})
    RETURNING *`;
  return row!;
}

export async function findProjectionDeliveryForJob(
  db: Db,
  jobId: string,
): Promise<ProjectionDelivery | null> {
  const [row] = await db<ProjectionDelivery[]>`SELECT * FROM projections WHERE job_id = ${jobId}`;
  return row ?? null;
}

export async function getProjectionDelivery(db: Db, id: string): Promise<ProjectionDelivery | null> {
  const [row] = await db<ProjectionDelivery[]>`SELECT * FROM projections WHERE id = ${id}`;
  return row ?? null;
}

/**
 * The sweeper's chore (src/jobs/sweeper.ts): succeeded jobs whose hold has ended (live) or that waited
 * past the hold's time (test) become expired, so their result path answers reservation_expired.
 */
export async function expireUndeliveredProjections(
  sql: Sql,
  cutoff: Date,
  releasedHoldIds: (holdIds: readonly string[]) => Promise<string[]>,
): Promise<string[]> {
  const waiting = await sql<{ id: string; mode: string; reservationId: string }[]>`
    SELECT id, mode, reservation_id FROM projection_jobs WHERE status = 'succeeded' AND finished_at < ${cutoff}`;
  const released = new Set(
    await releasedHoldIds(waiting.filter((job) => job.mode === 'live').map((job) => job.reservationId)),
  );
  const ids = waiting
    .filter((job) => job.mode === 'test' || released.has(job.reservationId))
    .map((job) => job.id);
  if (ids.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    UPDATE projection_jobs SET status = 'expired'
    WHERE id = ANY(${ids}) AND status = 'succeeded' RETURNING id`;
  return rows.map((row) => row.id);
}
