// GET /v1/simulations/jobs and GET /v1/simulations/batches (docs/api.md §4.10): the caller's jobs and
// batches (organisation and key mode), newest first, a page at a time after a cursor, optionally of one
// status.
import { ownerOf } from '../accounts/caller.js';
import { databaseRead } from '../db/transactions.js';
import type { CallContext } from '../jobs/call-context.js';
import type { Batch, Job, ListPage } from '../jobs/types.js';
import { type BatchSummary, summariseBatch } from './batch-status.js';
import type { SimulationDeps } from './types.js';

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

export function pageOf<T>(rows: T[], limit: number): Page<T> {
  return { data: rows.slice(0, limit), hasMore: rows.length > limit };
}

export async function listSimulationJobs(
  deps: Pick<SimulationDeps, 'queue'>,
  ctx: CallContext,
  page: ListPage,
): Promise<Page<Job>> {
  const owner = ownerOf(ctx.caller);
  return pageOf(await databaseRead(() => deps.queue.listJobs(owner, page)), page.limit);
}

export async function listSimulationBatches(
  deps: Pick<SimulationDeps, 'queue'>,
  ctx: CallContext,
  page: ListPage,
): Promise<Page<{ batch: Batch; summary: BatchSummary }>> {
  const owner = ownerOf(ctx.caller);
  const rows = pageOf(await databaseRead(() => deps.queue.listBatches(owner, page)), page.limit);
  const tallies = await databaseRead(() => deps.queue.tallyBatchJobs(rows.data.map((batch) => batch.id)));
  return {
    hasMore: rows.hasMore,
    data: rows.data.map((batch) => ({ batch, summary: summariseBatch(batch, tallies.get(batch.id)!) })),
  };
}
