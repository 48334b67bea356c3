// When a batch has completed (docs/api.md §6.2: batch.completed, also after a cancel). A transaction that
// ends some of a batch's jobs decides it itself when it can take the batch's advisory lock at once: under
// the lock it counts the open jobs and sees every other end committed, except one under way in a
// transaction that holds the lock, which then decides in its turn. It never waits for the lock: the
// transactions that end jobs hold job, usage and hold rows in orders of their own (a worker's pack, a
// cancel), and waiting here would close circles with them. A transaction that finds the lock taken writes
// a check instead (webhook_batch_checks, this module's table), in the same transaction; a worker decides
// it after it has committed (`decideBatchChecks`, run by every delivery round), waiting for the lock
// first: the transaction that held it may not have committed yet, and it counted before this one's end.
// The checker holds nothing a job-ending transaction waits for, so its wait closes no circle. The unique
// index of webhook_events keeps one batch.completed per batch whichever decides.
import type { Sql, TransactionSql } from '../db/connection.js';
import { batchTalliesIn } from '../jobs/queue.js';
import type { Batch } from '../jobs/types.js';
import { type BatchSummary, summariseBatch } from '../simulations/batch-status.js';

/** The class of the batch locks (its second key is the batch id's hash). */
const BATCH_END_LOCK_CLASS = 0x6d7362;
/** Checks one round decides at most. */
const CHECKS_PER_ROUND = 200;

export interface CompletedBatch {
  batch: Batch;
  summary: BatchSummary;
}

/** Of these batches, the ones with no queued or running job left, read in `tx`. */
async function completedAmong(tx: TransactionSql, batchIds: readonly string[]): Promise<CompletedBatch[]> {
  if (batchIds.length === 0) return [];
  // Most packs end jobs of a batch still running: one look for an open job (the first found ends it)
  // settles those, and only a batch with none left is read whole and counted.
  const ended = await tx<{ id: string }[]>`
    SELECT b.id FROM unnest(${tx.array([...batchIds])}::text[]) AS b(id)
    WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.batch_id = b.id AND j.status IN ('queued', 'running'))`;
  if (ended.length === 0) return [];
  const { batches, tallies } = await batchTalliesIn(
    tx,
    ended.map((row) => row.id),
  );
  return batches.flatMap((batch) => {
    const summary = summariseBatch(batch, tallies.get(batch.id)!);
    const ended = summary.status === 'completed' || summary.status === 'cancelled';
    return ended ? [{ batch, summary }] : [];
  });
}

/**
 * In the transaction that ended jobs of these batches: the batches it finds complete under their lock;
 * a check for each batch whose lock another transaction holds (`checksLeft`: a worker is to decide them).
 */
export async function batchesCompletedIn(
  tx: TransactionSql,
  batchIds: readonly string[],
  now: Date,
): Promise<{ completed: CompletedBatch[]; checksLeft: number }> {
  if (batchIds.length === 0) return { completed: [], checksLeft: 0 };
  const rows = await tx<{ id: string; locked: boolean }[]>`
    SELECT id, pg_try_advisory_xact_lock(${BATCH_END_LOCK_CLASS}, hashtext(id)) AS locked
    FROM (SELECT unnest(${tx.array([...batchIds].sort())}::text[]) AS id ORDER BY 1) ordered`;
  const busy = rows.filter((row) => !row.locked).map((row) => row.id);
  if (busy.length > 0) {
    await tx`
      INSERT INTO webhook_batch_checks (batch_id, created_at)
      SELECT id, ${now} FROM unnest(${tx.array(busy)}::text[]) AS id`;
  }
  const completed = await completedAmong(
    tx,
    rows.filter((row) => row.locked).map((row) => row.id),
  );
  return { completed, checksLeft: busy.length };
}

/**
 * Decides the checks that have committed: takes up to CHECKS_PER_ROUND (skipping those another worker
 * holds), and hands the batches found complete to `write` in the same transaction. Returns how many
 * checks it decided.
 */
export async function decideBatchChecks(
  sql: Sql,
  write: (tx: TransactionSql, completed: CompletedBatch[]) => Promise<unknown>,
): Promise<number> {
  return sql.begin(async (tx) => {
    const checks = await tx<{ batchId: string }[]>`
      DELETE FROM webhook_batch_checks WHERE id IN (
        SELECT id FROM webhook_batch_checks ORDER BY id LIMIT ${CHECKS_PER_ROUND} FOR UPDATE SKIP LOCKED)
      RETURNING batch_id`;
    if (checks.length === 0) return 0;
    const batchIds = [...new Set(checks.map((check) => check.batchId))].sort();
    await tx`
      SELECT pg_advisory_xact_lock(${BATCH_END_LOCK_CLASS}, hashtext(id))
      FROM (SELECT unnest(${tx.array(batchIds)}::text[]) AS id ORDER BY 1) ordered`;
    await write(tx, await completedAmong(tx, batchIds));
    return checks.length;
  });
}
