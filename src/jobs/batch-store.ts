// The statements of batch objects and lists (docs/api.md §2.6, §4.5, §4.10; docs/decisions.md §6) after
// submission (job-store.ts insertBatch writes a batch with its metadata, custom ids and rejected items): the
// cancellation of a batch's queued items, its items page by page for the results stream, and the
// organisation's jobs and batches newest first.
import type { Owner } from '../accounts/keys.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { announceFinished } from './job-news.js';
import { jobColumns } from './job-store.js';
import type { Batch, BatchJobTally, Job, JobStatus, JobStoreDeps, ListPage } from './types.js';

type Db = Sql | TransactionSql;

/** The batch row when it belongs to `owner`; anyone else's costs what an unknown id costs. */
export async function getOwnedBatch(db: Db, batchId: string, owner: Owner): Promise<Batch | null> {
  const [batch] = await db<Batch[]>`
    SELECT * FROM batches WHERE id = ${batchId} AND org_id = ${owner.orgId} AND mode = ${owner.mode}`;
  return batch ?? null;
}

/**
 * Cancels a batch: records the first request's time and, under the batch's lock, turns into `cancelled`
 * its jobs that no engine has started: the queued ones and those a worker has claimed but not yet marked
 * started (leases.ts startJobs; their leases end here). The jobs are locked in id order, as a worker's
 * start, heartbeat and store lock them, and each is taken only if it is still unstarted once locked: a
 * job is either started or cancelled, never both (docs/decisions.md §6 "Cancel"). A started job is left
 * to finish. Returns the jobs cancelled now (none on a repeated call), whose holds the caller releases in
 * the same transaction.
 */
export async function cancelUnstartedItems(
  deps: Pick<JobStoreDeps, 'wake' | 'events'>,
  tx: TransactionSql,
  batchId: string,
  owner: Owner,
  now: Date,
): Promise<{ batch: Batch; cancelled: Job[] } | null> {
  const [locked] = await tx<Batch[]>`
    SELECT * FROM batches WHERE id = ${batchId} AND org_id = ${owner.orgId} AND mode = ${owner.mode}
    FOR UPDATE`;
  if (!locked) return null;
  const [batch] = await tx<Batch[]>`
    UPDATE batches SET cancel_requested_at = COALESCE(cancel_requested_at, ${now})
    WHERE id = ${batchId} RETURNING *`;
  // FOR UPDATE checks each row again as the transaction that held it left it (a claim, a start), and the
  // UPDATE once more: a row a worker started meanwhile is left out.
  const cancelled = await tx<Job[]>`
    WITH unstarted AS MATERIALIZED (
      SELECT id FROM jobs
      WHERE batch_id = ${batchId}
        AND (status = 'queued' OR (status = 'running' AND run_started_at IS NULL))
      ORDER BY id FOR UPDATE
    )
    UPDATE jobs j
    SET status = 'cancelled', finished_at = ${now}, gpu_seconds_used = 0, draws_done = 0,
        lease_owner = NULL, lease_expires_at = NULL
    FROM unstarted
    WHERE j.id = unstarted.id
      AND (j.status = 'queued' OR (j.status = 'running' AND j.run_started_at IS NULL))
    RETURNING ${jobColumns(tx, 'j')}`;
  // Requests waiting on these jobs (docs/decisions.md §6) learn at once that they ended.
  await announceFinished(
    deps,
    tx,
    cancelled.map((job) => job.id),
  );
  if (cancelled.length > 0) await deps.events?.jobsEnded(tx, cancelled);
  return { batch: batch!, cancelled };
}

/** The batches of these ids, in id order (the webhooks' batch.completed reads them with their tallies). */
export async function batchesByIds(db: Db, batchIds: readonly string[]): Promise<Batch[]> {
  if (batchIds.length === 0) return [];
  return db<Batch[]>`SELECT * FROM batches WHERE id = ANY(${db.array([...batchIds])}::text[]) ORDER BY id`;
}

/** A page of a batch's jobs in submission order, from position `from` on. */
export async function batchJobsFrom(db: Db, batchId: string, from: number, limit: number): Promise<Job[]> {
  return db<Job[]>`
    SELECT ${jobColumns(db)} FROM jobs
    WHERE batch_id = ${batchId} AND batch_position >= ${from}
    ORDER BY batch_position LIMIT ${limit}`;
}

export async function tallyBatchJobs(
  db: Db,
  batchIds: readonly string[],
): Promise<Map<string, BatchJobTally>> {
  const tallies = new Map<string, BatchJobTally>(
    batchIds.map((id) => [id, { counts: {}, lastFinishedAt: null }]),
  );
  if (batchIds.length === 0) return tallies;
  const rows = await db<{ batchId: string; status: JobStatus; n: number; lastFinishedAt: Date | null }[]>`
    SELECT batch_id, status, count(*)::int AS n, max(finished_at) AS last_finished_at
    FROM jobs WHERE batch_id = ANY(${db.array([...batchIds])}::text[])
    GROUP BY batch_id, status`;
  for (const row of rows) {
    const tally = tallies.get(row.batchId)!;
    tally.counts[row.status] = row.n;
    if (row.lastFinishedAt && (!tally.lastFinishedAt || row.lastFinishedAt > tally.lastFinishedAt)) {
      tally.lastFinishedAt = row.lastFinishedAt;
    }
  }
  return tallies;
}

/**
 * The organisation's jobs newest first (created_at, then id, both descending), `limit + 1` rows so that
 * the caller knows whether more follow. A cursor that is not the caller's own id starts nowhere: an
 * empty page.
 */
export async function listJobs(db: Db, owner: Owner, page: ListPage): Promise<Job[]> {
  return db<Job[]>`
    SELECT ${jobColumns(db, 'j')} FROM jobs j
    WHERE j.org_id = ${owner.orgId} AND j.mode = ${owner.mode}
      AND (${page.status ?? null}::text IS NULL OR j.status = ${page.status ?? null})
      AND (${page.startingAfter ?? null}::text IS NULL OR (j.created_at, j.id) < (
        SELECT c.created_at, c.id FROM jobs c
        WHERE c.id = ${page.startingAfter ?? null} AND c.org_id = ${owner.orgId} AND c.mode = ${owner.mode}))
    ORDER BY j.created_at DESC, j.id DESC
    LIMIT ${page.limit + 1}`;
}

/** The organisation's batches newest first, `limit + 1` rows, optionally of one status only. */
export async function listBatches(db: Db, owner: Owner, page: ListPage): Promise<Batch[]> {
  // The status of docs/decisions.md §6, as batchStatusName computes it from a tally.
  return db<Batch[]>`
    SELECT * FROM (
      SELECT b.*, CASE
          WHEN EXISTS (SELECT 1 FROM jobs o WHERE o.batch_id = b.id AND o.status IN ('queued', 'running'))
          THEN (CASE WHEN b.cancel_requested_at IS NULL THEN 'in_progress' ELSE 'cancelling' END)
          ELSE (CASE WHEN b.cancel_requested_at IS NULL THEN 'completed' ELSE 'cancelled' END)
        END AS batch_status
      FROM batches b
      WHERE b.org_id = ${owner.orgId} AND b.mode = ${owner.mode}
        AND (${page.startingAfter ?? null}::text IS NULL OR (b.created_at, b.id) < (
          SELECT c.created_at, c.id FROM batches c
          WHERE c.id = ${page.startingAfter ?? null} AND c.org_id = ${owner.orgId} AND c.mode = ${owner.mode}))
    ) listed
    WHERE ${page.status ?? null}::text IS NULL OR batch_status = ${page.status ?? null}
    ORDER BY created_at DESC, id DESC
    LIMIT ${page.limit + 1}`;
}
