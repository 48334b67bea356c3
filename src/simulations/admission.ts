// What single runs and batches share on the way in: the engine and queue checks before anything is
// reserved, and the job rows they write beside their holds.
import { ownerOf } from '../accounts/caller.js';
import { priceOfDrawsMilli } from '../billing/amounts.js';
import { databaseRead } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import type { CallContext } from '../jobs/call-context.js';
import type { NewJob } from '../jobs/types.js';
import type { PreparedRun } from './prepare-run.js';
import type { SimulationDeps } from './types.js';

/** engine_cold_start / engine_unavailable from the engine, engine_overloaded past the queue bound. */
export async function assertQueueHasRoom(deps: SimulationDeps): Promise<void> {
  deps.engine.assertAvailable();
  const queued = await databaseRead(() => deps.queue.countQueued());
  if (queued >= deps.queueBound) {
    throw new ApiError('engine_overloaded', {
      message: `The simulation queue holds ${queued} jobs; try again shortly.`,
      retryAfterSeconds: 5,
    });
  }
}

export function newJobFor(ctx: CallContext, run: PreparedRun, draws: number, extra: Partial<NewJob>): NewJob {
  return {
    ...ownerOf(ctx.caller),
    reservationId: newId('res'),
    fixtureId: run.fixture.fixtureId,
    dataVersion: run.fixture.dataVersion,
    draws,
    seed: run.seed,
    inputs: run.payload,
    cacheKey: run.cacheKey,
    scope: run.resolved.scope,
    priceMilli: ctx.caller.livemode ? priceOfDrawsMilli(draws) : 0,
    requestId: ctx.requestId,
    idempotencyKey: ctx.idempotencyKey,
    ...extra,
  };
}
