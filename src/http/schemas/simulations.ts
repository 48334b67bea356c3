// Wire schemas of the simulation routes (docs/api.md §2.3-2.6, §4.3-4.5, §4.8). Field order is the
// order the views build, so a body serialised through its schema keeps its bytes.
import { z } from 'zod';
import { MAX_DRAWS_PER_JOB as MAX_DRAWS, MIN_DRAWS_PER_JOB as MIN_DRAWS } from '../../engine/contract/run.js';
import { simulationDocumentSchema } from '../../engine/document.js';
import type { LineupsRequest } from '../../fixtures/lineups.js';
import { JOB_STATUSES } from '../../jobs/types.js';
import { DEFAULT_DRAWS, DEFAULT_WAIT_SECONDS } from '../../simulations/types.js';
import { freshnessSchema, priceSchema } from './common.js';
import { boundedText, int4Id, int4IdOrDigits, isoDay, opaqueId } from './primitives.js';
import { named, openEnum } from './registry.js';

const MAX_BATCH_ITEMS = 1000;
/** Generous bounds for the lineup lists; the lineup rules give the precise lineup_invalid answers. */
const MAX_LISTED_PLAYERS = 50;
const MAX_FORMATION_LENGTH = 20;

const isoDate = isoDay.describe(
  'UTC day of the match, YYYY-MM-DD (1900-01-01 to 2199-12-31); when omitted the next match is selected.',
);

const fixtureId = int4IdOrDigits.describe(
  'Fixture id (integer 1 to 2,147,483,647, or a string of its digits); use instead of home, away and date.',
);
const teamName = boundedText(200);

const playerIds = z.array(int4Id).max(MAX_LISTED_PLAYERS);

const lineupSideRequestSchema = z
  .discriminatedUnion('source', [
    z.strictObject({ source: z.literal('auto') }),
    z.strictObject({ source: z.literal('predicted') }),
    z.strictObject({ source: z.literal('announced') }),
    z.strictObject({
      source: z.literal('custom'),
      xi: playerIds.describe('Exactly 11 player ids from the side of GET /v1/fixtures/{fixture_id}/squads.'),
      bench: playerIds.optional().describe('0 to 12 substitutes in the order they come on.'),
      formation: boundedText(MAX_FORMATION_LENGTH)
        .optional()
        .describe('Outfield lines joined by "-", summing to 10, from the squads read `formations`.'),
    }),
  ])
  .describe('Lineup source of one side: auto (default), predicted, announced or custom.');

/** The lineup choices of docs/decisions.md §5, as the request body carries them. */
export const lineupsRequestSchema = z
  .strictObject({
    home: lineupSideRequestSchema.optional(),
    away: lineupSideRequestSchema.optional(),
  })
  .describe('Per-side lineup choice; a side left out is `auto`.') satisfies z.ZodType<LineupsRequest>;
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

const lineupInputsSchema = z.object({
  lineups: z.record(z.string(), z.unknown()),
  squad_version: z.string(),
});
const scopeSchema = z.enum(['shared', 'private']);
const progressSchema = z.object({ draws_done: z.number().int(), draws_total: z.number().int() });

export const jobSchema = z
  .object({
    object: z.literal('simulation_job'),
    job_id: z.string(),
    fixture_id: z.number().int(),
    reservation_id: z.string(),
    result_url: z.string(),
    status: openEnum(JOB_STATUSES, 'The job state (docs/api.md §3).'),
    price: priceSchema,
    credits_reserved: z.number(),
    retry_after_seconds: z.number(),
    progress: progressSchema,
    scope: scopeSchema,
    livemode: z.boolean(),
    created_at: z.string(),
    batch_id: z.string().optional(),
    warnings: z.array(z.string()).optional(),
  })
  .describe('A simulation job (202): follow result_url to deliver and settle it.');

export const simulationSchema = z
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
    scope: scopeSchema,
    inputs: lineupInputsSchema,
    warnings: z.array(z.string()),
    receipt: z.object({
      request_id: z.string(),
      delivery_request_id: z.string().nullable(),
      idempotency_key: z.string().nullable(),
      price: priceSchema,
      credits_charged: z.number(),
      credits_remaining: z.number().nullable(),
      inputs_hash: z.string().nullable(),
      job_id: z.string(),
      reservation_id: z.string(),
    }),
    simulation: simulationDocumentSchema,
  })
  .describe('A delivered simulation (docs/api.md §2.3; the document of docs/decisions.md §11).');

export const quoteSchema = z
  .object({
    object: z.literal('simulation_quote'),
    fixture_id: z.number().int(),
    price: priceSchema,
    credits: z.number(),
    credits_charged: z.literal(0),
    rate_card: z.string(),
    livemode: z.boolean(),
    scope: scopeSchema,
    inputs: lineupInputsSchema,
    warnings: z.array(z.string()),
    data_version: z.string(),
  })
  .describe('An exact price; nothing is reserved.');

const batchItemSchema = z.object({
  fixture: z.number().int().nullable(),
  job_id: z.string().optional(),
  status: z.string().describe('queued, running, succeeded, delivered, failed, expired, or rejected.'),
  credits_reserved: z.number(),
  credits_charged: z.number().optional(),
  reservation_id: z.string().optional(),
  result_url: z.string().optional(),
  progress: progressSchema.optional(),
  scope: scopeSchema.optional(),
  inputs: lineupInputsSchema.optional(),
  warnings: z.array(z.string()).optional(),
  freshness: freshnessSchema.optional(),
  error: z
    .object({
      code: z.string(),
      message: z.string(),
      param: z.string().nullable().optional(),
      recovery: z.record(z.string(), z.unknown()).nullable().optional(),
      doc_url: z.string().optional(),
    })
    .optional(),
});

export const batchSchema = z
  .object({
    object: z.literal('simulation_batch'),
    batch_id: z.string(),
    livemode: z.boolean(),
    price: priceSchema,
    items: z.array(batchItemSchema),
    validUntil: z.number().nullable(),
    credits_reserved_total: z.number(),
    created_at: z.string(),
  })
  .describe('A batch: per-item jobs, holds and errors.');

export const jobParamsSchema = z.object({ job_id: opaqueId });
export const resultQuerySchema = z.strictObject({ reservation_id: opaqueId });
export const batchParamsSchema = z.object({ batch_id: opaqueId });

// Component names in the OpenAPI documents (src/http/schemas/registry.ts).
named('LineupChoice', lineupSideRequestSchema);
named('Lineups', lineupsRequestSchema);
named('SimulationRequest', simulationBodySchema);
named('BatchRequest', batchBodySchema);
named('SimulationJob', jobSchema);
named('SimulationDocument', simulationDocumentSchema);
named('Simulation', simulationSchema);
named('Quote', quoteSchema);
named('BatchItem', batchItemSchema);
named('Batch', batchSchema);
