// The simulation use cases bound to their dependencies, as the HTTP layer calls them.
import type { Caller } from '../accounts/caller.js';
import { databaseRead } from '../db/transactions.js';
import type { CallContext } from '../jobs/call-context.js';
import type { ListPage } from '../jobs/types.js';
import { isOpenStatus, type Job } from '../jobs/types.js';
import { getResult } from '../results/result-store.js';
import { openBatchResults } from './batch-results.js';
import { batchStatus, batchSummary } from './batch-status.js';
import { cancelBatch } from './cancel-batch.js';
import { deliverResult, pendingOutcome } from './deliver.js';
import { listSimulationBatches, listSimulationJobs } from './listings.js';
import { type PathRequest, quotePath, submitPath } from './path-request.js';
import { quote } from './quote.js';
import { retrieveSimulation } from './retrieve.js';
import { retryAfterSeconds } from './retry-advice.js';
import { submitSimulation } from './submit.js';
import { submitBatch } from './submit-batch.js';
import type { BatchRequest, SimulationDeps, SimulationRequest } from './types.js';

export function makeSimulationService(deps: SimulationDeps) {
  return {
    quote: (caller: Caller, request: SimulationRequest) => quote(deps, caller, request),
    submit: (ctx: CallContext, request: SimulationRequest) => submitSimulation(deps, ctx, request),
    submitBatch: (ctx: CallContext, request: BatchRequest) => submitBatch(deps, ctx, request),
    quotePath: (caller: Caller, request: PathRequest) => quotePath(deps, caller, request),
    submitPath: (ctx: CallContext, request: PathRequest) => submitPath(deps, ctx, request),
    result: (ctx: CallContext, jobId: string, reservationId: string) =>
      deliverResult(deps, ctx, jobId, reservationId),
    batchStatus: (ctx: CallContext, batchId: string) => batchStatus(deps, ctx, batchId),
    batchSummary: (ctx: CallContext, batchId: string) => batchSummary(deps, ctx, batchId),
    /** A batch's 202 Retry-After: the time one item of its draws takes behind the queue (docs/api.md §4.5). */
    batchRetryAfterSeconds: (draws: number) => retryAfterSeconds(deps.engine, draws, true),
    /** A job's retry advice while it is open (deliver.ts pendingOutcome); 0 once it finished. */
    retryAfterSeconds: (job: Job) => {
      const outcome = pendingOutcome(deps, job);
      return isOpenStatus(job.status) && outcome.kind === 'pending' ? outcome.retryAfterSeconds : 0;
    },
    batchResults: (ctx: CallContext, batchId: string) => openBatchResults(deps, ctx, batchId),
    cancelBatch: (ctx: CallContext, batchId: string) => cancelBatch(deps, ctx, batchId),
    retrieve: (ctx: CallContext, simulationId: string) => retrieveSimulation(deps, ctx, simulationId),
    listJobs: (ctx: CallContext, page: ListPage) => listSimulationJobs(deps, ctx, page),
    listBatches: (ctx: CallContext, page: ListPage) => listSimulationBatches(deps, ctx, page),
    /** A stored result's document (an idempotent replay puts it back into the body it recorded). */
    storedDocument: async (resultId: number) => {
      const result = await databaseRead(() => getResult(deps.sql, resultId, deps.knownResults));
      if (!result) throw new Error(`result ${resultId} is gone`);
      return result.document;
    },
  };
}

export type SimulationService = ReturnType<typeof makeSimulationService>;
