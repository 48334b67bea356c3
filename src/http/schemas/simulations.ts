// Wire schemas of the simulation routes (docs/api.md §2.3-2.6, §4.3-4.5, §4.8). Field order is the
// order the views build, so a body serialised through its schema keeps its bytes.
import { z } from 'zod';
import { simulationDocumentSchema } from '../../engine/document-schema.js';
import { VALUE_KEYS } from '../../engine/document-value.js';
import { MARKET_FITS } from '../../engine-contract/match-inputs.js';
import { MAX_DRAWS_PER_JOB as MAX_DRAWS, MIN_DRAWS_PER_JOB as MIN_DRAWS } from '../../engine-contract/run.js';
import type { LineupsRequest } from '../../fixtures/lineups.js';
import { BATCH_STATUSES, JOB_STATUSES } from '../../jobs/types.js';
import { MARGIN_METHODS } from '../../market/margin-removal.js';
import type { MarketRequest } from '../../simulations/market-request.js';
import { DEFAULT_DRAWS } from '../../simulations/types.js';
import { compiledSerializer } from '../serialize.js';
import { DOCUMENT_SECTIONS, isSectionList } from '../views/document-sections.js';
import { freshnessSchema, priceSchema } from './common.js';
import { fromStateRequestSchema } from './in-play.js';
import { boundedText, int4Id, int4IdOrDigits, isoDay, opaqueId, waitSeconds } from './primitives.js';
import { named, openEnum } from './registry.js';

const MAX_BATCH_ITEMS = 1000;
/** docs/api.md §4.5: up to 16 pairs, keys up to 40 characters, values up to 500. */
const MAX_METADATA_PAIRS = 16;
const MAX_CUSTOM_ID_LENGTH = 64;
const LIST_LIMIT_MAX = 100;
const LIST_LIMIT_DEFAULT = 10;
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
export const draws = z
  .number()
  .int()
  .min(MIN_DRAWS)
  .max(MAX_DRAWS)
  .describe(
    `Simulated matches, ${MIN_DRAWS} to ${MAX_DRAWS}; default ${DEFAULT_DRAWS}. Price: draws / 1000 credits.`,
  );

const decimalOdds = z.number().describe('Decimal odds, above 1.0.');

/** docs/api.md §4.3, "Fitted to the market". */
export const marketRequestSchema = z
  .strictObject({
    odds: z
      .strictObject({
        '1x2': z
          .array(decimalOdds)
          .length(3)
          .describe('Decimal odds of home win, draw and away win (required).'),
        'total_2.5': z
          .array(decimalOdds)
          .length(2)
          .optional()
          .describe('Decimal odds of over and under 2.5 goals (optional).'),
      })
      .describe("One bookmaker's odds of the match."),
    margin_method: z
      .enum(MARGIN_METHODS)
      .optional()
      .describe('How the margin is removed (POST /v1/odds/implied); default `shin`.'),
    fit: z
      .enum(MARKET_FITS)
      .optional()
      .describe(
        '`exact` (default): the 1X2 reproduced (with a total: the 1X2 balance and over 2.5). `supremacy`: the balance from the 1X2, the level of goals from the model; not with a total.',
      ),
  })
  .describe(
    "Fit the run to these market prices: the sides' goals are solved so that the model's own prices equal the odds' probabilities, margin removed; every other output follows.",
  ) satisfies z.ZodType<MarketRequest>;

// One optional field per outcome, not a record: a record reads `{"__proto__": 2.1}` as no key at all
// (zod leaves `__proto__` out of what it builds), where an object of known fields refuses it as it
// refuses any unknown field.
export const offeredOddsSchema = z
  .strictObject(Object.fromEntries(VALUE_KEYS.map((key) => [key, decimalOdds.optional()])))
  .describe(
    `Decimal odds you were offered, by outcome: ${VALUE_KEYS.join(', ')}. The document answers each in its \`value\` section.`,
  );

export const selectorFields = {
  fixture_id: fixtureId.optional(),
  home: teamName
    .optional()
    .describe('Home team name (full or short), with away, when fixture_id is omitted.'),
  away: teamName.optional().describe('Away team name, with home, when fixture_id is omitted.'),
  date: isoDate.optional(),
  lineups: lineupsRequestSchema.optional(),
  market: marketRequestSchema.optional(),
  offered_odds: offeredOddsSchema.optional(),
  from_state: fromStateRequestSchema.optional(),
};

export const metadataRequestSchema = z
  .record(boundedText(40), boundedText(500, 0))
  .refine((pairs) => Object.keys(pairs).length <= MAX_METADATA_PAIRS, {
    message: `at most ${MAX_METADATA_PAIRS} pairs`,
  })
  .describe(
    `Up to ${MAX_METADATA_PAIRS} string pairs (keys up to 40 characters, values up to 500), echoed in every view and result.`,
  );
const metadataSchema = z
  .record(z.string(), z.string())
  .describe('The metadata given at submission ({} when none).');
const customIdSchema = z
  .string()
  .nullable()
  .describe("The client's name for the batch item, as given; null when none was given.");

export const simulationBodySchema = z.strictObject({
  ...selectorFields,
  metadata: metadataRequestSchema.optional(),
  draws: draws.optional(),
  wait_seconds: waitSeconds('the result').optional(),
});

export const batchBodySchema = z.strictObject({
  fixtures: z
    .array(
      z.strictObject({
        ...selectorFields,
        custom_id: boundedText(MAX_CUSTOM_ID_LENGTH)
          .optional()
          .describe(
            `Your name for the item, up to ${MAX_CUSTOM_ID_LENGTH} characters, unique within the batch.`,
          ),
      }),
    )
    .min(1)
    .max(MAX_BATCH_ITEMS)
    .describe('1 to 1,000 distinct match selectors.'),
  draws: draws.optional(),
  metadata: metadataRequestSchema.optional(),
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
    custom_id: customIdSchema,
    metadata: metadataSchema,
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
    custom_id: customIdSchema,
    metadata: metadataSchema,
    simulation: simulationDocumentSchema,
  })
  .describe('A delivered simulation (docs/api.md §2.3; the document of docs/decisions.md §11).');

/** The document cut by `include` (docs/api.md §2.3): `schema` and the sections asked for, in its order. */
const simulationSectionsSchema = simulationDocumentSchema
  .partial()
  .required({ schema: true })
  .describe(
    'The simulation document with only the sections named by the `include` query parameter (and `schema`), in the same order.',
  );

/** A delivered simulation as the reads that take `include` answer it: the whole document, or some sections. */
export const simulationReadSchema = simulationSchema
  .extend({ simulation: z.union([simulationDocumentSchema, simulationSectionsSchema]) })
  .describe(
    'A delivered simulation (docs/api.md §2.3); with `include`, `simulation` holds only the sections asked for.',
  );

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

const itemErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  param: z.string().nullable().optional(),
  recovery: z.record(z.string(), z.unknown()).nullable().optional(),
  doc_url: z.string().optional(),
});

const itemStatusSchema = z
  .string()
  .describe('queued, running, succeeded, delivered, failed, expired, cancelled, or rejected.');

const batchItemSchema = z.object({
  custom_id: customIdSchema,
  fixture: z.number().int().nullable(),
  job_id: z.string().optional(),
  status: itemStatusSchema,
  credits_reserved: z.number(),
  credits_charged: z.number().optional(),
  reservation_id: z.string().optional(),
  result_url: z.string().optional(),
  progress: progressSchema.optional(),
  scope: scopeSchema.optional(),
  inputs: lineupInputsSchema.optional(),
  warnings: z.array(z.string()).optional(),
  freshness: freshnessSchema.optional(),
  error: itemErrorSchema.optional(),
});

const batchCountsSchema = z
  .object({
    total: z.number().int(),
    rejected: z.number().int(),
    queued: z.number().int(),
    running: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    delivered: z.number().int(),
    expired: z.number().int(),
    cancelled: z.number().int(),
  })
  .describe('Every item once, by its state; total = rejected + the sum of the job states.');

/** The batch-level fields every batch view shares (docs/api.md §2.6). */
const batchHeadFields = {
  object: z.literal('simulation_batch'),
  batch_id: z.string(),
  status: openEnum(
    BATCH_STATUSES,
    'The batch state (completed: no item queued or running; cancelling: cancelled, items still running).',
  ),
  counts: batchCountsSchema,
  livemode: z.boolean(),
  price: priceSchema,
  metadata: metadataSchema,
  results_url: z.string().describe('GET it for every item as NDJSON, delivering the finished ones.'),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  cancel_requested_at: z.string().nullable(),
};

// A compiled serializer (src/http/serialize.ts): a client polls a batch of up to 1,000 items while it
// runs: a poll of a finished 1,000-item batch took 40.7 ms of the service's CPU through zod, 33.0 this
// way (docs/decisions.md §6).
export const batchSchema = compiledSerializer(
  z
    .object({
      ...batchHeadFields,
      items: z.array(batchItemSchema).describe('Every item in submission order, rejected ones included.'),
      validUntil: z.number().nullable(),
      credits_reserved_total: z.number(),
    })
    .describe('A batch: its status and counts, and per-item jobs, holds and errors.'),
);

export const batchSummarySchema = z
  .object({ ...batchHeadFields, credits_reserved_total: z.number() })
  .describe('A batch in a list: the batch object without its items.');

export const listQueryFields = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(LIST_LIMIT_MAX)
    .optional()
    .describe(`1 to ${LIST_LIMIT_MAX}; default ${LIST_LIMIT_DEFAULT}.`),
  starting_after: opaqueId.optional().describe('The last id of the previous page.'),
};

/**
 * The page a list query asks for, as the stores read it: `limit` (LIST_LIMIT_DEFAULT when not given), the
 * cursor `starting_after`, and the query's filters (status, type) as they are.
 */
export function listPageOf<Filters extends object>({
  limit,
  starting_after,
  ...filters
}: Filters & { limit?: number | undefined; starting_after?: string | undefined }) {
  return { ...filters, limit: limit ?? LIST_LIMIT_DEFAULT, startingAfter: starting_after };
}

export const jobListQuerySchema = z.strictObject({
  ...listQueryFields,
  status: z.enum(JOB_STATUSES).optional(),
});
export const batchListQuerySchema = z.strictObject({
  ...listQueryFields,
  status: z.enum(BATCH_STATUSES).optional(),
});

export const jobListSchema = z
  .object({
    object: z.literal('list'),
    url: z.literal('/v1/simulations/jobs'),
    data: z.array(jobSchema),
    has_more: z.boolean(),
  })
  .describe('Your jobs (this key mode), newest first.');

export const batchListSchema = z
  .object({
    object: z.literal('list'),
    url: z.literal('/v1/simulations/batches'),
    data: z.array(batchSummarySchema),
    has_more: z.boolean(),
  })
  .describe('Your batches (this key mode), newest first.')
  .meta({ examples: [{ object: 'list', url: '/v1/simulations/batches', data: [], has_more: false }] });

export const batchResultLineSchema = z
  .object({
    object: z.literal('simulation_batch_result'),
    custom_id: customIdSchema,
    fixture: z.number().int().nullable(),
    job_id: z.string().nullable(),
    status: itemStatusSchema,
    simulation: simulationReadSchema
      .optional()
      .describe(
        'For every delivered item: the delivery, as the result path gives it (with `include`, only those sections).',
      ),
    error: itemErrorSchema.optional(),
  })
  .describe('One line of the results stream per batch item, in submission order.')
  .meta({
    examples: [
      {
        object: 'simulation_batch_result',
        custom_id: 'typo',
        fixture: null,
        job_id: null,
        status: 'rejected',
        error: { code: 'fixture_not_found', message: 'No matching simulation fixture.', param: 'fixtures.1' },
      },
      {
        object: 'simulation_batch_result',
        custom_id: 'east-west',
        fixture: 102,
        job_id: 'job_9xR',
        status: 'running',
      },
    ],
  });

/** `include`: the document's sections to send (src/http/views/document-sections.ts); default all. */
const includeQuery = z
  .string()
  .max(400)
  .refine(isSectionList, {
    // The error handler puts the parameter's name first (`include`: …).
    message: `a comma-separated list of the document's sections: ${DOCUMENT_SECTIONS.join(', ')}`,
  })
  .optional()
  .meta({
    description: `Only these sections of the simulation document, comma-separated, in the document's order whatever the order asked (\`schema\` is always sent): ${DOCUMENT_SECTIONS.join(', ')}. Default: every section. The sections left out are absent from \`simulation\`; delivery and charge are the same.`,
    example: 'result,goals,markets',
  });
export const includeQuerySchema = z.strictObject({ include: includeQuery });

export const jobParamsSchema = z.object({ job_id: opaqueId });
export const resultQuerySchema = z.strictObject({ reservation_id: opaqueId, include: includeQuery });
export const batchParamsSchema = z.object({ batch_id: opaqueId });
export const simulationParamsSchema = z.object({ simulation_id: opaqueId });

// Component names in the OpenAPI documents (src/http/schemas/registry.ts).
named('LineupChoice', lineupSideRequestSchema);
named('Lineups', lineupsRequestSchema);
named('SimulationRequest', simulationBodySchema);
named('BatchRequest', batchBodySchema);
named('SimulationJob', jobSchema);
named('SimulationDocument', simulationDocumentSchema);
named('Simulation', simulationSchema);
named('SimulationDocumentSections', simulationSectionsSchema);
named('SimulationRead', simulationReadSchema);
named('Quote', quoteSchema);
named('BatchItem', batchItemSchema);
named('Batch', batchSchema);
named('SimulationBatchResult', batchResultLineSchema);
named('SimulationJobList', jobListSchema);
named('BatchSummary', batchSummarySchema);
named('BatchList', batchListSchema);
