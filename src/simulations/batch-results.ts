// GET /v1/simulations/batch/{batch_id}/results (docs/api.md §4.10, docs/decisions.md §6): every item of
// a batch in submission order, each finished one delivered exactly as its result path delivers it
// (deliver.ts: settled once, given again free, reservation_expired once its hold ended). The items are
// read and settled a page at a time, one transaction per page with items to settle, so a 1,000-item batch
// takes at most ten transactions and never more than a page of documents sits in memory.
import { databaseRead, inTransaction } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import type { CallContext, DeliveryRequest } from '../jobs/call-context.js';
import type { Batch, Job, JobStatus, RejectedBatchItem } from '../jobs/types.js';
import { readCallersBatch } from './batch-status.js';
import { announceDeliveries, type DeliveredSimulation, type DeliveryDeps } from './deliver.js';
import { deliverLockedPage, pageAsRead } from './deliver-page.js';

/** Items settled per transaction. */
export const RESULTS_PAGE_SIZE = 100;

/** One line of the stream: a rejected item, a job still open, a delivery, or a job that ended without one. */
export type BatchResultItem =
  | { kind: 'rejected'; item: RejectedBatchItem }
  | { kind: 'pending'; job: Job }
  | { kind: 'delivered'; delivered: DeliveredSimulation }
  | { kind: 'ended'; job: Job; error: ApiError };

export interface BatchResults {
  batch: Batch;
  /**
   * The batch's jobs counted by status when every one has ended as a read leaves it (delivered, failed,
   * expired, cancelled): then the stream says the same each time it is read, and these counts are what
   * its lines follow from. Null while a job is queued, running, or succeeded and not yet delivered.
   */
  settled: Partial<Record<JobStatus, number>> | null;
  /** The items a page at a time; each page's deliveries are committed before it is given. */
  pages: AsyncGenerator<BatchResultItem[]>;
}

/** Job states a read of the stream can still change: it waits on the first two, and delivers the third. */
const UNSETTLED: readonly JobStatus[] = ['queued', 'running', 'succeeded'];

/** The ownership check happens here, before anything is sent; the pages follow as they are read. */
export async function openBatchResults(
  deps: DeliveryDeps,
  ctx: CallContext,
  batchId: string,
): Promise<BatchResults> {
  const batch = await readCallersBatch(ctx, batchId, (owner) => deps.queue.getOwnedBatch(batchId, owner));
  const tally = await databaseRead(() => deps.queue.tallyBatchJobs([batch.id]));
  const counts = tally.get(batch.id)?.counts ?? {};
  const settled = UNSETTLED.some((status) => (counts[status] ?? 0) > 0) ? null : counts;
  const request = { requestId: ctx.requestId, idempotencyKey: null };
  return { batch, settled, pages: resultPages(deps, request, batch) };
}

async function* resultPages(
  deps: DeliveryDeps,
  request: DeliveryRequest,
  batch: Batch,
): AsyncGenerator<BatchResultItem[]> {
  const readPage = (from: number) => {
    const read = databaseRead(() => deps.queue.batchJobsFrom(batch.id, from, RESULTS_PAGE_SIZE));
    read.catch(() => {}); // awaited below; a stream the client left may never await a page read ahead
    return read;
  };
  let from = 0;
  let next = readPage(from);
  for (;;) {
    const jobs = await next;
    const last = jobs.length === RESULTS_PAGE_SIZE ? jobs[jobs.length - 1]!.batchPosition! : Infinity;
    // The next page's jobs are read while this one settles: they are other jobs, and each page decides
    // from the rows its own transaction locks (deliverPage), as it did when the read came after.
    if (last !== Infinity) next = readPage(last + 1);
    const delivered = await deliverPage(deps, request, jobs);
    announceDeliveries(
      deps,
      delivered.flatMap((item) => (item.kind === 'delivered' ? [item.delivered] : [])),
    );
    const rejected = batch.rejectedItems
      .filter((item) => item.position >= from && item.position <= last)
      .map((item): BatchResultItem => ({ kind: 'rejected', item }));
    yield inPositionOrder([...delivered, ...rejected]);
    if (last === Infinity) return;
    from = last + 1;
  }
}

function positionOf(item: BatchResultItem): number {
  if (item.kind === 'rejected') return item.item.position;
  const job = item.kind === 'delivered' ? item.delivered.job : item.job;
  return job.batchPosition ?? 0;
}

function inPositionOrder(items: BatchResultItem[]): BatchResultItem[] {
  return items.sort((a, b) => positionOf(a) - positionOf(b));
}

/**
 * A page's jobs answered as the result path answers them (deliver.ts `deliverResult`): only the jobs read
 * as succeeded, whose delivery settles their holds, are delivered in a transaction, locked together in id
 * order before anything else (queue.lockManyForDelivery, src/jobs/delivery-locks.ts), then settled and
 * delivered set-based (deliver-page.ts), taking the account, holds and fixture summaries in the order
 * every delivery does. The others are answered from the page as read: a stream read again once its items
 * were delivered takes no transaction and locks no row.
 */
async function deliverPage(
  deps: DeliveryDeps,
  request: DeliveryRequest,
  jobs: readonly Job[],
): Promise<BatchResultItem[]> {
  const succeeded = jobs.filter((job) => job.status === 'succeeded');
  const asRead = await databaseRead(() =>
    pageAsRead(
      deps,
      deps.sql,
      jobs.filter((job) => job.status !== 'succeeded'),
    ),
  );
  const delivered =
    succeeded.length === 0
      ? []
      : await inTransaction(deps.sql, { onConnectionLost: 'settlement_unknown' }, async (tx) =>
          deliverLockedPage(deps, request, tx, await deps.queue.lockManyForDelivery(tx, succeeded)),
        );
  return [...asRead, ...delivered].map((outcome): BatchResultItem => {
    if (outcome.status === 'delivered') return { kind: 'delivered', delivered: outcome.delivered };
    if (outcome.status === 'pending') return { kind: 'pending', job: outcome.job };
    if (outcome.status === 'expired')
      return { kind: 'ended', job: outcome.job, error: expiredError(outcome.job) };
    return { kind: 'ended', job: outcome.job, error: outcome.error };
  });
}

function expiredError(job: Job): ApiError {
  return new ApiError('reservation_expired', {
    message: `The credit hold ${job.reservationId} ended without delivery.`,
    recovery: { job_id: job.id, reservation_id: job.reservationId },
  });
}
