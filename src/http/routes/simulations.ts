// POST /v1/simulations, /v1/simulations/quote, /v1/simulations/batch, the result path and the batch
// status (docs/api.md §4.3-4.5, §4.8; docs/decisions.md §6 and §7). Handlers apply idempotency (the
// loop guard runs before them: config.loopGuard), call the simulation use cases and send their views
// through the route's schemas.
import type { ErrorCode } from '../../errors.js';
import type { App, AppDeps } from '../app-types.js';
import { sendDocumentBody } from '../document-gzip.js';
import { sendIdempotent } from '../idempotent.js';
import {
  conditionalReadHeadersSchema,
  idempotencyHeadersSchema,
  notModifiedResponse,
} from '../schemas/common.js';
import {
  batchBodySchema,
  batchParamsSchema,
  batchSchema,
  batchSummarySchema,
  jobParamsSchema,
  jobSchema,
  quoteSchema,
  resultQuerySchema,
  simulationBodySchema,
  simulationReadSchema,
  simulationSchema,
} from '../schemas/simulations.js';
import { includedSections } from '../views/document-sections.js';
import {
  batchStatusView,
  batchSummaryView,
  jobOutcomeView,
  jobView,
  quoteView,
  simulationWire,
  withResultUrl,
} from '../views/simulations.js';
import {
  callContext,
  logAbout,
  pendingHeaders,
  SELECTION_ERRORS,
  SUBMISSION_ERRORS,
  sendBatchSubmission,
  sim,
  tags,
} from './job-routing.js';

/** What delivering and settling a finished job can answer (deliver.ts). */
const DELIVERY_ERRORS: ErrorCode[] = [
  'resource_missing',
  'reservation_expired',
  'simulation_failed',
  'simulation_cancelled',
  'payload_missing',
  'settlement_unknown',
];

export function registerSimulationRoutes(app: App, deps: AppDeps) {
  registerRun(app, deps);
  registerQuote(app, deps);
  registerBatch(app, deps);
  registerBatchStatus(app, deps);
  registerBatchSummary(app, deps);
  registerResultPath(app, deps);
}

function registerRun(app: App, deps: AppDeps) {
  app.post(
    '/v1/simulations',
    {
      config: {
        ...sim,
        loopGuard: true,
        errors: [...SELECTION_ERRORS, ...SUBMISSION_ERRORS, ...DELIVERY_ERRORS],
      },
      schema: {
        operationId: 'runSimulation',
        tags,
        summary: 'Simulate one match',
        description:
          'Price: draws / 1000 credits per live delivery, cached results included. 200 with the simulation when it is ready within wait_seconds, else 202 with a job whose result_url delivers it. Optional Idempotency-Key header (1-255 characters).',
        body: simulationBodySchema,
        headers: idempotencyHeadersSchema,
        response: { 200: simulationSchema, 202: jobSchema },
      },
    },
    (request, reply) =>
      sendIdempotent(request, reply, deps, {
        schemas: { 200: simulationSchema, 202: jobSchema },
        storedDocument: (resultId) => deps.services.simulations.storedDocument(resultId),
        run: async (record) => {
          const outcome = await deps.services.simulations
            .submit(callContext(request, record), request.body)
            .catch((error: unknown) => {
              throw withResultUrl(error);
            });
          const job = outcome.kind === 'delivered' ? outcome.delivered.job : outcome.job;
          logAbout(request, { job_id: job.id });
          if (outcome.kind === 'pending') {
            const body = jobView(outcome.job, outcome.retryAfterSeconds);
            return { status: 202, body, headers: pendingHeaders(body) };
          }
          // The document is stored once (results): an idempotency record names it instead of copying it.
          return {
            status: 200,
            wire: simulationWire(outcome.delivered),
            documentResultId: outcome.delivered.result.id,
          };
        },
      }),
  );
}

function registerQuote(app: App, deps: AppDeps) {
  app.post(
    '/v1/simulations/quote',
    {
      config: { ...sim, loopGuard: true, errors: SELECTION_ERRORS },
      schema: {
        operationId: 'quoteSimulation',
        tags,
        summary: 'Quote the exact price of a simulation',
        description:
          'Validates non-auto lineups against the current inputs; reserves nothing. Same body as POST /v1/simulations.',
        body: simulationBodySchema,
        response: { 200: quoteSchema },
      },
    },
    async (request) => quoteView(await deps.services.simulations.quote(request.auth!, request.body)),
  );
}

function registerBatch(app: App, deps: AppDeps) {
  app.post(
    '/v1/simulations/batch',
    {
      config: {
        ...sim,
        loopGuard: true,
        errors: [
          'batch_rejected',
          // An item's 4xx is its own error in the 202; its 429s and 503s answer the whole batch (submit-batch.ts).
          'lineup_cooldown',
          'fixture_lookup_incomplete',
          'refreshing',
          ...SUBMISSION_ERRORS,
        ],
      },
      schema: {
        operationId: 'createBatch',
        tags,
        summary: 'Reserve and queue up to 1,000 simulations',
        description:
          'Every item is validated before credits are reserved; an item that cannot run carries its error. Each delivered item costs draws / 1000 credits. Optional Idempotency-Key.',
        body: batchBodySchema,
        headers: idempotencyHeadersSchema,
        response: { 202: batchSchema },
      },
    },
    (request, reply) =>
      sendBatchSubmission(request, reply, deps, (context) =>
        deps.services.simulations.submitBatch(context, request.body),
      ),
  );
}

function registerBatchStatus(app: App, deps: AppDeps) {
  app.get(
    '/v1/simulations/batch/:batch_id',
    {
      config: { ...sim, errors: ['resource_missing'] },
      schema: {
        operationId: 'getBatch',
        tags,
        summary: 'Status of a batch and its items',
        params: batchParamsSchema,
        response: { 200: batchSchema },
      },
    },
    async (request) => {
      logAbout(request, { batch_id: request.params.batch_id });
      return batchStatusView(
        await deps.services.simulations.batchStatus(callContext(request, null), request.params.batch_id),
        { requestId: request.id, docsUrl: deps.config.docsUrl },
      );
    },
  );
}

/** A batch without its items (docs/api.md §4.8, "Summary"): what a poll of a large batch needs. */
function registerBatchSummary(app: App, deps: AppDeps) {
  app.get(
    '/v1/simulations/batch/:batch_id/summary',
    {
      config: { ...sim, errors: ['resource_missing'] },
      schema: {
        operationId: 'getBatchSummary',
        tags,
        summary: 'Status and counts of a batch, without its items',
        description:
          'The batch as GET /v1/simulations/batch/{batch_id} answers it, less items and validUntil: a few hundred bytes whatever the number of items, for polling a large batch until its counts say it is done.',
        params: batchParamsSchema,
        response: { 200: batchSummarySchema },
      },
    },
    async (request) => {
      logAbout(request, { batch_id: request.params.batch_id });
      return batchSummaryView(
        await deps.services.simulations.batchSummary(callContext(request, null), request.params.batch_id),
      );
    },
  );
}

function registerResultPath(app: App, deps: AppDeps) {
  app.get(
    '/v1/simulations/jobs/:job_id',
    {
      config: { ...sim, errors: DELIVERY_ERRORS },
      schema: {
        operationId: 'getSimulationJob',
        tags,
        summary: 'Result path: deliver and settle a job or batch item',
        description:
          'queued or running: 202 with progress; succeeded: settles the hold and answers 200 with the simulation; delivered: the same delivery again with credits_charged 0 (If-None-Match with its ETag: 304); failed: 500 simulation_failed; hold ended: 409 reservation_expired.',
        params: jobParamsSchema,
        querystring: resultQuerySchema,
        headers: conditionalReadHeadersSchema,
        response: { 200: simulationReadSchema, 202: jobSchema, 304: notModifiedResponse },
      },
    },
    async (request, reply) => {
      logAbout(request, { job_id: request.params.job_id });
      const outcome = await deps.services.simulations
        .result(callContext(request, null), request.params.job_id, request.query.reservation_id)
        .catch((error: unknown) => {
          throw withResultUrl(error);
        });
      const view = jobOutcomeView(outcome, includedSections(request.query.include));
      if (view.status === 200) return sendDocumentBody(request, reply.code(200), view.wire);
      return reply.code(202).headers(pendingHeaders(view.body)).send(view.body);
    },
  );
}
