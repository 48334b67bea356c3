// POST /v1/simulations/path and /v1/simulations/path/quote (docs/api.md §4.14): a match's
// win-probability path, submitted as a batch of in-play runs (src/simulations/path-request.ts) and read
// as a batch is; the quote prices it first.
import type { App, AppDeps } from '../app-types.js';
import { idempotencyHeadersSchema } from '../schemas/common.js';
import { pathBodySchema, pathQuoteSchema } from '../schemas/simulation-path.js';
import { batchSchema } from '../schemas/simulations.js';
import { pathQuoteView } from '../views/simulations.js';
import { SELECTION_ERRORS, SUBMISSION_ERRORS, sendBatchSubmission, sim, tags } from './job-routing.js';

export function registerSimulationPathRoutes(app: App, deps: AppDeps) {
  const { simulations } = deps.services;
  app.post(
    '/v1/simulations/path/quote',
    {
      config: { ...sim, loopGuard: true, errors: SELECTION_ERRORS },
      schema: {
        operationId: 'quoteSimulationPath',
        tags,
        summary: 'Price a win-probability path',
        description:
          'Checks the events against the fixture (the state after each) and prices the path: its minutes times the draws of each, / 1000 credits; reserves nothing.',
        body: pathBodySchema,
        response: { 200: pathQuoteSchema },
      },
    },
    async (request) => pathQuoteView(await simulations.quotePath(request.auth!, request.body)),
  );

  app.post(
    '/v1/simulations/path',
    {
      config: {
        ...sim,
        loopGuard: true,
        errors: ['batch_rejected', 'fixture_lookup_incomplete', ...SELECTION_ERRORS, ...SUBMISSION_ERRORS],
      },
      schema: {
        operationId: 'createSimulationPath',
        tags,
        summary: "Queue a match's win-probability path",
        description:
          'One in-play run a minute from kick-off to `through`, each from the state the events before that minute make, queued as a batch whose items are named by their minute (custom_id); read it as a batch (GET /v1/simulations/batch/{batch_id}/results?include=result,state). Each delivered minute costs draws / 1000 credits. Optional Idempotency-Key.',
        body: pathBodySchema,
        headers: idempotencyHeadersSchema,
        response: { 202: batchSchema },
      },
    },
    (request, reply) =>
      sendBatchSubmission(request, reply, deps, (context) => simulations.submitPath(context, request.body)),
  );
}
