// GET /v1/projections/{projection_id} (docs/api.md §4.12): the caller's own delivered projection again,
// free: only the organisation and key mode that received it.
import { belongsTo } from '../accounts/caller.js';
import { databaseRead } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import type { CallContext } from '../jobs/call-context.js';
import type { DeliveredProjection } from './deliver.js';
import { getProjectionDelivery, getProjectionJob } from './projection-store.js';
import type { ProjectionDeps } from './types.js';

export async function retrieveProjection(
  deps: ProjectionDeps,
  ctx: CallContext,
  projectionId: string,
): Promise<DeliveredProjection> {
  const missing = () => new ApiError('resource_missing', { message: `No projection ${projectionId}.` });
  const delivery = await databaseRead(() => getProjectionDelivery(deps.sql, projectionId));
  if (!delivery || !belongsTo(delivery, ctx.caller)) throw missing();
  const job = await databaseRead(() => getProjectionJob(deps.sql, delivery.jobId));
  if (!job) throw missing();
  return { job, delivery, replayed: true };
}
