// POST /v1/simulations/batch/{batch_id}/cancel (docs/api.md §4.10, docs/decisions.md §6): the batch's
// items no engine has started (queued, or claimed by a worker and not yet started) become `cancelled` and
// their holds are released in the same transaction, so nothing is charged for them; started items finish
// and can still be delivered. Asking again changes nothing.
import { ownerOf } from '../accounts/caller.js';
import { inTransaction } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import type { CallContext } from '../jobs/call-context.js';
import { gpuSecondsToMs, settleGpuUsage } from '../limits/daily-usage.js';
import { type BatchStatus, batchStatus } from './batch-status.js';
import type { SimulationDeps } from './types.js';

/** Why the ledger released a cancelled item's hold. */
const CANCELLED_RELEASE_REASON = 'cancelled';

export async function cancelBatch(
  deps: SimulationDeps,
  ctx: CallContext,
  batchId: string,
): Promise<BatchStatus> {
  const owner = ownerOf(ctx.caller);
  await inTransaction(deps.sql, {}, async (tx) => {
    const outcome = await deps.queue.cancelUnstarted(tx, batchId, owner);
    if (!outcome) throw new ApiError('resource_missing', { message: `No batch ${batchId}.` });
    for (const job of outcome.cancelled) {
      // The GPU-seconds reserved for the item go back to the day's budget; it used none.
      await settleGpuUsage(tx, job.orgId, job.usageDay, gpuSecondsToMs(job.gpuSecondsReserved), 0);
      if (job.mode === 'live') {
        await deps.ledger.release(job.reservationId, CANCELLED_RELEASE_REASON, {
          tx,
          requestId: ctx.requestId,
        });
      }
    }
  });
  return batchStatus(deps, ctx, batchId);
}
