// News of jobs of every kind (docs/decisions.md §6): jobs queued wake the workers, a job finished wakes
// the requests waiting for it. Sent once the transaction that made the change commits: this process hears
// it directly (src/db/commit-hooks.ts; all that PGlite has), other processes by NOTIFY on a server. A job
// store of any kind announces through here and its waiters wait through waits.ts: job ids name their kind
// (job_…, pjob_…), so one channel of each carries every kind's news.
import { afterCommit } from '../db/commit-hooks.js';
import type { TransactionSql } from '../db/connection.js';
import type { JobWakeUps } from './types.js';

/** Woken on commit of an enqueue. */
export const JOBS_QUEUED_CHANNEL = 'matchsim_jobs_queued';
/** Payload: the job id, when a job leaves queued/running. */
export const JOB_FINISHED_CHANNEL = 'matchsim_job_finished';

/** Who hears the news: this process's wake-ups (waits.ts), absent where nothing in-process waits. */
export interface JobNews {
  wake?: JobWakeUps | undefined;
}

/**
 * Jobs were queued in `tx`: on commit, workers hear it (NOTIFY on a server; this process's worker
 * directly, which is all PGlite has).
 */
export async function announceQueued(news: JobNews, tx: TransactionSql): Promise<void> {
  const wake = news.wake;
  await tx`SELECT pg_notify(${JOBS_QUEUED_CHANNEL}, ${wake?.origin ?? ''})`;
  if (wake) afterCommit(tx, () => wake.queued());
}

/** Jobs left queued/running in `tx`: on commit, the requests waiting for them hear it. */
export async function announceFinished(
  news: JobNews,
  tx: TransactionSql,
  jobIds: readonly string[],
): Promise<void> {
  if (jobIds.length === 0) return;
  // One statement for all of them: a cancelled batch ends up to 1,000 jobs at once.
  await tx`SELECT pg_notify(${JOB_FINISHED_CHANNEL}, id) FROM unnest(${tx.array(jobIds as string[])}::text[]) AS id`;
  wakeOnFinish(news, tx, jobIds);
}

/**
 * announceFinished inside the statement that ends the jobs (a pack's completion, leases.ts completeJobs),
 * not in one of its own: a condition, always true, that sends the NOTIFY of every row of that
 * statement's CTE `ended` (its rows' `id`); its caller then calls wakeOnFinish with the same jobs.
 */
export function announcedWith(tx: TransactionSql, ended: string) {
  return tx`(SELECT count(pg_notify(${JOB_FINISHED_CHANNEL}, id)) FROM ${tx(ended)}) >= 0`;
}

/** This process's waiters for `jobIds` woken once `tx` commits (the NOTIFY is for other processes). */
export function wakeOnFinish(news: JobNews, tx: TransactionSql, jobIds: readonly string[]): void {
  const wake = news.wake;
  if (!wake || jobIds.length === 0) return;
  afterCommit(tx, () => {
    for (const id of jobIds) wake.finished(id);
  });
}
