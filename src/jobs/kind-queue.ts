// The queue of every job kind (docs/ARCHITECTURE.md, "Job kinds"): the claim, the lease's heartbeat, the
// lock of the jobs a worker holds, their release at a shutdown and the rescue of lapsed leases, written
// once and run on the table of a kind (jobs for simulations, projection_jobs for season projections).
// Every kind's table has the queue's columns, with the same meaning and the same CHECK (migrations/0004,
// 0012): status (queued → running → succeeded or failed), attempts, lease_owner and lease_expires_at (set
// while running, and only then), created_at (the queue's order), started_at (first claimed), finished_at,
// error. What a kind's table adds is told by its JobTable: the column a claim's room is counted in, what a
// new run or a run ended without its outcome resets of its own columns, and what a claim returns.
import type postgres from 'postgres';
import type { Sql, TransactionSql } from '../db/connection.js';
import { announceQueued, type JobNews } from './job-news.js';
import type { JobError } from './types.js';

type Db = Sql | TransactionSql;
/** A piece of a statement (a tagged template or `unsafe` text not yet sent), placed into another. */
export type Fragment =
  | postgres.PendingQuery<postgres.Row[]>
  | postgres.PendingQuery<(postgres.Row & Iterable<postgres.Row>)[]>;

export interface JobTable {
  /** The kind's table. */
  name: string;
  /**
   * The column whose sum bounds a claim (a simulation's draws, docs/decisions.md §6 "Claims"); null: a
   * claim is bounded by its count of jobs alone.
   */
  weight: string | null;
  /**
   * A running job whose lease ran out: `rescued` by the worker's maintenance (rescueLapsed: queued again,
   * or failed after its last attempt), or `taken over` by the next claim (the kind's handler then fails a
   * job claimed too often). The simulations' claim, on a queue of thousands, reads only the queued rows'
   * index; a projection's worker runs one job at a time and takes the lapsed one over in its claim.
   */
  lapsed: 'rescued' | 'taken over';
  /** The columns a claim returns, of the table aliased `j`. */
  claimed(db: Db): Fragment;
  /** The columns returned of the jobs whose run the queue ended (rescueLapsed), of the table aliased `j`. */
  ended(db: Db): Fragment;
  /**
   * SET items (each led by a comma) of the kind's own columns when a run ends without its outcome: its
   * job queued again (`failed` false) or failed by the queue (`failed` true). A claim sets them as for a
   * job queued again: every run starts from nothing.
   */
  runEnded(db: Db, failed: Fragment): Fragment;
}

/** A job under a lease, as the worker that holds it sees it: its id is all the worker reads. */
export interface LeasedJob {
  id: string;
}

/** A kind's queue as its worker uses it: the statements of kind-queue.ts on the kind's table. */
export interface KindQueue<J extends LeasedJob> {
  /** Claims up to `n` jobs under this worker's lease, while the weight claimed before each is below `room`. */
  claim(workerId: string, n: number, leaseMs: number, room: number): Promise<J[]>;
  /** Extends the leases this worker still holds; the ids it still holds. */
  heartbeat(workerId: string, jobIds: readonly string[], leaseMs: number): Promise<string[]>;
  /**
   * Of `jobIds`, those cancelled (a batch's cancel takes jobs a worker holds but has not begun): a job
   * the heartbeat no longer finds held was cancelled, or its lease lapsed and the queue gave it away.
   */
  cancelledOf(jobIds: readonly string[]): Promise<string[]>;
  /** Running jobs of this worker back to queued at once (a shutdown); the ids queued again. */
  release(workerId: string, jobIds: readonly string[]): Promise<string[]>;
  /** Lapsed leases rescued, for a kind whose claim does not take them over (kind-queue.ts JobTable). */
  rescueExpiredLeases?(now: Date): Promise<{ requeued: J[]; failed: J[] }>;
}

export interface ClaimRequest {
  workerId: string;
  /** Jobs at most. */
  n: number;
  leaseMs: number;
  now: Date;
  /** The weight the claim may take: jobs are claimed while the weight claimed before each is below it. */
  room?: number | undefined;
}

/**
 * Claims up to `n` jobs of the kind, oldest first, under `workerId`'s lease: those whose weight claimed
 * before them, in this claim, is below `room`, so the first is always taken and a claim ends past its room
 * by one job at most. One statement (after River): pick, lock and lease, skipping rows other workers hold.
 * A window function may not stand beside FOR UPDATE: the weights are summed over the rows locked.
 */
export async function claimFrom<J extends { createdAt: Date }>(
  sql: Sql,
  table: JobTable,
  claim: ClaimRequest,
): Promise<J[]> {
  if (claim.n <= 0) return [];
  const { now } = claim;
  const leaseEnd = new Date(now.getTime() + claim.leaseMs);
  const room =
    claim.room !== undefined && Number.isFinite(claim.room)
      ? Math.max(1, Math.floor(claim.room))
      : Number.MAX_SAFE_INTEGER;
  const weight = table.weight === null ? sql`1` : sql(table.weight);
  const lapsed =
    table.lapsed === 'taken over' ? sql`OR (status = 'running' AND lease_expires_at < ${now})` : sql``;
  const rows = await sql<J[]>`
    WITH next AS (
      SELECT id, ${weight} AS weight, created_at FROM ${sql(table.name)}
      WHERE status = 'queued' ${lapsed}
      ORDER BY created_at, id
      LIMIT ${claim.n}
      FOR UPDATE SKIP LOCKED
    ), fits AS (
      SELECT id FROM (
        SELECT id, sum(weight) OVER (ORDER BY created_at, id) - weight AS before FROM next
      ) summed
      WHERE before < ${room}::bigint
    )
    UPDATE ${sql(table.name)} j
    SET status = 'running', lease_owner = ${claim.workerId}, lease_expires_at = ${leaseEnd},
        attempts = j.attempts + 1, started_at = COALESCE(j.started_at, ${now})
        ${table.runEnded(sql, sql`FALSE`)}
    FROM fits WHERE j.id = fits.id
    RETURNING ${table.claimed(sql)}`;
  return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

/**
 * Extends the leases this worker still holds; returns the ids it still holds. The rows are locked in id
 * order first, as a store of outcomes locks them (lockHeld): an UPDATE alone locks in scan order, and a
 * heartbeat and a store of the same jobs then waited for each other in a circle, PostgreSQL ended the
 * store as the deadlock's victim, and its outcomes waited for their leases to run out (~30 s).
 */
export async function extendLeases(
  sql: Sql,
  table: JobTable,
  lease: { workerId: string; jobIds: readonly string[]; leaseEnd: Date },
): Promise<string[]> {
  const { workerId, jobIds } = lease;
  if (jobIds.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    WITH held AS (
      SELECT id FROM ${sql(table.name)}
      WHERE id = ANY(${sql.array([...jobIds])}::text[]) AND status = 'running' AND lease_owner = ${workerId}
      ORDER BY id
      FOR NO KEY UPDATE
    )
    UPDATE ${sql(table.name)} j SET lease_expires_at = ${lease.leaseEnd} FROM held
    WHERE j.id = held.id AND j.status = 'running' AND j.lease_owner = ${workerId}
    RETURNING j.id`;
  return rows.map((row) => row.id);
}

/** KindQueue.cancelledOf: a plain read, no lock (the heartbeat that asks has nothing to change). */
export async function cancelledOf(sql: Sql, table: JobTable, jobIds: readonly string[]): Promise<string[]> {
  if (jobIds.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM ${sql(table.name)}
    WHERE id = ANY(${sql.array([...jobIds])}::text[]) AND status = 'cancelled'
    ORDER BY id`;
  return rows.map((row) => row.id);
}

/** The jobs of `jobIds` still under `workerId`'s lease, locked until `tx` ends, in one statement and in id order. */
export async function lockHeld(
  tx: TransactionSql,
  table: JobTable,
  jobIds: readonly string[],
  workerId: string,
): Promise<Set<string>> {
  if (jobIds.length === 0) return new Set();
  const rows = await tx<{ id: string }[]>`
    SELECT id FROM ${tx(table.name)}
    WHERE id = ANY(${tx.array([...jobIds])}::text[]) AND status = 'running' AND lease_owner = ${workerId}
    ORDER BY id
    FOR UPDATE`;
  return new Set(rows.map((row) => row.id));
}

/**
 * Puts running jobs this worker holds back in the queue at once (a shutdown that could not wait for
 * them), instead of letting their leases run out. The claim is given back too: a shutdown is not a
 * failed attempt, so it does not bring the job closer to its last. Returns the ids queued again.
 */
export async function releaseHeld(
  deps: JobNews & { sql: Sql },
  table: JobTable,
  workerId: string,
  jobIds: readonly string[],
): Promise<string[]> {
  if (jobIds.length === 0) return [];
  return deps.sql.begin(async (tx) => {
    const rows = await tx<{ id: string }[]>`
      UPDATE ${tx(table.name)} j
      SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL,
          attempts = GREATEST(j.attempts - 1, 0) ${table.runEnded(tx, tx`FALSE`)}
      WHERE j.id IN ${tx(jobIds)} AND j.status = 'running' AND j.lease_owner = ${workerId}
      RETURNING j.id`;
    if (rows.length > 0) await announceQueued(deps, tx);
    return rows.map((row) => row.id);
  });
}

export interface Rescued<J> {
  requeued: J[];
  failed: J[];
}

/**
 * The rescue of lapsed leases (a kind whose table says `rescued`): running jobs whose lease ran out go
 * back to the queue, or fail with `error` once claimed `maxAttempts` times; 500 at most a call. The
 * failed ones are handed to `ended` in the same transaction (what a job's end changes for the kind: its
 * hold, its waiters), and news of the queued ones wakes the workers once it commits.
 */
export async function rescueLapsed<J extends { status: string }>(
  deps: JobNews & { sql: Sql },
  table: JobTable,
  rescue: {
    now: Date;
    maxAttempts: number;
    error: JobError;
    ended(tx: TransactionSql, failed: J[]): Promise<void>;
  },
): Promise<Rescued<J>> {
  const { now, maxAttempts } = rescue;
  return deps.sql.begin(async (tx) => {
    const failed = tx`j.attempts >= ${maxAttempts}`;
    const jobs = await tx<J[]>`
      WITH lapsed AS (
        SELECT id FROM ${tx(table.name)}
        WHERE status = 'running' AND lease_expires_at <= ${now}
        ORDER BY lease_expires_at
        LIMIT 500
        FOR UPDATE SKIP LOCKED
      )
      UPDATE ${tx(table.name)} j
      SET status = CASE WHEN ${failed} THEN 'failed' ELSE 'queued' END,
          finished_at = CASE WHEN ${failed} THEN ${now}::timestamptz END,
          error = CASE WHEN ${failed} THEN ${JSON.stringify(rescue.error)}::text::jsonb END,
          lease_owner = NULL, lease_expires_at = NULL ${table.runEnded(tx, failed)}
      FROM lapsed WHERE j.id = lapsed.id
      RETURNING ${table.ended(tx)}`;
    const outcome = {
      requeued: jobs.filter((job) => job.status === 'queued'),
      failed: jobs.filter((job) => job.status === 'failed'),
    };
    await rescue.ended(tx, outcome.failed);
    if (outcome.requeued.length > 0) await announceQueued(deps, tx);
    return outcome;
  });
}

/**
 * A kind's queue on its table, as its worker uses it (kind-worker.ts): claims, heartbeats and releases
 * of kind-queue.ts. A kind whose table says `rescued` adds its rescue (rescueLapsed with its own end).
 */
export function tableQueue<J extends LeasedJob & { createdAt: Date }>(
  deps: JobNews & { sql: Sql; clock: () => Date },
  table: JobTable,
): KindQueue<J> {
  const { sql, clock } = deps;
  return {
    claim: (workerId, n, leaseMs, room) =>
      claimFrom<J>(sql, table, { workerId, n, leaseMs, room, now: clock() }),
    heartbeat: (workerId, jobIds, leaseMs) =>
      extendLeases(sql, table, { workerId, jobIds, leaseEnd: new Date(clock().getTime() + leaseMs) }),
    cancelledOf: (jobIds) => cancelledOf(sql, table, jobIds),
    release: (workerId, jobIds) => releaseHeld(deps, table, workerId, jobIds),
  };
}
