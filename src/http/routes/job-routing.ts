// What the routes that submit, quote and deliver jobs share (simulations, their batches and paths, and
// projections): the route config and error lists of the simulations scope (the competition's list too,
// which the operator's projection shares), the call context a use case gets, the headers of a 202, a batch
// submission's answer, and the log fields that name the job or batch. One neutral module, so that no route
// file imports another's helpers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../errors.js';
import type { IdempotencyRecord } from '../../idempotency/store.js';
import type { CallContext } from '../../jobs/call-context.js';
import type { BatchStatus } from '../../simulations/batch-status.js';
import type { BatchSubmission } from '../../simulations/submit-batch.js';
import type { AppDeps } from '../app-types.js';
import { sendIdempotent } from '../idempotent.js';
import { batchSchema } from '../schemas/simulations.js';
import { batchRejectionView, batchView } from '../views/simulations.js';

/** The config of every route under the simulations.run scope (simulations, batches, paths, projections). */
export const sim = {
  access: 'api' as const,
  scope: 'simulations.run' as const,
  rateGroup: 'simulations' as const,
};
export const tags = ['simulations'];

/** What choosing a fixture and its lineups can answer (select-fixture.ts, fixture-access.ts, lineups.ts). */
export const SELECTION_ERRORS: ErrorCode[] = [
  'fixture_not_found',
  'fixture_ambiguous',
  'fixture_lookup_incomplete',
  'fixture_not_covered',
  'refreshing',
  'lineup_invalid',
  'player_not_in_squad',
  'market_unreachable',
  'lineups_not_announced',
  'lineup_cooldown',
];
/** What reading a competition's season can answer (src/fixtures/competition-season.ts). */
export const COMPETITION_ERRORS: ErrorCode[] = [
  'competition_not_found',
  'competition_not_covered',
  'competition_inputs_missing',
  'refreshing',
];
/** What reserving credits and admitting work can answer (billing, limits, admission). */
export const ADMISSION_ERRORS: ErrorCode[] = [
  'balance_too_low',
  'max_credits_exceeded',
  'idempotency_conflict',
  'concurrency_limited',
];
/** A simulation's admission, and the engine's: what the GPU engine's state can answer before a job queues. */
export const SUBMISSION_ERRORS: ErrorCode[] = [
  ...ADMISSION_ERRORS,
  'engine_cold_start',
  'engine_unavailable',
  'engine_overloaded',
];

export function callContext(request: FastifyRequest, record: IdempotencyRecord | null): CallContext {
  return {
    caller: request.auth!,
    requestId: request.id,
    idempotencyKey: record?.key ?? null,
    idempotency: record,
  };
}

/** docs/api.md §4.3: every 202 names where to look next and when. */
export function pendingHeaders(job: { result_url: string; retry_after_seconds: number }) {
  return { location: job.result_url, 'retry-after': String(job.retry_after_seconds) };
}

/**
 * A batch submission (POST /v1/simulations/batch, and a path, which queues a batch): idempotency, a
 * refusal as batch_rejected with its items' errors, else 202 with the batch, its status path and when
 * its work may be done (docs/api.md §4.8).
 */
export function sendBatchSubmission(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: AppDeps,
  submit: (context: CallContext) => Promise<BatchSubmission | BatchStatus>,
) {
  return sendIdempotent(request, reply, deps, {
    schemas: { 202: batchSchema },
    run: async (record) => {
      const context = { requestId: request.id, docsUrl: deps.config.docsUrl };
      const batch = await submit(callContext(request, record)).catch((error: unknown) => {
        throw batchRejectionView(error, context);
      });
      logAbout(request, { batch_id: batch.batch.id });
      const body = batchView(batch, context);
      const retryAfter = deps.services.simulations.batchRetryAfterSeconds(body.price.draws);
      return {
        status: 202,
        body,
        headers: { location: `/v1/simulations/batch/${body.batch_id}`, 'retry-after': String(retryAfter) },
      };
    },
  });
}

/** The job or batch a request is about goes on its log lines, the closing `request` line included. */
export function logAbout(request: FastifyRequest, ids: { job_id: string } | { batch_id: string }): void {
  request.log = request.log.child(ids);
}
