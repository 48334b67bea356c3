// The locks a page of a batch's results stream takes before it delivers (docs/decisions.md §6): the
// page's finished jobs in one statement, in id order. Every delivery locks its job before the account
// of its organisation (src/simulations/deliver.ts); a page that took the account after its first job and
// then locked the next jobs one by one waited for a job a single delivery held while that delivery waited
// for the account: a deadlock. Locked all at once and in one order, the page's jobs are taken before the
// account, like a single delivery's, and two pages of one batch queue behind each other.
import type { TransactionSql } from '../db/connection.js';
import { jobColumns } from './job-store.js';
import type { Job } from './types.js';

/** The jobs locked for their delivery, in id order (the order the locks are taken in). */
export async function lockJobsForDelivery(tx: TransactionSql, jobIds: readonly string[]): Promise<Job[]> {
  if (jobIds.length === 0) return [];
  return tx<Job[]>`
    SELECT ${jobColumns(tx)} FROM jobs
    WHERE id = ANY(${tx.array([...jobIds])}::text[])
    ORDER BY id
    FOR NO KEY UPDATE`;
}
