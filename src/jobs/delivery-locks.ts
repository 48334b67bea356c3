// The locks a page of a batch's results stream takes before it delivers (docs/decisions.md §6): the
// page's finished jobs in one statement, in id order. Every delivery locks its job before the account
// of its organisation (src/simulations/deliver.ts); a page that took the account after its first job and
// then locked the next jobs one by one waited for a job a single delivery held while that delivery waited
// for the account: a deadlock. Locked all at once and in one order, the page's jobs are taken before the
// account, like a single delivery's, and two pages of one batch queue behind each other.
import type { TransactionSql } from '../db/connection.js';
import type { Job, JobStatus } from './types.js';

/**
 * The page's jobs, as it read them succeeded, locked for their delivery in id order (the order the locks
 * are taken in): the rows given, each with its status as locked. Only the status is read again: once a
 * job has succeeded, its delivery (delivered), the sweeper (expired) and nothing else change its row, so
 * the page's read already holds every other column, and a page's 100 rows are not fetched whole twice.
 */
export async function lockJobsForDelivery(tx: TransactionSql, jobs: readonly Job[]): Promise<Job[]> {
  if (jobs.length === 0) return [];
  const locked = await tx<{ id: string; status: JobStatus }[]>`
    SELECT id, status FROM jobs
    WHERE id = ANY(${tx.array(jobs.map((job) => job.id))}::text[])
    ORDER BY id
    FOR NO KEY UPDATE`;
  const read = new Map(jobs.map((job) => [job.id, job]));
  return locked.map(({ id, status }) => ({ ...read.get(id)!, status }));
}
