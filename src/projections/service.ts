// The projection use cases bound to their dependencies, as the HTTP layer calls them.
import type { Caller } from '../accounts/caller.js';
import type { CallContext } from '../jobs/call-context.js';
import { deliverProjectionResult } from './deliver.js';
import { quoteProjection } from './quote.js';
import { retrieveProjection } from './retrieve.js';
import { submitProjection } from './submit.js';
import type { ProjectionDeps, ProjectionRequest } from './types.js';

export function makeProjectionService(deps: ProjectionDeps) {
  return {
    quote: (caller: Caller, request: ProjectionRequest) => quoteProjection(deps, caller, request),
    submit: (ctx: CallContext, request: ProjectionRequest) => submitProjection(deps, ctx, request),
    result: (ctx: CallContext, jobId: string, reservationId: string) =>
      deliverProjectionResult(deps, ctx, jobId, reservationId),
    retrieve: (ctx: CallContext, projectionId: string) => retrieveProjection(deps, ctx, projectionId),
  };
}

export type ProjectionService = ReturnType<typeof makeProjectionService>;
