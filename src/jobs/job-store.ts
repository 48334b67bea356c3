// Every statement on the jobs and batches tables that is not about running a job (leases.ts has those):
// inserting jobs and batches in the submitting transaction, reading them, and the status changes of
// delivery and expiry. A submission writes its jobs in the transaction that reserves their holds.
import type { Owner } from '../accounts/keys.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { newId } from '../ids.js';
import { utcDay } from '../limits/daily-usage.js';
import { announceQueued } from './job-news.js';
import type { Batch, BatchStatusItem, Job, JobStoreDeps, NewBatch, NewJob } from './types.js';

const JOB_COLUMNS = [
  'id',
  'org_id',
  'mode',
  'reservation_id',
  'batch_id',
  'batch_position',
  'fixture_id',
  'data_version',
  'draws',
  'seed',
  'inputs',
  'cache_key',
  'scope',
  'price_milli',
  'status',
  'draws_done',
  'attempts',
  'lease_owner',
  'lease_expires_at',
  'created_at',
  'started_at',
  'finished_at',
  'result_id',
  'error',
  'usage_day',
  'gpu_seconds_reserved',
  'gpu_seconds_used',
  'engine',
  'request_id',
  'idempotency_key',
  'custom_id',
  'metadata',
];

/**
 * The columns of Job, of the table or of its alias `as` (the day as YYYY-MM-DD text, not a Date). A job's
 * `inputs` is stored in two columns (migration 0014): the engine's payload (JSON as text, some 11 KB) and
 * `request`, what a job's views show (jsonb). Only the worker's claim reads the engine's payload, as its
 * JSON text (`engine`: a string in `inputs`); every other read gets `{request}`, so that a batch's status
 * or stream does not read the engine's inputs of each of its items; a batch's status, polled and shown
 * without requests, reads neither (`none`: null).
 */
export function jobColumns(
  db: Sql | TransactionSql,
  as?: string,
  inputs: 'none' | 'request' | 'engine' = 'request',
) {
  const prefix = as ? `${as}.` : '';
  const list = JOB_COLUMNS.map((column) => {
    if (column === 'usage_day') return `${prefix}usage_day::text AS usage_day`;
    if (column === 'inputs' && inputs === 'request') {
      return `jsonb_build_object('request', ${prefix}request) AS inputs`;
    }
    if (column === 'inputs' && inputs === 'none') return 'NULL::jsonb AS inputs';
    // The engine's payload as its stored text: the job thread that uses it parses it (src/engine/job-work.ts).
    if (column === 'inputs' && inputs === 'engine') return `${prefix}inputs`;
    return `${prefix}${column}`;
  });
  return db.unsafe(list.join(', '));
}

export function holdEnd(deps: JobStoreDeps, finishedAt: Date): Date {
  return new Date(finishedAt.getTime() + deps.holdTtlSeconds * 1000);
}

/** A job's row: its columns but the engine's payload, `n` its place, and the payload's JSON text apart. */
function rowValues(job: NewJob, now: Date, n: number) {
  const cached = job.cachedResultId != null;
  // What its views show apart from the engine's payload (jobColumns).
  const { request = null, ...engineInputs } = (job.inputs ?? {}) as { request?: unknown };
  const row = {
    n,
    id: job.id ?? newId('job'),
    org_id: job.orgId,
    mode: job.mode,
    reservation_id: job.reservationId,
    batch_id: job.batchId ?? null,
    batch_position: job.batchPosition ?? null,
    fixture_id: job.fixtureId,
    data_version: job.dataVersion,
    draws: job.draws,
    seed: String(job.seed),
    request,
    cache_key: job.cacheKey,
    scope: job.scope,
    price_milli: job.priceMilli,
    status: cached ? (job.deliveredAtSubmission ? 'delivered' : 'succeeded') : 'queued',
    created_at: now.toISOString(),
    finished_at: cached ? now.toISOString() : null,
    result_id: job.cachedResultId ?? null,
    usage_day: job.usageDay ?? utcDay(now),
    // A cache hit uses no GPU time (docs/decisions.md §3).
    gpu_seconds_reserved: cached ? 0 : (job.gpuSecondsReserved ?? 0),
    gpu_seconds_used: cached ? 0 : null,
    request_id: job.requestId,
    idempotency_key: job.idempotencyKey ?? null,
    custom_id: job.customId ?? null,
    metadata: job.metadata ?? null,
  };
  return { row, inputsJson: JSON.stringify(engineInputs) };
}

/**
 * Inserts jobs (one statement for a whole batch); a cache hit is born succeeded with its hold's end, or
 * delivered when its delivery is written in the same transaction (NewJob.deliveredAtSubmission).
 */
export async function insertJobs(
  deps: JobStoreDeps,
  tx: TransactionSql,
  jobs: readonly NewJob[],
): Promise<Job[]> {
  if (jobs.length === 0) return [];
  const now = deps.clock();
  const values = jobs.map((job, n) => rowValues(job, now, n));
  // The rows travel as one JSON document, but for the engine's payloads (some 11 KB each): each is its own
  // untyped text parameter, stored as it is in a text column (migration 0016). Inside the document the
  // server parsed every payload to find its end; a batch of 1,000 took 290 ms of the server's time this
  // way against 170 (a microbenchmark of the two statements).
  const payloads = values.map(({ inputsJson }, n) => [n, inputsJson]);
  // The workers' wake-up (a NOTIFY, which the server delivers only at commit) is sent with the INSERT:
  // one round trip for both.
  const queued = values.some(({ row }) => row.status === 'queued');
  const [rows] = await Promise.all([
    tx<Job[]>`
      INSERT INTO jobs (id, org_id, mode, reservation_id, batch_id, batch_position, fixture_id, data_version, draws, seed,
                        inputs, request, cache_key, scope, price_milli, status, created_at, finished_at, result_id,
                        usage_day, gpu_seconds_reserved, gpu_seconds_used, request_id, idempotency_key,
                        custom_id, metadata)
      SELECT r.id, r.org_id, r.mode, r.reservation_id, r.batch_id, r.batch_position, r.fixture_id, r.data_version,
             r.draws, r.seed, p.inputs, r.request, r.cache_key, r.scope, r.price_milli, r.status, r.created_at,
             r.finished_at, r.result_id, r.usage_day, r.gpu_seconds_reserved, r.gpu_seconds_used, r.request_id,
             r.idempotency_key, r.custom_id, r.metadata
      FROM json_to_recordset(${JSON.stringify(values.map(({ row }) => row))}::text::json) AS r(
        n integer, id text, org_id text, mode text, reservation_id text, batch_id text, batch_position integer,
        fixture_id bigint,
        data_version text, draws integer, seed text, request jsonb, cache_key text, scope text,
        price_milli bigint, status text, created_at timestamptz, finished_at timestamptz, result_id bigint,
        usage_day date, gpu_seconds_reserved double precision, gpu_seconds_used double precision,
        request_id text, idempotency_key text, custom_id text, metadata jsonb)
      JOIN (VALUES ${tx(payloads as never)}) AS p(n, inputs) ON p.n::integer = r.n
      RETURNING ${jobColumns(tx)}`,
    queued ? announceQueued(deps, tx) : null,
  ]);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const inserted = values.map(({ row }) => byId.get(row.id)!);
  // Cache hits are born finished, all at `now`: their holds get one end, in one statement.
  const finishedHolds = inserted
    .filter((job) => job.status === 'succeeded' && job.mode === 'live')
    .map((job) => job.reservationId);
  await deps.ledger.setHoldsExpiry(finishedHolds, holdEnd(deps, now), { tx });
  const born = inserted.filter((job) => job.status !== 'queued');
  if (born.length > 0) await deps.events?.jobsEnded(tx, born);
  return inserted;
}

/**
 * A batch row (with its metadata and rejected items) and its jobs, in two statements; `batchId` of the
 * jobs is set from the batch, `batchPosition` defaults to the job's place in `jobs`.
 */
export async function insertBatch(
  deps: JobStoreDeps,
  tx: TransactionSql,
  batch: NewBatch,
  jobs: readonly NewJob[],
): Promise<{ batch: Batch; jobs: Job[] }> {
  const [created] = await tx<Batch[]>`
    INSERT INTO batches (id, org_id, mode, draws, item_count, created_at, request_id, idempotency_key,
                         metadata, rejected_items)
    VALUES (${batch.id ?? newId('batch')}, ${batch.orgId}, ${batch.mode}, ${batch.draws}, ${jobs.length},
            ${deps.clock()}, ${batch.requestId}, ${batch.idempotencyKey ?? null},
            ${JSON.stringify(batch.metadata ?? {})}::text::jsonb,
            ${JSON.stringify(batch.rejectedItems ?? [])}::text::jsonb)
    RETURNING *`;
  const items = await insertJobs(
    deps,
    tx,
    jobs.map((job, position) => ({
      ...job,
      batchId: created!.id,
      batchPosition: job.batchPosition ?? position,
      metadata: job.metadata ?? batch.metadata ?? null,
    })),
  );
  return { batch: created!, jobs: items };
}

export async function getJob(db: Sql | TransactionSql, jobId: string): Promise<Job | null> {
  const [row] = await db<Job[]>`SELECT ${jobColumns(db)} FROM jobs WHERE id = ${jobId}`;
  return row ?? null;
}

/** The job when it belongs to `owner` and carries its reservation: anyone else's costs a miss. */
export async function getOwnedJob(
  db: Sql | TransactionSql,
  jobId: string,
  owner: Owner & { reservationId: string },
): Promise<Job | null> {
  const [row] = await db<Job[]>`
    SELECT ${jobColumns(db)} FROM jobs
    WHERE id = ${jobId} AND org_id = ${owner.orgId} AND mode = ${owner.mode}
      AND reservation_id = ${owner.reservationId}`;
  return row ?? null;
}

/** The job locked for its delivery (a concurrent delivery of it waits), or null. */
export async function lockJobForDelivery(tx: TransactionSql, jobId: string): Promise<Job | null> {
  const [row] = await tx<Job[]>`SELECT ${jobColumns(tx)} FROM jobs WHERE id = ${jobId} FOR NO KEY UPDATE`;
  return row ?? null;
}

/** succeeded → delivered or expired, under the delivery lock. */
export async function markDeliveryOutcome(
  tx: TransactionSql,
  jobId: string,
  status: 'delivered' | 'expired',
): Promise<Job> {
  const [row] = await tx<Job[]>`
    UPDATE jobs SET status = ${status} WHERE id = ${jobId} AND status = 'succeeded'
    RETURNING ${jobColumns(tx)}`;
  if (!row) throw new Error(`job ${jobId} left succeeded under its delivery lock`);
  return row;
}

/**
 * markDeliveryOutcome for many jobs its caller has locked (delivery-locks.ts), in one statement: the rows
 * given, in their order, with their new status (the only column it changes, so no row is read back).
 */
export async function markDeliveryOutcomes(
  tx: TransactionSql,
  jobs: readonly Job[],
  status: 'delivered' | 'expired',
): Promise<Job[]> {
  if (jobs.length === 0) return [];
  // The jobs are read by id alone and the succeeded ones updated by id: with `status = 'succeeded'`
  // beside the ids, the planner ANDed the primary key with the partial index of every succeeded job
  // (jobs_succeeded_finished, for the sweeper), reading all of it on every page of deliveries.
  const rows = await tx<{ id: string }[]>`
    WITH locked AS MATERIALIZED (
      SELECT id, status FROM jobs WHERE id = ANY(${tx.array(jobs.map((job) => job.id))}::text[])
      ORDER BY id FOR NO KEY UPDATE
    )
    UPDATE jobs SET status = ${status}
    WHERE id = ANY(ARRAY(SELECT id FROM locked WHERE status = 'succeeded'))
    RETURNING id`;
  if (rows.length !== new Set(jobs.map((job) => job.id)).size)
    throw new Error('a job left succeeded under its delivery lock');
  return jobs.map((job) => ({ ...job, status }));
}

/** Queued + running jobs of an organisation, a batch counting as one group (docs/api.md §8). */
export async function countOpenJobGroups(db: Sql | TransactionSql, orgId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(DISTINCT COALESCE(batch_id, id))::int AS n
    FROM jobs WHERE org_id = ${orgId} AND status IN ('queued', 'running')`;
  return row!.n;
}

export async function countQueuedJobs(db: Sql | TransactionSql): Promise<number> {
  const [row] = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM jobs WHERE status = 'queued'`;
  return row!.n;
}

/**
 * The batch and its items, when it belongs to `owner` (organisation and key mode). Ownership is part of
 * the first statement, so another organisation's batch costs what an unknown id costs: its items are
 * never read.
 */
/** Jobs by state for the queue-depth metric: queued, running, and succeeded awaiting delivery. */
export async function countJobsByState(db: Sql | TransactionSql): Promise<Record<string, number>> {
  // Each state has its own partial index (migrations/0004_simulations.sql); finished states are not counted.
  const [row] = await db<{ queued: number; running: number; succeeded: number }[]>`
    SELECT (SELECT count(*)::int FROM jobs WHERE status = 'queued') AS queued,
           (SELECT count(*)::int FROM jobs WHERE status = 'running') AS running,
           (SELECT count(*)::int FROM jobs WHERE status = 'succeeded') AS succeeded`;
  return { ...row! };
}

/** Draws of the jobs waiting in the queue (its partial index on status; migrations/0004_simulations.sql). */
export async function sumQueuedDraws(db: Sql | TransactionSql): Promise<number> {
  const [row] = await db<{ draws: number }[]>`
    SELECT COALESCE(sum(draws), 0)::bigint AS draws FROM jobs WHERE status = 'queued'`;
  return row?.draws ?? 0;
}

/**
 * The batch of this organisation and key mode with its items as its status shows them; null for anyone
 * else's. A status is polled, 1,000 items at a time: its items carry only the columns it shows (no
 * inputs, request, metadata or lease), so a poll decodes a third of the job columns, and each delivered
 * item its delivery's charge, read in the same statement: a job has at most one delivery (a unique
 * job_id), made in the transaction that marks the job delivered, so a job not yet delivered looks for
 * none (the subquery's filter on the job's status comes before its index lookup).
 */
export async function getBatch(
  db: Sql | TransactionSql,
  batchId: string,
  owner: Owner,
): Promise<{ batch: Batch; items: BatchStatusItem[] } | null> {
  const [batch] = await db<Batch[]>`
    SELECT * FROM batches WHERE id = ${batchId} AND org_id = ${owner.orgId} AND mode = ${owner.mode}`;
  if (!batch) return null;
  const items = await db<BatchStatusItem[]>`
    SELECT j.id, j.mode, j.batch_position, j.fixture_id, j.draws, j.price_milli, j.status, j.draws_done,
           j.scope, j.reservation_id, j.error, j.custom_id, j.finished_at,
           COALESCE((SELECT d.credits_charged_milli FROM deliveries d
                     WHERE j.status = 'delivered' AND d.job_id = j.id), 0) AS credits_charged_milli
    FROM jobs j WHERE j.batch_id = ${batchId} ORDER BY j.batch_position`;
  return { batch, items };
}

/** Succeeded live jobs that finished at or before `cutoff`: their holds may have ended undelivered. */
export async function succeededLiveJobsBefore(
  db: Sql,
  cutoff: Date,
): Promise<{ id: string; reservationId: string }[]> {
  return db<{ id: string; reservationId: string }[]>`
    SELECT id, reservation_id FROM jobs
    WHERE status = 'succeeded' AND mode = 'live' AND finished_at <= ${cutoff}`;
}

/** succeeded → expired for these live jobs (their holds ended without delivery). */
export async function expireJobs(db: Sql, jobIds: readonly string[]): Promise<string[]> {
  if (jobIds.length === 0) return [];
  // Locked in id order first, as a results page locks its jobs (delivery-locks.ts): an UPDATE alone
  // locks in scan order and could wait in a circle with a page. Read by id alone, for the reason
  // markDeliveryOutcomes gives.
  const rows = await db<{ id: string }[]>`
    WITH locked AS MATERIALIZED (
      SELECT id, status FROM jobs WHERE id = ANY(${db.array([...jobIds])}::text[])
      ORDER BY id FOR NO KEY UPDATE
    )
    UPDATE jobs SET status = 'expired'
    WHERE id = ANY(ARRAY(SELECT id FROM locked WHERE status = 'succeeded'))
    RETURNING jobs.id`;
  return rows.map((row) => row.id);
}

/** Test-key jobs have no hold; they expire undelivered on the same clock. */
export async function expireTestJobsBefore(db: Sql, cutoff: Date): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    WITH locked AS (
      SELECT id FROM jobs WHERE status = 'succeeded' AND mode = 'test' AND finished_at <= ${cutoff}
      ORDER BY id FOR NO KEY UPDATE
    )
    UPDATE jobs SET status = 'expired' FROM locked
    WHERE jobs.id = locked.id AND jobs.status = 'succeeded'
    RETURNING jobs.id`;
  return rows.map((row) => row.id);
}
