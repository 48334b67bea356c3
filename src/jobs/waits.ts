// Waiting for jobs (docs/decisions.md §6). A job queued or finished wakes this process's worker and the
// requests waiting here directly, once its transaction has committed (src/db/commit-hooks.ts): on PGlite,
// where one process holds the database, that is every wake-up. On a PostgreSQL server a NOTIFY on commit
// carries the same news to the other processes. Polling stays only as the fallback.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../db/connection.js';
import { JOB_FINISHED_CHANNEL, JOBS_QUEUED_CHANNEL } from './job-news.js';
import { getJob } from './job-store.js';
import { isOpenStatus, type Job, type JobWakeUps } from './types.js';

export interface JobWaits {
  /** Resolves when the job leaves queued/running or the time is up (then with its current state). */
  waitFor(jobId: string, timeoutMs: number): Promise<Job | null>;
  /**
   * waitFor for a job of any kind: `read` reads its row (null when there is none), `isOpen` says whether it
   * is still queued or running. Woken by the news of job-news.ts announceFinished, else polling.
   */
  waitUntilDone<T>(
    jobId: string,
    timeoutMs: number,
    read: () => Promise<T | null>,
    isOpen: (row: T) => boolean,
  ): Promise<T | null>;
  /** Calls `onWork` when jobs are queued; returns the way to stop listening. */
  listenForWork(onWork: () => void): Promise<() => Promise<void>>;
  /** What the job statements call on commit (JobStoreDeps.wake). */
  wake: JobWakeUps;
  /**
   * Ends every wait now and every later one at once (a shutdown): the waiting requests answer with the
   * job's current state (202 and its result path) instead of holding the drain up.
   */
  endWaits(): void;
  close(): Promise<void>;
}

export function makeJobWaits(deps: { sql: Sql; notifications: boolean; pollMs: number }): JobWaits {
  const { sql } = deps;
  // Requests waiting for jobs, woken by this process's commits, the JOB_FINISHED_CHANNEL listener
  // (server) or polling.
  const waiters = new Map<string, Set<() => void>>();
  // This process's workers, woken when jobs are queued.
  const workListeners = new Set<() => void>();
  let finishedListener: Promise<{ unlisten(): Promise<void> }> | null = null;
  let ended = false;

  const finished = (jobId: string) => {
    for (const wake of waiters.get(jobId) ?? []) wake();
  };
  const queued = () => {
    for (const onWork of workListeners) onWork();
  };
  // In the NOTIFY of this process's enqueues (job-store.ts announceQueued), which `queued` has already
  // told this process's workers at the commit: the listener below skips them. A lone job's worker was
  // woken twice for it, the second time to claim nothing.
  const origin = randomUUID();

  function ensureFinishedListener(): void {
    if (!deps.notifications || finishedListener) return;
    finishedListener = sql.listen(JOB_FINISHED_CHANNEL, finished);
    // A failed LISTEN leaves polling in charge; try again on the next wait.
    finishedListener.catch(() => {
      finishedListener = null;
    });
  }

  async function waitUntilDone<T>(
    jobId: string,
    timeoutMs: number,
    read: () => Promise<T | null>,
    isOpen: (row: T) => boolean,
  ): Promise<T | null> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    ensureFinishedListener();
    let wake = () => {};
    const set = waiters.get(jobId) ?? new Set();
    waiters.set(jobId, set);
    try {
      for (;;) {
        const job = await read();
        if (!job || !isOpen(job) || ended) return job;
        const left = deadline - Date.now();
        if (left <= 0) return job;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, deps.pollMs));
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

  const waitFor = (jobId: string, timeoutMs: number) =>
    waitUntilDone(
      jobId,
      timeoutMs,
      () => getJob(sql, jobId),
      (job) => isOpenStatus(job.status),
    );

  async function listenForWork(onWork: () => void): Promise<() => Promise<void>> {
    workListeners.add(onWork);
    const listener = deps.notifications
      ? await sql.listen(JOBS_QUEUED_CHANNEL, (from) => {
          if (from !== origin) onWork();
        })
      : null;
    return async () => {
      workListeners.delete(onWork);
      await listener?.unlisten();
    };
  }

  function endWaits(): void {
    ended = true;
    for (const set of waiters.values()) for (const wake of set) wake();
  }

  async function close(): Promise<void> {
    const listener = finishedListener;
    finishedListener = null;
    if (listener) await (await listener.catch(() => null))?.unlisten();
  }

  return { waitFor, waitUntilDone, listenForWork, wake: { queued, finished, origin }, endWaits, close };
}
