// GET /v1/simulations/batch/{batch_id} (docs/api.md §2.6, §4.8; docs/decisions.md §6): the batch object with
// its status, counts and every item in submission order (rejected ones with their error), each job's
// delivery charge and the freshness of its fixture; and GET .../summary, the same batch without its items.
// The status and counts follow from the jobs.
import { ownerOf } from '../accounts/caller.js';
import type { Owner } from '../accounts/keys.js';
import { databaseRead } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { loadFreshnessFacts } from '../fixtures/fixture-record.js';
import { type Freshness, freshnessOf } from '../fixtures/freshness.js';
import type { CallContext } from '../jobs/call-context.js';
import type {
  Batch,
  BatchJobTally,
  BatchStatusItem,
  BatchStatusName,
  Job,
  JobStatus,
  RejectedBatchItem,
} from '../jobs/types.js';
import type { SimulationDeps } from './types.js';

export interface BatchItemStatus {
  /** The job, with what its delivery charged (0 before it is delivered). */
  job: BatchStatusItem;
  /** Null when the fixture no longer exists. */
  freshness: Freshness | null;
  /** The kick-off of the item's fixture, when it exists. */
  kickoff: Date | null;
}

/** The counts of docs/api.md §2.6: every item once, by its state. */
export type BatchCounts = Record<'total' | 'rejected' | JobStatus, number>;

export interface BatchSummary {
  status: BatchStatusName;
  counts: BatchCounts;
  /** When the last item finished, once none is queued or running; null before. */
  completedAt: Date | null;
}

export interface BatchStatus {
  kind: 'status';
  batch: Batch;
  summary: BatchSummary;
  items: BatchItemStatus[];
}

/** Tally of a batch whose jobs are all at hand. */
export function tallyOf(jobs: readonly Pick<Job, 'status' | 'finishedAt'>[]): BatchJobTally {
  const tally: BatchJobTally = { counts: {}, lastFinishedAt: null };
  for (const job of jobs) {
    tally.counts[job.status] = (tally.counts[job.status] ?? 0) + 1;
    if (job.finishedAt && (!tally.lastFinishedAt || job.finishedAt > tally.lastFinishedAt)) {
      tally.lastFinishedAt = job.finishedAt;
    }
  }
  return tally;
}

/** Status, counts and completion of a batch (docs/decisions.md §6). */
export function summariseBatch(batch: Batch, tally: BatchJobTally): BatchSummary {
  const count = (status: JobStatus) => tally.counts[status] ?? 0;
  const rejected = batch.rejectedItems.length;
  const counts: BatchCounts = {
    total: batch.itemCount + rejected,
    rejected,
    queued: count('queued'),
    running: count('running'),
    succeeded: count('succeeded'),
    failed: count('failed'),
    delivered: count('delivered'),
    expired: count('expired'),
    cancelled: count('cancelled'),
  };
  const open = counts.queued + counts.running > 0;
  const cancelled = batch.cancelRequestedAt !== null;
  const status: BatchStatusName = open
    ? cancelled
      ? 'cancelling'
      : 'in_progress'
    : cancelled
      ? 'cancelled'
      : 'completed';
  const completedAt = open ? null : (tally.lastFinishedAt ?? batch.cancelRequestedAt ?? batch.createdAt);
  return { status, counts, completedAt };
}

/** A batch's items in submission order: its jobs and its rejected items. */
export function inSubmissionOrder<T extends { job: Pick<Job, 'batchPosition'> }>(
  items: readonly T[],
  rejected: readonly RejectedBatchItem[],
): Array<T | RejectedBatchItem> {
  const all: Array<{ position: number; item: T | RejectedBatchItem }> = [
    ...items.map((item) => ({ position: item.job.batchPosition ?? 0, item })),
    ...rejected.map((item) => ({ position: item.position, item })),
  ];
  return all.sort((a, b) => a.position - b.position).map((entry) => entry.item);
}

export async function batchStatus(
  deps: SimulationDeps,
  ctx: CallContext,
  batchId: string,
): Promise<BatchStatus> {
  const found = await readCallersBatch(ctx, batchId, (owner) => deps.queue.getBatch(batchId, owner));
  const now = deps.clock();
  const fixtureIds = found.items.map((item) => item.fixtureId);
  // From the process's fixture read cache (its facts live two seconds, and a feed load empties it): a
  // status polled every 100 ms read the same 1,000 fixtures each time.
  const fixtures = deps.fixtures
    ? await deps.fixtures.freshnessFacts(fixtureIds)
    : await loadFreshnessFacts(deps.sql, fixtureIds);
  const items = found.items.map((job) => {
    const fixture = fixtures.get(job.fixtureId);
    return {
      job,
      freshness: fixture ? freshnessOf(fixture, now) : null,
      kickoff: fixture ? fixture.kickoff : null,
    };
  });
  const summary = summariseBatch(found.batch, tallyOf(found.items));
  return { kind: 'status', batch: found.batch, summary, items };
}

/**
 * The batch without its items (docs/api.md §4.8, "Summary"): its status and counts from one tally of its
 * jobs, whatever their number. What a poll needs: a status of 1,000 items is some 500 KB and costs the
 * service some 15 ms of CPU (docs/decisions.md §6, "What a batch job costs the host"), this a few hundred
 * bytes and two index reads.
 */
export async function batchSummary(
  deps: Pick<SimulationDeps, 'queue'>,
  ctx: CallContext,
  batchId: string,
): Promise<{ batch: Batch; summary: BatchSummary }> {
  const batch = await readCallersBatch(ctx, batchId, (owner) => deps.queue.getOwnedBatch(batchId, owner));
  const tallies = await databaseRead(() => deps.queue.tallyBatchJobs([batch.id]));
  return { batch, summary: summariseBatch(batch, tallies.get(batch.id)!) };
}

/**
 * What `read` finds of the caller's batch, read as the caller's organisation and key mode; an unknown id
 * and anyone else's batch are both resource_missing.
 */
export async function readCallersBatch<T>(
  ctx: CallContext,
  batchId: string,
  read: (owner: Owner) => Promise<T | null>,
): Promise<T> {
  const owner = ownerOf(ctx.caller);
  const found = await databaseRead(() => read(owner));
  if (!found) throw new ApiError('resource_missing', { message: `No batch ${batchId}.` });
  return found;
}
