// POST /v1/simulations, /v1/simulations/quote, /v1/simulations/batch, the result path and the batch
// status (spec 4.3-4.5, 4.8; decisions 6 and 7). Handlers validate the shape, apply the loop guard and
// idempotency, and call the simulation service; the responses they send are the exact bytes an
// Idempotency-Key replay sends again.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { simulationDocumentSchema } from '../../engine/document.js';
import { ApiError, errorBody } from '../../errors.js';
import { lineupsRequestSchema } from '../../fixtures/lineups.js';
import type { UsageLimits } from '../../limits/usage.js';
import { DEFAULT_DRAWS, DEFAULT_WAIT_SECONDS, type SimulationService } from '../../sim/simulations.js';
import type { App, AppDeps } from '../app.js';
import {
  type IdempotencyRecord,
  type IdempotencyStore,
  parseIdempotencyKey,
  requestBodyHash,
} from '../idempotency.js';

const MAX_DRAWS = 1_000_000;
const MIN_DRAWS = 100;
export const MAX_BATCH_ITEMS = 1000;

const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine(
    (value) =>
      !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) &&
      new Date(`${value}T00:00:00Z`).toISOString().startsWith(value),
    'must be a real calendar date',
  )
  .describe('UTC day of the match, YYYY-MM-DD; when omitted the next match is selected.');

const fixtureId = z
  .union([z.number().int().min(1), z.string().regex(/^\s*\d{1,15}\s*$/, 'must be an integer id')])
  .describe('Fixture id (integer, or a string of digits); use instead of home, away and date.');
const teamName = z.string().min(1).max(200);
const draws = z
  .number()
  .int()
  .min(MIN_DRAWS)
  .max(MAX_DRAWS)
  .describe(
    `Simulated matches, ${MIN_DRAWS} to ${MAX_DRAWS}; default ${DEFAULT_DRAWS}. Price: draws / 1000 credits.`,
  );

const selectorFields = {
  fixture_id: fixtureId.optional(),
  home: teamName
    .optional()
    .describe('Home team name (full or short), with away, when fixture_id is omitted.'),
  away: teamName.optional().describe('Away team name, with home, when fixture_id is omitted.'),
  date: isoDate.optional(),
  lineups: lineupsRequestSchema.optional(),
};

export const simulationBodySchema = z.strictObject({
  ...selectorFields,
  draws: draws.optional(),
  wait_seconds: z
    .number()
    .int()
    .min(0)
    .max(25)
    .optional()
    .describe(
      `Seconds to wait for the result before a job is returned, 0 to 25; default ${DEFAULT_WAIT_SECONDS}.`,
    ),
});

export const batchBodySchema = z.strictObject({
  fixtures: z
    .array(z.strictObject(selectorFields))
    .min(1)
    .max(MAX_BATCH_ITEMS)
    .describe('1 to 1,000 distinct match selectors.'),
  draws: draws.optional(),
});

const priceSchema = z.object({
  draws: z.number().int(),
  credits: z.string().describe('Exact price, three decimals.'),
});
const lineupInputsSchema = z.object({
  lineups: z.record(z.string(), z.unknown()),
  squad_version: z.string(),
});

const jobSchema = z
  .object({
    object: z.literal('simulation_job'),
    job_id: z.string(),
    fixture_id: z.number().int(),
    reservation_id: z.string(),
    result_url: z.string(),
    status: z.enum(['queued', 'running', 'succeeded', 'delivered', 'failed', 'expired']),
    price: priceSchema,
    credits_reserved: z.number(),
    retry_after_seconds: z.number(),
    progress: z.object({ draws_done: z.number().int(), draws_total: z.number().int() }),
  })
  .describe('A simulation job (202): follow result_url to deliver and settle it.');

const simulationSchema = z
  .object({
    object: z.literal('simulation'),
    id: z.string(),
    fixture_id: z.number().int(),
    state: z.string(),
    data_version: z.string(),
    created_at: z.string(),
    livemode: z.boolean(),
    price: priceSchema,
    credits_charged: z.number(),
    scope: z.enum(['shared', 'private']),
    inputs: lineupInputsSchema,
    warnings: z.array(z.string()),
    receipt: z.object({
      request_id: z.string(),
      idempotency_key: z.string().nullable(),
      price: priceSchema,
      credits_charged: z.number(),
      credits_remaining: z.number().nullable(),
      inputs_hash: z.string().nullable(),
    }),
    simulation: simulationDocumentSchema,
  })
  .describe('A delivered simulation (spec 2.3; the document of decisions 11).');

const quoteSchema = z
  .object({
    object: z.literal('simulation_quote'),
    price: priceSchema,
    credits: z.number(),
    credits_charged: z.literal(0),
    rate_card: z.string(),
    livemode: z.boolean(),
    scope: z.enum(['shared', 'private']),
    inputs: lineupInputsSchema,
    warnings: z.array(z.string()),
  })
  .describe('An exact price; nothing is reserved.');

const batchSchema = z
  .object({
    object: z.literal('simulation_batch'),
    batch_id: z.string(),
    items: z.array(
      z.object({
        fixture: z.number().int().nullable(),
        job_id: z.string().optional(),
        status: z.string(),
        credits_reserved: z.number(),
        reservation_id: z.string().optional(),
        result_url: z.string().optional(),
        credits_charged: z.number().optional(),
        error: z.object({ code: z.string(), message: z.string() }).optional(),
      }),
    ),
    validUntil: z.number().nullable(),
    credits_reserved_total: z.number(),
  })
  .describe('A batch: per-item jobs, holds and errors.');

const sim = { access: 'api' as const, scope: 'simulations.run' as const, rateGroup: 'simulations' as const };
const tags = ['simulations'];

export interface SimulationRouteDeps {
  service: SimulationService;
  usage: UsageLimits;
  idempotency: IdempotencyStore;
}

function sendJson(reply: FastifyReply, status: number, body: string, replayed = false) {
  if (replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

export function registerSimulationRoutes(app: App, deps: AppDeps, routes: SimulationRouteDeps) {
  const { service, usage, idempotency } = routes;
  const docsUrl = deps.config.docsUrl;

  /** decisions 7: replay byte for byte, refuse conflicts, let a retry resume what the first attempt made. */
  async function idempotent(
    request: FastifyRequest,
    reply: FastifyReply,
    run: (record: IdempotencyRecord | null) => Promise<{ status: number; body: unknown }>,
  ) {
    const auth = request.auth!;
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    const path = request.routeOptions.url ?? request.url;
    if (!key) {
      const result = await run(null);
      return sendJson(reply, result.status, JSON.stringify(result.body));
    }
    const start = await idempotency.begin({
      orgId: auth.org.id,
      mode: auth.mode,
      method: request.method,
      path,
      key,
      bodyHash: requestBodyHash(request.rawBody),
    });
    if (start.kind === 'replay') return sendJson(reply, start.response.status, start.response.body, true);
    const record = start.record;
    let response: { status: number; body: string };
    try {
      const result = await run(record);
      response = { status: result.status, body: JSON.stringify(result.body) };
    } catch (error) {
      if (!(error instanceof ApiError)) {
        await idempotency.release(record).catch(() => {});
        throw error;
      }
      const body = JSON.stringify(errorBody(error, { requestId: request.id, docsUrl }));
      await idempotency.complete(record, { status: error.status, headers: {}, body }).catch(() => {});
      throw error;
    }
    await idempotency.complete(record, { status: response.status, headers: {}, body: response.body });
    return sendJson(reply, response.status, response.body);
  }

  const context = (request: FastifyRequest, record: IdempotencyRecord | null) => ({
    auth: request.auth!,
    requestId: request.id,
    idempotencyKey: record?.key ?? null,
    idempotency: record,
  });

  async function loopGuard(request: FastifyRequest) {
    await usage.checkLoopGuard({
      orgId: request.auth!.org.id,
      method: request.method,
      path: request.url,
      bodyHash: requestBodyHash(request.rawBody),
    });
  }

  app.post(
    '/v1/simulations',
    {
      config: sim,
      schema: {
        tags,
        summary: 'Simulate one match',
        description:
          'Price: draws / 1000 credits per live delivery, cached results included. 200 with the simulation when it is ready within wait_seconds, else 202 with a job whose result_url delivers it. Optional Idempotency-Key header (1-255 characters).',
        body: simulationBodySchema,
        headers: z.object({ 'idempotency-key': z.string().optional() }).passthrough(),
        response: { 200: simulationSchema, 202: jobSchema },
      },
    },
    async (request, reply) => {
      await loopGuard(request);
      return idempotent(request, reply, (record) => service.submit(context(request, record), request.body));
    },
  );

  app.post(
    '/v1/simulations/quote',
    {
      config: sim,
      schema: {
        tags,
        summary: 'Quote the exact price of a simulation',
        description:
          'Validates non-auto lineups against the current inputs; reserves nothing. Same body as POST /v1/simulations.',
        body: simulationBodySchema,
        response: { 200: quoteSchema },
      },
    },
    async (request, reply) => {
      await loopGuard(request);
      const quote = await service.quote(request.auth!, request.body);
      return sendJson(reply, 200, JSON.stringify(quote));
    },
  );

  app.post(
    '/v1/simulations/batch',
    {
      config: sim,
      schema: {
        tags,
        summary: 'Reserve and queue up to 1,000 simulations',
        description:
          'Every item is validated before credits are reserved; an item that cannot run carries its error. Each delivered item costs draws / 1000 credits. Optional Idempotency-Key.',
        body: batchBodySchema,
        response: { 202: batchSchema },
      },
    },
    async (request, reply) => {
      await loopGuard(request);
      return idempotent(request, reply, (record) =>
        service.submitBatch(context(request, record), request.body),
      );
    },
  );

  app.get(
    '/v1/simulations/batch/:batch_id',
    {
      config: sim,
      schema: {
        tags,
        summary: 'Status of a batch and its items',
        params: z.object({ batch_id: z.string().min(1).max(64) }),
        response: { 200: batchSchema },
      },
    },
    async (request, reply) => {
      const status = await service.batchStatus(context(request, null), request.params.batch_id);
      return sendJson(reply, 200, JSON.stringify(status.body));
    },
  );

  app.get(
    '/v1/simulations/jobs/:job_id',
    {
      config: sim,
      schema: {
        tags,
        summary: 'Result path: deliver and settle a job or batch item',
        description:
          'queued or running: 202 with progress; succeeded: settles the hold and answers 200 with the simulation; delivered: the same delivery again with credits_charged 0; failed: 500 simulation_failed; hold ended: 409 reservation_expired.',
        params: z.object({ job_id: z.string().min(1).max(64) }),
        querystring: z.strictObject({ reservation_id: z.string().min(1).max(64) }),
        response: { 200: simulationSchema, 202: jobSchema },
      },
    },
    async (request, reply) => {
      const result = await service.result(
        context(request, null),
        request.params.job_id,
        request.query.reservation_id,
      );
      return sendJson(reply, result.status, JSON.stringify(result.body));
    },
  );
}
