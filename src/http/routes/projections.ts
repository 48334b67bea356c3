// POST /v1/projections, /v1/projections/quote, the projection result path and GET /v1/projections/{id}
// (docs/api.md §4.12). Thin: the loop guard (config.loopGuard) and idempotency as for simulations, then
// one use case of src/projections and its view.
import type { ErrorCode } from '../../errors.js';
import type { App, AppDeps } from '../app-types.js';
import { sendIdempotent } from '../idempotent.js';
import { idempotencyHeadersSchema } from '../schemas/common.js';
import {
  projectionBodySchema,
  projectionJobParamsSchema,
  projectionJobSchema,
  projectionParamsSchema,
  projectionQuoteSchema,
  projectionResultQuerySchema,
  projectionSchema,
} from '../schemas/projections.js';
import { projectionJobView, projectionQuoteView, projectionView } from '../views/projections.js';
import { ADMISSION_ERRORS, COMPETITION_ERRORS, callContext, pendingHeaders, sim } from './job-routing.js';

const tags = ['projections'];

const DELIVERY_ERRORS: ErrorCode[] = [
  'resource_missing',
  'reservation_expired',
  'projection_failed',
  'settlement_unknown',
];

export function registerProjectionRoutes(app: App, deps: AppDeps) {
  const service = deps.services.projections;

  app.post(
    '/v1/projections',
    {
      config: {
        ...sim,
        loopGuard: true,
        errors: [...COMPETITION_ERRORS, ...ADMISSION_ERRORS, ...DELIVERY_ERRORS],
      },
      schema: {
        operationId: 'runProjection',
        tags,
        summary: 'Project a season: title, places and relegation odds',
        description:
          'Price: seasons x remaining fixtures / 100,000 credits per live delivery. 200 with the season projection when it is ready within wait_seconds, else 202 with a job whose result_url delivers it. Optional Idempotency-Key header (1-255 characters).',
        body: projectionBodySchema,
        headers: idempotencyHeadersSchema,
        response: { 200: projectionSchema, 202: projectionJobSchema },
      },
    },
    (request, reply) =>
      sendIdempotent(request, reply, deps, {
        schemas: { 200: projectionSchema, 202: projectionJobSchema },
        run: async (record) => {
          const outcome = await service.submit(callContext(request, record), request.body);
          if (outcome.kind === 'pending') {
            const body = projectionJobView(outcome.job, outcome.retryAfterSeconds);
            return { status: 202, body, headers: pendingHeaders(body) };
          }
          return { status: 200, body: projectionView(outcome.delivered) };
        },
      }),
  );

  app.post(
    '/v1/projections/quote',
    {
      config: { ...sim, loopGuard: true, errors: COMPETITION_ERRORS },
      schema: {
        operationId: 'quoteProjection',
        tags,
        summary: 'Quote the exact price of a projection',
        description: 'Reserves nothing. Same body as POST /v1/projections.',
        body: projectionBodySchema,
        response: { 200: projectionQuoteSchema },
      },
    },
    async (request) => projectionQuoteView(await service.quote(request.auth!, request.body)),
  );
  registerProjectionReads(app, deps);
}

/** The result path and a delivered projection by id. */
function registerProjectionReads(app: App, deps: AppDeps) {
  const service = deps.services.projections;
  app.get(
    '/v1/projections/jobs/:job_id',
    {
      config: { ...sim, errors: DELIVERY_ERRORS },
      schema: {
        operationId: 'getProjectionJob',
        tags,
        summary: 'Result path: deliver and settle a projection job',
        description:
          'queued or running: 202; succeeded: settles the hold and answers 200 with the projection; delivered: the same delivery again with credits_charged 0; failed: 500 projection_failed; hold ended: 409 reservation_expired.',
        params: projectionJobParamsSchema,
        querystring: projectionResultQuerySchema,
        response: { 200: projectionSchema, 202: projectionJobSchema },
      },
    },
    async (request, reply) => {
      const outcome = await service.result(
        callContext(request, null),
        request.params.job_id,
        request.query.reservation_id,
      );
      if (outcome.kind === 'delivered') return reply.code(200).send(projectionView(outcome.delivered));
      const body = projectionJobView(outcome.job, outcome.retryAfterSeconds);
      return reply.code(202).headers(pendingHeaders(body)).send(body);
    },
  );

  app.get(
    '/v1/projections/:projection_id',
    {
      config: { ...sim, errors: ['resource_missing'] },
      schema: {
        operationId: 'getProjection',
        tags,
        summary: 'A delivered projection again, free',
        params: projectionParamsSchema,
        response: { 200: projectionSchema },
      },
    },
    async (request) =>
      projectionView(await service.retrieve(callContext(request, null), request.params.projection_id)),
  );
}
