// The wire forms of season projections (docs/api.md §2.10, §2.11, §4.12): zod = validation = OpenAPI.
import { z } from 'zod';
import { competitionLabelSchema } from '../../engine-contract/match-inputs.js';
import { roundSummarySchema } from '../../projections/projection-model.js';
import { DEFAULT_SEASONS, MAX_SEASONS, MIN_SEASONS } from '../../projections/types.js';
import { int4Id, opaqueId, waitSeconds } from './primitives.js';
import { named, openEnum } from './registry.js';

const seasons = z
  .number()
  .int()
  .min(MIN_SEASONS)
  .max(MAX_SEASONS)
  .describe(`Simulated seasons, ${MIN_SEASONS} to ${MAX_SEASONS}; default ${DEFAULT_SEASONS}.`);

export const projectionBodySchema = z.strictObject({
  competition_id: int4Id.describe('The competition to project (a covered one; see GET /v1/fixtures).'),
  seasons: seasons.optional(),
  wait_seconds: waitSeconds('the projection').optional(),
});

export const projectionPriceSchema = named(
  'ProjectionPrice',
  z
    .object({
      seasons: z.number().int().describe('Seasons simulated.'),
      remaining_fixtures: z.number().int().describe('Fixtures left to play, each simulated once per season.'),
      credits: z
        .string()
        .describe('Exact price in credits, three decimals: seasons x remaining fixtures / 100,000.'),
    })
    .describe('The price of a projection: one credit per 100,000 fixture-seasons, rounded up to 0.001.'),
);

export const projectionQuoteSchema = z
  .object({
    object: z.literal('projection_quote'),
    competition_id: z.number().int(),
    price: projectionPriceSchema,
    credits: z.number(),
    credits_charged: z.literal(0),
    rate_card: z.string(),
    livemode: z.boolean(),
    data_version: z.string(),
  })
  .describe('An exact price of a projection; nothing is reserved.');

const PROJECTION_JOB_STATUSES = ['queued', 'running', 'succeeded', 'delivered', 'failed', 'expired'] as const;

export const projectionJobSchema = z
  .object({
    object: z.literal('projection_job'),
    job_id: z.string(),
    competition_id: z.number().int(),
    reservation_id: z.string(),
    result_url: z.string(),
    status: openEnum(PROJECTION_JOB_STATUSES, 'The projection job state (docs/api.md §4.12).'),
    price: projectionPriceSchema,
    credits_reserved: z.number(),
    retry_after_seconds: z.number(),
    livemode: z.boolean(),
    created_at: z.string(),
  })
  .describe('A projection job (202): follow result_url to deliver and settle it.');

const projectionTeamSchema = z.object({
  team: z.object({ team_id: z.number().int(), name: z.string() }),
  played: z.number().int(),
  points: z.number(),
  goals_for: z.number().int(),
  goals_against: z.number().int(),
  goal_difference: z.number().int(),
  expected_points: z.number(),
  expected_goal_difference: z.number(),
  positions: z.array(z.number()).describe('The probability of each final place, index 0 = first.'),
  title: z.number(),
  zones: z.record(z.string(), z.number()).describe('The probability of finishing in each zone, by its name.'),
  standard_error: z
    .object({ expected_points: z.number(), title: z.number() })
    .describe('Monte Carlo standard errors of expected_points and title.'),
});

export const projectionSchema = z
  .object({
    object: z.literal('season_projection'),
    id: z.string(),
    competition: competitionLabelSchema,
    as_of: z.string().nullable().describe('The latest capture time of the inputs used.'),
    data_version: z.string(),
    seasons: z.number().int(),
    played_fixtures: z.number().int(),
    remaining_fixtures: z.number().int(),
    livemode: z.boolean(),
    created_at: z.string(),
    credits_charged: z.number(),
    receipt: z.object({
      request_id: z.string(),
      delivery_request_id: z.string(),
      idempotency_key: z.string().nullable(),
      price: projectionPriceSchema,
      credits_charged: z.number(),
      credits_remaining: z.number().nullable(),
      job_id: z.string(),
      reservation_id: z.string(),
    }),
    model: z.object({
      version: z.string(),
      sampler: z.string(),
      strength_sd: z.number(),
      backtest: z.object({
        held_out_seasons: z.array(z.number().int()),
        leagues: z.array(z.string()),
        seasons_simulated: z.number().int(),
        rounds: z.record(z.string(), roundSummarySchema),
      }),
    }),
    rules: z.object({
      points: z.object({ win: z.number().int(), draw: z.number().int() }),
      tie_breakers: z.array(z.string()),
    }),
    zones: z.array(z.object({ name: z.string(), from: z.number().int(), to: z.number().int() })),
    teams: z.array(projectionTeamSchema).describe('One per club, ordered by expected points.'),
  })
  .describe('A season projection (docs/api.md §2.10).');

export const projectionJobParamsSchema = z.object({ job_id: opaqueId });
export const projectionResultQuerySchema = z.strictObject({ reservation_id: opaqueId });
export const projectionParamsSchema = z.object({ projection_id: opaqueId });

named('ProjectionRequest', projectionBodySchema);
named('ProjectionQuote', projectionQuoteSchema);
named('ProjectionJob', projectionJobSchema);
named('SeasonProjection', projectionSchema);
