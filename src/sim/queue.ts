// The job queue (decisions 6): jobs live in PostgreSQL beside their credit holds. A submission writes
// its job in the transaction that reserves the hold; workers claim queued jobs with one
// `FOR UPDATE SKIP LOCKED` statement and keep a lease that a heartbeat extends; a job whose worker died
// is queued again when its lease runs out, and failed after MAX_ATTEMPTS claims.
//
// When a job ends (succeeded or failed) its hold gets an end: finished_at + HOLD_TTL (decisions 2). The
// sweeper releases holds that reach it undelivered. The job's reserved GPU-seconds are replaced by the
// measured time in the same transaction.
//
// On a PostgreSQL server, NOTIFY inside the enqueueing transaction wakes the workers on commit, and a
// NOTIFY when a job ends wakes requests waiting for it; both keep polling as a fallback. PGlite cannot
// carry notifications across its socket, so there everything polls.
import type { KeyMode } from '../accounts/keys.js';
import type { Ledger } from '../billing/ledger.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { newId } from '../ids.js';
import { gpuSecondsToMs, settleGpuUsage, utcDay } from '../limits/daily-usage.js';

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'delivered', 'failed', 'expired'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export type ResultScope = 'shared' | 'private';

/** Claims of one job before a lapsed lease fails it instead of queueing it again. */
export const MAX_ATTEMPTS = 3;

/** Woken on commit of an enqueue. */
export const JOBS_QUEUED_CHANNEL = 'matchsim_jobs_queued';
/** Payload: the job id, when a job leaves queued/running. */
export const JOB_FINISHED_CHANNEL = 'matchsim_job_finished';

export interface JobError {
  code: string;
  message: string;
  [detail: string]: unknown;
}

export interface Job {
  id: string;
  orgId: string;
  mode: KeyMode;
  reservationId: string;
  batchId: string | null;
  batchPosition: number | null;
  fixtureId: number;
  dataVersion: string;
  draws: number;
  seed: string;
  inputs: unknown;
  cacheKey: string;
  scope: ResultScope;
  priceMilli: number;
  status: JobStatus;
  drawsDone: number;
  attempts: number;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  resultId: number | null;
  error: JobError | null;
  usageDay: string;
  gpuSecondsReserved: number;
  gpuSecondsUsed: number | null;
  engine: string | null;
  requestId: string;
  idempotencyKey: string | null;
}

export interface NewJob {
  /** Chosen by the caller when it must be known before the insert; default a new `job_…`. */
  id?: string | undefined;
  orgId: string;
  mode: KeyMode;
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
}

export interface NewBatch {
  id?: string | undefined;
  orgId: string;
  mode: KeyMode;
  draws: number;
  requestId: string;
  idempotencyKey?: string | null | undefined;
}

export interface Batch {
  id: string;
  orgId: string;
  mode: KeyMode;
  draws: number;
  itemCount: number;
  createdAt: Date;
  requestId: string;
  idempotencyKey: string | null;
}

export interface BatchItem extends Job {
  /** The item's delivery, once its result path delivered it. */
  deliveryId: string | null;
  creditsChargedMilli: number;
}

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

export interface JobQueue {
  enqueue(tx: TransactionSql, job: NewJob): Promise<Job>;
  enqueueMany(tx: TransactionSql, jobs: readonly NewJob[]): Promise<Job[]>;
  /** A batch row and its jobs; `batchId` of the jobs is set from the batch. */
  enqueueBatch(
    tx: TransactionSql,
    batch: NewBatch,
    jobs: readonly NewJob[],
  ): Promise<{ batch: Batch; jobs: Job[] }>;
  claim(workerId: string, n: number, leaseMs: number): Promise<Job[]>;
  /** Extends the leases this worker still holds; returns the ids it still holds. */
  heartbeat(workerId: string, jobIds: readonly string[], leaseMs: number): Promise<string[]>;
  progress(jobId: string, drawsDone: number, workerId?: string): Promise<void>;
  /** Running job whose lease `workerId` holds, locked until `tx` ends; null when it is no longer its. */
  lockOwnedJob(tx: TransactionSql, jobId: string, workerId: string): Promise<Job | null>;
  /** succeeded; null (a no-op) when the job is not running or, with workerId, not under that lease. */
  complete(jobId: string, options: CompleteOptions): Promise<Job | null>;
  /** failed, from queued or running; null (a no-op) otherwise. */
  fail(jobId: string, error: JobError, options?: FailOptions): Promise<Job | null>;
  rescueExpiredLeases(now?: Date): Promise<RescueOutcome>;
  get(jobId: string, options?: { tx?: TransactionSql | undefined }): Promise<Job | null>;
  /** Resolves when the job leaves queued/running or the time is up (then with its current state). */
  waitFor(jobId: string, timeoutMs: number): Promise<Job | null>;
  /** Queued + running jobs of the organisation, a batch counting once (spec 8.1). */
  openJobCount(orgId: string, options?: { tx?: TransactionSql | undefined }): Promise<number>;
  getBatch(batchId: string): Promise<{ batch: Batch; items: BatchItem[] } | null>;
  /** Server only: calls `onWork` when jobs are queued; returns the way to stop listening. */
  listenForWork(onWork: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface JobQueueDeps {
  sql: Sql;
  ledger: Ledger;
  clock?: () => Date;
  /** HOLD_TTL_SECONDS: how long a finished job's hold waits for delivery. */
  holdTtlSeconds: number;
  /** True on a PostgreSQL server (LISTEN/NOTIFY); false on PGlite, which polls. */
  notifications: boolean;
  maxAttempts?: number;
  /** How often waitFor polls: its only means on PGlite, a fallback on a server. */
  pollMs?: number;
}

export interface JobRow {
  id: string;
  org_id: string;
  mode: KeyMode;
  reservation_id: string;
  batch_id: string | null;
  batch_position: number | null;
  fixture_id: number;
  data_version: string;
  draws: number;
  seed: string;
  inputs: unknown;
  cache_key: string;
  scope: ResultScope;
  price_milli: number;
  status: JobStatus;
  draws_done: number;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  result_id: number | null;
  error: JobError | null;
  usage_day: Date | string;
  gpu_seconds_reserved: number;
  gpu_seconds_used: number | null;
  engine: string | null;
  request_id: string;
  idempotency_key: string | null;
}

interface BatchRow {
  id: string;
  org_id: string;
  mode: KeyMode;
  draws: number;
  item_count: number;
  created_at: Date;
  request_id: string;
  idempotency_key: string | null;
}

export function isOpenStatus(status: JobStatus): boolean {
  return status === 'queued' || status === 'running';
}

/** Queued + running jobs of an organisation, a batch counting as one group (spec 8.1). */
export async function countOpenJobGroups(db: Sql | TransactionSql, orgId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(DISTINCT COALESCE(batch_id, id))::int AS n
    FROM jobs WHERE org_id = ${orgId} AND status IN ('queued', 'running')`;
  return row!.n;
}

export function makeJobQueue(deps: JobQueueDeps): JobQueue {
  const { sql, ledger, holdTtlSeconds } = deps;
  const clock = deps.clock ?? (() => new Date());
  const maxAttempts = deps.maxAttempts ?? MAX_ATTEMPTS;
  const pollMs = deps.pollMs ?? (deps.notifications ? 1000 : 50);
  const holdTtlMs = holdTtlSeconds * 1000;

  const holdEnd = (finishedAt: Date) => new Date(finishedAt.getTime() + holdTtlMs);

  function rowValues(job: NewJob & { batchPosition?: number }, now: Date) {
    const cached = job.cachedResultId != null;
    return {
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
      inputs: job.inputs ?? null,
      cache_key: job.cacheKey,
      scope: job.scope,
      price_milli: job.priceMilli,
      status: cached ? 'succeeded' : 'queued',
      created_at: now.toISOString(),
      finished_at: cached ? now.toISOString() : null,
      result_id: job.cachedResultId ?? null,
      usage_day: job.usageDay ?? utcDay(now),
      // A cache hit uses no GPU time (decisions 3).
      gpu_seconds_reserved: cached ? 0 : (job.gpuSecondsReserved ?? 0),
      gpu_seconds_used: cached ? 0 : null,
      request_id: job.requestId,
      idempotency_key: job.idempotencyKey ?? null,
    };
  }

  async function insertJobs(
    tx: TransactionSql,
    jobs: readonly (NewJob & { batchPosition?: number })[],
  ): Promise<Job[]> {
    if (jobs.length === 0) return [];
    const now = clock();
    const values = jobs.map((job) => rowValues(job, now));
    // One statement for a whole batch: the rows travel as one JSON document.
    const rows = await tx<JobRow[]>`
      INSERT INTO jobs (id, org_id, mode, reservation_id, batch_id, batch_position, fixture_id, data_version, draws, seed,
                        inputs, cache_key, scope, price_milli, status, created_at, finished_at, result_id,
                        usage_day, gpu_seconds_reserved, gpu_seconds_used, request_id, idempotency_key)
      SELECT id, org_id, mode, reservation_id, batch_id, batch_position, fixture_id, data_version, draws, seed,
             COALESCE(inputs, 'null'::jsonb), cache_key, scope, price_milli, status, created_at, finished_at,
             result_id, usage_day, gpu_seconds_reserved, gpu_seconds_used, request_id, idempotency_key
      FROM jsonb_to_recordset(${JSON.stringify(values)}::text::jsonb) AS r(
        id text, org_id text, mode text, reservation_id text, batch_id text, batch_position integer,
        fixture_id bigint,
        data_version text, draws integer, seed text, inputs jsonb, cache_key text, scope text,
        price_milli bigint, status text, created_at timestamptz, finished_at timestamptz, result_id bigint,
        usage_day date, gpu_seconds_reserved double precision, gpu_seconds_used double precision,
        request_id text, idempotency_key text)
      RETURNING *`;
    const byId = new Map(rows.map((row) => [row.id, jobFromRow(row)]));
    const inserted = values.map((value) => byId.get(value.id)!);
    for (const job of inserted) {
      if (job.status === 'succeeded' && job.mode === 'live') {
        await ledger.setHoldExpiry(job.reservationId, holdEnd(job.finishedAt!), { tx });
      }
    }
    if (inserted.some((job) => job.status === 'queued')) {
      await tx`SELECT pg_notify(${JOBS_QUEUED_CHANNEL}, '')`;
    }
    return inserted;
  }

  async function enqueue(tx: TransactionSql, job: NewJob): Promise<Job> {
    const [inserted] = await insertJobs(tx, [job]);
    return inserted!;
  }

  async function enqueueBatch(tx: TransactionSql, batch: NewBatch, jobs: readonly NewJob[]) {
    const now = clock();
    const [row] = await tx<BatchRow[]>`
      INSERT INTO batches (id, org_id, mode, draws, item_count, created_at, request_id, idempotency_key)
      VALUES (${batch.id ?? newId('batch')}, ${batch.orgId}, ${batch.mode}, ${batch.draws}, ${jobs.length},
              ${now}, ${batch.requestId}, ${batch.idempotencyKey ?? null})
      RETURNING *`;
    const created = batchFromRow(row!);
    const items = await insertJobs(
      tx,
      jobs.map((job, position) => ({ ...job, batchId: created.id, batchPosition: position })),
    );
    return { batch: created, jobs: items };
  }

  async function claim(workerId: string, n: number, leaseMs: number): Promise<Job[]> {
    if (n <= 0) return [];
    const now = clock();
    const leaseEnd = new Date(now.getTime() + leaseMs);
    // One statement (STYLE.md, after River): pick, lock and lease, skipping rows other workers hold.
    const rows = await sql<JobRow[]>`
      WITH next AS (
        SELECT id FROM jobs
        WHERE status = 'queued'
        ORDER BY created_at, id
        LIMIT ${n}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE jobs j
      SET status = 'running', lease_owner = ${workerId}, lease_expires_at = ${leaseEnd},
          attempts = j.attempts + 1, started_at = COALESCE(j.started_at, ${now}), draws_done = 0
      FROM next WHERE j.id = next.id
      RETURNING j.*`;
    return rows.map(jobFromRow).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  }

  async function heartbeat(workerId: string, jobIds: readonly string[], leaseMs: number): Promise<string[]> {
    if (jobIds.length === 0) return [];
    const leaseEnd = new Date(clock().getTime() + leaseMs);
    const rows = await sql<{ id: string }[]>`
      UPDATE jobs SET lease_expires_at = ${leaseEnd}
      WHERE id IN ${sql(jobIds)} AND status = 'running' AND lease_owner = ${workerId}
      RETURNING id`;
    return rows.map((row) => row.id);
  }

  async function progress(jobId: string, drawsDone: number, workerId?: string): Promise<void> {
    await sql`
      UPDATE jobs SET draws_done = LEAST(draws, GREATEST(draws_done, ${Math.floor(drawsDone)}))
      WHERE id = ${jobId} AND status = 'running'
        AND (${workerId ?? null}::text IS NULL OR lease_owner = ${workerId ?? null})`;
  }

  async function lockOwnedJob(tx: TransactionSql, jobId: string, workerId: string): Promise<Job | null> {
    const [row] = await tx<JobRow[]>`
      SELECT * FROM jobs WHERE id = ${jobId} AND status = 'running' AND lease_owner = ${workerId}
      FOR UPDATE`;
    return row ? jobFromRow(row) : null;
  }

  async function inTx<T>(
    tx: TransactionSql | undefined,
    work: (tx: TransactionSql) => Promise<T>,
  ): Promise<T> {
    return tx ? work(tx) : ((await sql.begin(work)) as T);
  }

  // The end of a job: its hold gets an end, its GPU reservation becomes the measured time, and the
  // requests waiting for it are woken, all with the status change.
  async function finishJob(tx: TransactionSql, job: Job): Promise<void> {
    await settleGpuUsage(
      tx,
      job.orgId,
      job.usageDay,
      gpuSecondsToMs(job.gpuSecondsReserved),
      gpuSecondsToMs(job.gpuSecondsUsed ?? 0),
    );
    if (job.mode === 'live') await ledger.setHoldExpiry(job.reservationId, holdEnd(job.finishedAt!), { tx });
    await tx`SELECT pg_notify(${JOB_FINISHED_CHANNEL}, ${job.id})`;
  }

  async function complete(jobId: string, options: CompleteOptions): Promise<Job | null> {
    const now = clock();
    return inTx(options.tx, async (tx) => {
      const [row] = await tx<JobRow[]>`
        UPDATE jobs
        SET status = 'succeeded', finished_at = ${now}, result_id = ${options.resultId},
            gpu_seconds_used = ${options.gpuSecondsUsed}, engine = ${options.engine}, draws_done = draws,
            lease_owner = NULL, lease_expires_at = NULL
        WHERE id = ${jobId} AND status = 'running'
          AND (${options.workerId ?? null}::text IS NULL OR lease_owner = ${options.workerId ?? null})
        RETURNING *`;
      if (!row) return null;
      const job = jobFromRow(row);
      await finishJob(tx, job);
      return job;
    });
  }

  async function fail(jobId: string, error: JobError, options: FailOptions = {}): Promise<Job | null> {
    const now = clock();
    return inTx(options.tx, async (tx) => {
      const [row] = await tx<JobRow[]>`
        UPDATE jobs
        SET status = 'failed', finished_at = ${now}, error = ${JSON.stringify(error)}::text::jsonb,
            gpu_seconds_used = ${options.gpuSecondsUsed ?? 0}, lease_owner = NULL, lease_expires_at = NULL
        WHERE id = ${jobId} AND status IN ('queued', 'running')
          AND (${options.workerId ?? null}::text IS NULL OR lease_owner = ${options.workerId ?? null})
        RETURNING *`;
      if (!row) return null;
      const job = jobFromRow(row);
      await finishJob(tx, job);
      return job;
    });
  }

  async function rescueExpiredLeases(now: Date = clock()): Promise<RescueOutcome> {
    const error: JobError = {
      code: 'simulation_failed',
      message: `The job's worker stopped answering ${maxAttempts} times.`,
    };
    return sql.begin(async (tx) => {
      const rows = await tx<JobRow[]>`
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
            lease_owner = NULL, lease_expires_at = NULL, draws_done = 0
        FROM lapsed WHERE j.id = lapsed.id
        RETURNING j.*`;
      const jobs = rows.map(jobFromRow);
      const failed = jobs.filter((job) => job.status === 'failed');
      for (const job of failed) await finishJob(tx, job);
      const requeued = jobs.filter((job) => job.status === 'queued');
      if (requeued.length > 0) await tx`SELECT pg_notify(${JOBS_QUEUED_CHANNEL}, '')`;
      return { requeued, failed };
    });
  }

  async function get(jobId: string, options: { tx?: TransactionSql | undefined } = {}): Promise<Job | null> {
    const db = options.tx ?? sql;
    const [row] = await db<JobRow[]>`SELECT * FROM jobs WHERE id = ${jobId}`;
    return row ? jobFromRow(row) : null;
  }

  // Requests waiting for jobs, woken by the JOB_FINISHED_CHANNEL listener (server) or by polling.
  const waiters = new Map<string, Set<() => void>>();
  let finishedListener: Promise<{ unlisten(): Promise<void> }> | null = null;

  function ensureFinishedListener(): void {
    if (!deps.notifications || finishedListener) return;
    finishedListener = sql.listen(JOB_FINISHED_CHANNEL, (jobId) => {
      for (const wake of waiters.get(jobId) ?? []) wake();
    });
    // A failed LISTEN leaves polling in charge; try again on the next wait.
    finishedListener.catch(() => {
      finishedListener = null;
    });
  }

  async function waitFor(jobId: string, timeoutMs: number): Promise<Job | null> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    ensureFinishedListener();
    let wake = () => {};
    const set = waiters.get(jobId) ?? new Set();
    waiters.set(jobId, set);
    try {
      for (;;) {
        const job = await get(jobId);
        if (!job || !isOpenStatus(job.status)) return job;
        const left = deadline - Date.now();
        if (left <= 0) return job;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, pollMs));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
          set.add(wake);
        });
        set.delete(wake);
      }
    } finally {
      set.delete(wake);
      if (set.size === 0) waiters.delete(jobId);
    }
  }

  async function openJobCount(orgId: string, options: { tx?: TransactionSql | undefined } = {}) {
    return countOpenJobGroups(options.tx ?? sql, orgId);
  }

  async function getBatch(batchId: string) {
    const [batchRow] = await sql<BatchRow[]>`SELECT * FROM batches WHERE id = ${batchId}`;
    if (!batchRow) return null;
    const rows = await sql<(JobRow & { delivery_id: string | null; credits_charged_milli: number | null })[]>`
      SELECT j.*, d.id AS delivery_id, d.credits_charged_milli
      FROM jobs j LEFT JOIN deliveries d ON d.job_id = j.id
      WHERE j.batch_id = ${batchId}
      ORDER BY j.batch_position`;
    const items: BatchItem[] = rows.map((row) => ({
      ...jobFromRow(row),
      deliveryId: row.delivery_id,
      creditsChargedMilli: row.credits_charged_milli ?? 0,
    }));
    return { batch: batchFromRow(batchRow), items };
  }

  async function listenForWork(onWork: () => void): Promise<() => Promise<void>> {
    if (!deps.notifications) return async () => {};
    const listener = await sql.listen(JOBS_QUEUED_CHANNEL, () => onWork());
    return () => listener.unlisten();
  }

  async function close(): Promise<void> {
    const listener = finishedListener;
    finishedListener = null;
    if (listener) await (await listener.catch(() => null))?.unlisten();
  }

  return {
    enqueue,
    enqueueMany: insertJobs,
    enqueueBatch,
    claim,
    heartbeat,
    progress,
    lockOwnedJob,
    complete,
    fail,
    rescueExpiredLeases,
    get,
    waitFor,
    openJobCount,
    getBatch,
    listenForWork,
    close,
  };
}

export function jobFromRow(row: JobRow): Job {
  return {
    id: row.id,
    orgId: row.org_id,
    mode: row.mode,
    reservationId: row.reservation_id,
    batchId: row.batch_id,
    batchPosition: row.batch_position,
    fixtureId: row.fixture_id,
    dataVersion: row.data_version,
    draws: row.draws,
    seed: row.seed,
    inputs: row.inputs,
    cacheKey: row.cache_key,
    scope: row.scope,
    priceMilli: row.price_milli,
    status: row.status,
    drawsDone: row.draws_done,
    attempts: row.attempts,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    resultId: row.result_id,
    error: row.error,
    usageDay: typeof row.usage_day === 'string' ? row.usage_day.slice(0, 10) : utcDay(row.usage_day),
    gpuSecondsReserved: row.gpu_seconds_reserved,
    gpuSecondsUsed: row.gpu_seconds_used,
    engine: row.engine,
    requestId: row.request_id,
    idempotencyKey: row.idempotency_key,
  };
}

function batchFromRow(row: BatchRow): Batch {
  return {
    id: row.id,
    orgId: row.org_id,
    mode: row.mode,
    draws: row.draws,
    itemCount: row.item_count,
    createdAt: row.created_at,
    requestId: row.request_id,
    idempotencyKey: row.idempotency_key,
  };
}
