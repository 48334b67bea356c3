// GET /v1/simulations/batch/{batch_id} (docs/decisions.md §6): each item's job, what its delivery
// charged and the freshness of its fixture.
import { databaseRead } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { loadFixtureHeaders } from '../fixtures/fixture-record.js';
import { type Freshness, freshnessOf } from '../fixtures/freshness.js';
import { getBatch } from '../jobs/job-store.js';
import type { Batch, Job } from '../jobs/types.js';
import { deliveriesOfJobs } from '../results/result-store.js';
import type { CallContext, SimulationDeps } from './types.js';

export interface BatchItemStatus {
  job: Job;
  creditsChargedMilli: number;
  /** Null when the fixture no longer exists. */
  freshness: Freshness | null;
  /** The kick-off of the item's fixture, when it exists. */
  kickoff: Date | null;
}

export interface BatchStatus {
  kind: 'status';
  batch: Batch;
  items: BatchItemStatus[];
}

export async function batchStatus(
  deps: SimulationDeps,
  ctx: CallContext,
  batchId: string,
): Promise<BatchStatus> {
  const owner = { orgId: ctx.caller.org.id, mode: ctx.caller.mode };
  const found = await databaseRead(() => getBatch(deps.sql, batchId, owner));
  if (!found) throw new ApiError('resource_missing', { message: `No batch ${batchId}.` });
  const now = deps.clock();
  const [fixtures, deliveries] = await Promise.all([
    loadFixtureHeaders(
      deps.sql,
      found.items.map((item) => item.fixtureId),
    ),
    databaseRead(() =>
      deliveriesOfJobs(
        deps.sql,
        found.items.map((item) => item.id),
      ),
    ),
  ]);
  const items = found.items.map((job) => {
    const fixture = fixtures.get(job.fixtureId);
    return {
      job,
      creditsChargedMilli: deliveries.get(job.id)?.creditsChargedMilli ?? 0,
      freshness: fixture ? freshnessOf(fixture, now) : null,
      kickoff: fixture ? fixture.kickoff : null,
    };
  });
  return { kind: 'status', batch: found.batch, items };
}
