// POST /v1/simulations/path and /v1/simulations/path/quote (docs/api.md §4.14): a match's
// win-probability path, submitted as a batch of in-play runs (src/simulations/path-request.ts) and read
// as a batch is; the quote prices it first.
import type { FastifyRequest } from 'fastify';
import { creditsNumber, formatCredits } from '../../billing/amounts.js';
import type { PathQuote } from '../../simulations/path-request.js';
import type { App, AppDeps } from '../app-types.js';
import { requestBodyHash, sendIdempotent } from '../idempotent.js';
import { idempotencyHeadersSchema } from '../schemas/common.js';
import { pathBodySchema, pathQuoteSchema } from '../schemas/simulation-path.js';
import { batchSchema } from '../schemas/simulations.js';
import { batchRejectionView, batchView } from '../views/simulations.js';
import { callContext, SELECTION_ERRORS, SUBMISSION_ERRORS, sim, tags } from './simulations.js';

function pathQuoteView(quote: PathQuote) {
  return {
    object: 'path_quote' as const,
    fixture_id: quote.fixtureId,
    steps: quote.steps,
    draws_per_step: quote.drawsPerStep,
    price: { draws: quote.steps * quote.drawsPerStep, credits: formatCredits(quote.priceMilli) },
    credits: creditsNumber(quote.priceMilli),
    credits_charged: 0 as const,
    rate_card: quote.rateCard,
    livemode: quote.livemode,
    data_version: quote.dataVersion,
  };
}

export function registerSimulationPathRoutes(app: App, deps: AppDeps) {
  const { usage, simulations } = deps.services;
  /** docs/decisions.md §3: the same request repeated too often within seconds is refused. */
  const loopGuard = (request: FastifyRequest) =>
    usage.checkLoopGuard({
      orgId: request.auth!.org.id,
      method: request.method,
      path: request.url,
      bodyHash: requestBodyHash(request.rawBody),
    });

  app.post(
    '/v1/simulations/path/quote',
    {
      config: { ...sim, errors: SELECTION_ERRORS },
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
    async (request) => {
      await loopGuard(request);
      return pathQuoteView(await simulations.quotePath(request.auth!, request.body));
    },
  );

  app.post(
    '/v1/simulations/path',
    {
      config: {
        ...sim,
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
    async (request, reply) => {
      await loopGuard(request);
      return sendIdempotent(request, reply, {
        store: deps.services.idempotency,
        docsUrl: deps.config.docsUrl,
        schemas: { 202: batchSchema },
        run: async (record) => {
          const context = { requestId: request.id, docsUrl: deps.config.docsUrl };
          const batch = await simulations
            .submitPath(callContext(request, record), request.body)
            .catch((error: unknown) => {
              throw batchRejectionView(error, context);
            });
          request.log = request.log.child({ batch_id: batch.batch.id });
          const body = batchView(batch, context);
          return {
            status: 202,
            body,
            headers: {
              location: `/v1/simulations/batch/${body.batch_id}`,
              'retry-after': String(simulations.batchRetryAfterSeconds(body.price.draws)),
            },
          };
        },
      });
    },
  );
}
