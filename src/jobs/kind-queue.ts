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
import { laneWeights, TEST_LANE_WEIGHT } from '../limits/plans.js';
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
  /**
   * Whether a job is background work, of the table not aliased: within an organisation's lane its
   * interactive jobs are claimed before its background ones (claimFrom). Simulations: a batch's items
   * (paths included); projections: none.
   */
  background(db: Db): Fragment;
  /** A job's place among those queued with it (a batch's items in the batch's order), of the table not aliased. */
  position(db: Db): Fragment;
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
  /**
   * Claims up to `n` jobs under this worker's lease, while the weight claimed before each is below `room`;
   * with `only`, only the jobs it names (ClaimOnly).
   */
  claim(workerId: string, n: number, leaseMs: number, room: number, only?: ClaimOnly): Promise<J[]>;
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

/**
 * Which queued jobs a claim beyond the worker's room may take (src/jobs/claim-loop.ts; docs/decisions.md §6
 * "Fair shares"); a job passes when it passes either.
 */
export interface ClaimOnly {
  /** Jobs of this weight or less: a small run, begun beside large ones held. */
  maxWeight?: number | undefined;
  /**
   * Jobs of lanes with nothing running, on any worker: a lane that has had none of the engine lately,
   * whose run the engine then interleaves with the others' (src/engine-contract/fair-slices.ts).
   */
  idleLanes?: boolean | undefined;
}

/** What a claim adds to each job it returns. */
export interface Claimed {
  /** The weight of the job's lane in the fair order (its organisation's plan, src/limits/plans.ts). */
  laneWeight: number;
}

export interface ClaimRequest {
  workerId: string;
  /** Jobs at most. */
  n: number;
  leaseMs: number;
  now: Date;
  /** The weight the claim may take: jobs are claimed while the weight claimed before each is below it. */
  room?: number | undefined;
  /** Only the jobs it names (a claim beyond the worker's room, claim-loop.ts); absent: any. */
  only?: ClaimOnly | undefined;
}

/**
 * A job's lane (docs/decisions.md §6 "Fair shares"): its organisation's live work, or the work of every
 * test key together. The claim's statement says the same in SQL (claimFrom's `lane`); the worker names it
 * to the engine, whose slices of draws take turns by lane.
 */
export function laneOf(job: { mode: string; orgId: string }): string {
  return job.mode === 'test' ? 'test' : `org ${job.orgId}`;
}

/**
 * Claims up to `n` jobs of the kind under `workerId`'s lease, in the engine's fair order (docs/decisions.md
 * §6 "Fair shares"), those whose weight claimed before them, in this claim, is below `room`: the first is
 * always taken, and a claim ends past its room by one job at most. One statement (after River): pick, lock
 * and lease, skipping rows other workers hold. A window function may not stand beside FOR UPDATE: the
 * order is worked out on the candidates first, and the weights are summed over the rows locked. The
 * candidates are worked out once (`tagged` is MATERIALIZED) and locked where they were read (their ctid;
 * a row another worker changed meanwhile is checked again as FOR UPDATE does, and skipped unless still
 * claimable). Joined to the table by id, with statistics taken before a batch was queued (which said few
 * jobs were queued, the case of a batch's first claims), the planner read every queued row and, for
 * each, went through the candidates again (or worked them out again): the claims of a batch of 1,000
 * took 0.1 to 0.5 s each in the server's log (docs/decisions.md §6, "What a job costs the host";
 * test/jobs/job-plans.test.ts).
 *
 * The fair order is weighted fair queuing by lane, a lane being an organisation's live work, or all test
 * keys' work together: a queued job's tag is its lane's weight running now plus the weights of its lane's
 * queued jobs up to and including it, over the lane's weight (its organisation's plan's `laneWeight`,
 * src/limits/plans.ts; TEST_LANE_WEIGHT for test keys), its lane's interactive jobs (no batch) before its
 * batch items, each oldest first and a batch's items in its order; the smallest tag goes first. So a lane with nothing
 * running gets its small job ahead of another lane's large ones, lanes that both wait take turns by
 * weight, and an organisation's single run goes ahead of its own batch. Every worker process claims by
 * the same rule, in the same statement.
 */
export async function claimFrom<J extends { createdAt: Date }>(
  sql: Sql,
  table: JobTable,
  claim: ClaimRequest,
): Promise<(J & Claimed)[]> {
  if (claim.n <= 0) return [];
  const { now } = claim;
  const leaseEnd = new Date(now.getTime() + claim.leaseMs);
  const room =
    claim.room !== undefined && Number.isFinite(claim.room)
      ? Math.max(1, Math.floor(claim.room))
      : Number.MAX_SAFE_INTEGER;
  const weight = table.weight === null ? sql`1` : sql(table.weight);
  const lane = sql`CASE WHEN mode = 'test' THEN 'test' ELSE org_id END`;
  const background = table.background(sql);
  const position = table.position(sql);
  const lapsed =
    table.lapsed === 'taken over' ? sql`OR (status = 'running' AND lease_expires_at < ${now})` : sql``;
  const only = claimOnly(sql, weight, lane, claim.only);
  const weights = JSON.stringify(laneWeights());
  const rows = await sql<(J & { claimPlace?: string; laneWeight: number })[]>`
    WITH owners AS (
      SELECT o.org_id, o.mode,
             CASE WHEN o.mode = 'test' THEN ${TEST_LANE_WEIGHT}::numeric
                  ELSE COALESCE((${weights}::text::jsonb ->> orgs.plan)::numeric, 1) END AS lane_weight
      FROM (SELECT DISTINCT org_id, mode FROM ${sql(table.name)} WHERE status = 'queued' ${lapsed}) o
      LEFT JOIN orgs ON orgs.id = o.org_id
    ), running AS (
      SELECT ${lane} AS lane, sum(${weight}) AS load FROM ${sql(table.name)}
      WHERE status = 'running' GROUP BY 1
    ), candidates AS (
      SELECT c.*, o.lane_weight FROM owners o CROSS JOIN LATERAL (
        SELECT ctid AS row_at, id, ${weight} AS weight, created_at, ${lane} AS lane,
               ${background} AS background, ${position} AS position
        FROM ${sql(table.name)}
        WHERE (status = 'queued' ${lapsed}) AND org_id = o.org_id AND mode = o.mode ${only}
        ORDER BY background, created_at, position, id
        LIMIT ${claim.n}
      ) c
    ), tagged AS MATERIALIZED (
      SELECT c.row_at, c.id, c.weight, c.created_at, c.lane_weight,
             (COALESCE(r.load, 0)
               + sum(c.weight) OVER (
                   PARTITION BY c.lane ORDER BY c.background, c.created_at, c.position, c.id
                 )) / c.lane_weight AS tag, c.position
      FROM candidates c LEFT JOIN running r ON r.lane = c.lane
    ), next AS (
      SELECT j.id, t.weight, t.tag, t.created_at, t.position, t.lane_weight
      FROM tagged t JOIN ${sql(table.name)} j ON j.ctid = t.row_at AND j.id = t.id
      WHERE j.status = 'queued' ${lapsed}
      ORDER BY t.tag, t.created_at, t.position, j.id
      LIMIT ${claim.n}
      FOR UPDATE OF j SKIP LOCKED
    ), fits AS (
      SELECT id, place, lane_weight FROM (
        SELECT id, lane_weight,
               sum(weight) OVER (ORDER BY tag, created_at, position, id) - weight AS before,
               row_number() OVER (ORDER BY tag, created_at, position, id) AS place
        FROM next
      ) summed
      WHERE before < ${room}::bigint
    )
    UPDATE ${sql(table.name)} j
    SET status = 'running', lease_owner = ${claim.workerId}, lease_expires_at = ${leaseEnd},
        attempts = j.attempts + 1, started_at = COALESCE(j.started_at, ${now})
        ${table.runEnded(sql, sql`FALSE`)}
    FROM fits WHERE j.id = fits.id
    RETURNING ${table.claimed(sql)}, fits.place AS "claimPlace", fits.lane_weight AS "laneWeight"`;
  // In the fair order: the worker begins them as they come.
  rows.sort((a, b) => Number(a.claimPlace) - Number(b.claimPlace));
  for (const row of rows) {
    delete row.claimPlace;
    row.laneWeight = Number(row.laneWeight);
  }
  return rows;
}

/**
 * ClaimOnly as a condition of claimFrom's candidates (a queued row of the kind's table, not aliased, with
 * its `weight` and `lane`; the `running` load of each lane).
 */
function claimOnly(
  sql: Sql,
  weight: Fragment | postgres.Helper<string, []>,
  lane: Fragment,
  only: ClaimOnly | undefined,
): Fragment {
  const { maxWeight, idleLanes } = only ?? {};
  if (maxWeight === undefined && !idleLanes) return sql``;
  const small = maxWeight === undefined ? sql`FALSE` : sql`${weight} <= ${maxWeight}`;
  const idle = idleLanes ? sql`NOT EXISTS (SELECT 1 FROM running r WHERE r.lane = ${lane})` : sql`FALSE`;
  return sql`AND (${small} OR ${idle})`;
}

/**
 * Extends the leases this worker still holds; returns the ids it still holds. The rows are locked in id
 * order first, as a store of outcomes locks them (leases.ts completeJobs): an UPDATE alone locks in scan
 * order, and a heartbeat and a store of the same jobs then waited for each other in a circle, PostgreSQL
 * ended the store as the deadlock's victim, and its outcomes waited for their leases to run out (~30 s).
 * They are found and locked by id alone, and those still running under this lease updated by id, as
 * completeJobs does: with `status = 'running'` beside the ids the planner may read the partial index of
 * every running job (jobs_running_lease), dead entries included (48 ms for one heartbeat of 256 jobs in
 * the server's log after a few batches).
 */
export async function extendLeases(
  sql: Sql,
  table: JobTable,
  lease: { workerId: string; jobIds: readonly string[]; leaseEnd: Date },
): Promise<string[]> {
  const { workerId, jobIds } = lease;
  if (jobIds.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    WITH held AS MATERIALIZED (
      SELECT id, status, lease_owner FROM ${sql(table.name)}
      WHERE id = ANY(${sql.array([...jobIds])}::text[])
      ORDER BY id
      FOR NO KEY UPDATE
    )
    UPDATE ${sql(table.name)} j SET lease_expires_at = ${lease.leaseEnd}
    WHERE j.id = ANY(ARRAY(SELECT id FROM held WHERE status = 'running' AND lease_owner = ${workerId}))
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
    claim: (workerId, n, leaseMs, room, only) =>
      claimFrom<J>(sql, table, { workerId, n, leaseMs, room, only, now: clock() }),
    heartbeat: (workerId, jobIds, leaseMs) =>
      extendLeases(sql, table, { workerId, jobIds, leaseEnd: new Date(clock().getTime() + leaseMs) }),
    cancelledOf: (jobIds) => cancelledOf(sql, table, jobIds),
    release: (workerId, jobIds) => releaseHeld(deps, table, workerId, jobIds),
  };
}
