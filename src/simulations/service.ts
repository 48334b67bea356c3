// The simulation use cases bound to their dependencies, as the HTTP layer calls them.
import type { Caller } from '../accounts/caller.js';
import { batchStatus } from './batch-status.js';
import { deliverResult } from './deliver.js';
import { quote } from './quote.js';
import { submitSimulation } from './submit.js';
import { submitBatch } from './submit-batch.js';
import type { BatchRequest, CallContext, SimulationDeps, SimulationRequest } from './types.js';

export function makeSimulationService(deps: SimulationDeps) {
  return {
    quote: (caller: Caller, request: SimulationRequest) => quote(deps, caller, request),
    submit: (ctx: CallContext, request: SimulationRequest) => submitSimulation(deps, ctx, request),
    submitBatch: (ctx: CallContext, request: BatchRequest) => submitBatch(deps, ctx, request),
    result: (ctx: CallContext, jobId: string, reservationId: string) =>
      deliverResult(deps, ctx, jobId, reservationId),
    batchStatus: (ctx: CallContext, batchId: string) => batchStatus(deps, ctx, batchId),
  };
}

export type SimulationService = ReturnType<typeof makeSimulationService>;
