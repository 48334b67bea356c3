// In-process news of projection jobs, sent once their transaction commits (src/db/commit-hooks.ts): a
// job queued wakes this process's projection worker; a job finished wakes the requests waiting for it.
// Other processes poll (projection-worker.ts, deliver.ts `waitForProjection`).
import { EventEmitter } from 'node:events';
import { afterCommit } from '../db/commit-hooks.js';
import type { TransactionSql } from '../db/connection.js';

const news = new EventEmitter();
news.setMaxListeners(0);

export function announceProjectionQueued(tx: TransactionSql): void {
  afterCommit(tx, () => news.emit('queued'));
}

export function announceProjectionFinished(tx: TransactionSql, jobId: string): void {
  afterCommit(tx, () => news.emit('finished', jobId));
}

/** Resolves at the next news of `kind` (for `finished`, of that job) or after `ms`, whichever is first. */
export function nextProjectionNews(kind: 'queued' | { finished: string }, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      news.off('queued', onQueued);
      news.off('finished', onFinished);
      resolve();
    };
    const onQueued = () => done();
    const onFinished = (jobId: string) => {
      if (typeof kind === 'object' && kind.finished === jobId) done();
    };
    const timer = setTimeout(done, ms);
    if (kind === 'queued') news.on('queued', onQueued);
    else news.on('finished', onFinished);
  });
}
