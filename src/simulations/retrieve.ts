// GET /v1/simulations/{simulation_id} (docs/api.md §4.10): an organisation reads one of its deliveries
// again by its `sim_…` id. It is the same delivery given again, so nothing is charged (credits_charged 0).
import { ownerOf } from '../accounts/caller.js';
import { databaseRead } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import type { CallContext } from '../jobs/call-context.js';
import { findOwnedDelivery, getResult } from '../results/result-store.js';
import type { DeliveredSimulation } from './deliver.js';
import type { SimulationDeps } from './types.js';

export async function retrieveSimulation(
  deps: Pick<SimulationDeps, 'sql' | 'queue' | 'knownResults'>,
  ctx: CallContext,
  simulationId: string,
): Promise<DeliveredSimulation> {
  const owner = ownerOf(ctx.caller);
  const missing = () => new ApiError('resource_missing', { message: `No simulation ${simulationId}.` });
  return databaseRead(async () => {
    const delivery = await findOwnedDelivery(deps.sql, simulationId, owner);
    if (!delivery?.jobId) throw missing();
    const [job, result] = await Promise.all([
      deps.queue.get(delivery.jobId),
      getResult(deps.sql, delivery.resultId, deps.knownResults),
    ]);
    if (!job || !result) throw missing();
    return { job, result, delivery, replayed: true };
  });
}
