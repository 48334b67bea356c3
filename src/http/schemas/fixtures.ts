// Wire schemas of the fixture routes (docs/api.md §2.2, §2.7, §2.8, §4.2, §4.6, §4.7) and of the
// operators' feed load.
import { z } from 'zod';
import { competitionLabelSchema, PLAYER_POSITIONS } from '../../engine-contract/match-inputs.js';
import { FIXTURE_STATES } from '../../fixtures/fixture-inputs.js';
import { DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS } from '../../fixtures/fixture-list.js';
import { freshnessSchema, sideTeamSchema, teamSchema } from './common.js';
import { boundedText, isoDay, int4IdParam as positiveId } from './primitives.js';
import { named, openEnum } from './registry.js';

export const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('1 to 200, default 50.'),
  from: isoDay.optional().describe('First UTC day (YYYY-MM-DD, 1900-01-01 to 2199-12-31); default today.'),
  to: isoDay
    .optional()
    .describe(
      `Last UTC day, inclusive; default from + ${DEFAULT_WINDOW_DAYS} days; at most ${MAX_WINDOW_DAYS} days after from.`,
    ),
  competition_id: positiveId.optional(),
  team_id: positiveId.optional().describe('Fixtures where this team plays home or away.'),
  team: boundedText(200).optional().describe('Case-insensitive part of a team name, or its short name.'),
  state: z.enum(FIXTURE_STATES).optional(),
  status: z
    .enum(['fresh'])
    .optional()
    .describe(
      '`fresh`: only fixtures on sale now (`freshness.status` fresh), the ones a simulation accepts.',
    ),
});

/** The fixture reads take no query parameters; any sent is refused by name. */
export const noQuery = z.strictObject({});

export const fixtureParams = z.strictObject({
  fixture_id: positiveId.describe('Fixture id, minimum 1.'),
});

const summarySchema = z
  .object({
    simulation_id: z.string(),
    created_at: z.string(),
    draws: z.number().int(),
    home_win: z.number(),
    draw: z.number(),
    away_win: z.number(),
    expected_goals: z.object({ home: z.number(), away: z.number() }),
  })
  .describe('The latest shared simulation of the current data_version.');

const fixtureItemSchema = z.object({
  fixture_id: z.number().int(),
  kickoff: z.string().describe('ISO 8601 UTC.'),
  home: teamSchema,
  away: teamSchema,
  competition: competitionLabelSchema.extend({
    covered: z
      .boolean()
      .describe('False: listed only; squads, lineups and simulations answer fixture_not_covered.'),
  }),
  state: openEnum(FIXTURE_STATES, 'Where the fixture is in its life (docs/api.md §3).'),
  score: z
    .object({ home: z.number().int(), away: z.number().int() })
    .nullable()
    .describe('Final score when known.'),
  data_version: z.string().describe('Opaque input version; compare for equality only.'),
  summary: summarySchema.nullable(),
  freshness: freshnessSchema,
});

export const fixtureListSchema = z
  .object({
    object: z.literal('list'),
    has_more: z.boolean().describe('True when `limit` cut the list: narrow the window or filters.'),
    data: z.array(fixtureItemSchema),
  })
  .describe('Fixture list');

const position = z.enum(PLAYER_POSITIONS).nullable();

export const squadsSchema = z
  .object({
    object: z.literal('fixture_squads'),
    fixture_id: z.number().int(),
    squad_version: z.string().describe('Echoed as inputs.squad_version on quotes and runs.'),
    data_version: z.string(),
    as_of: z.string().describe('Input watermark, ISO 8601 UTC.'),
    lineups_announced: z.boolean(),
    formations: z.array(z.string()).describe('Formations a custom lineup may use.'),
    home: z.object({
      team: sideTeamSchema,
      players: z.array(z.object({ player_id: z.number().int(), name: z.string(), position })),
    }),
    away: z.object({
      team: sideTeamSchema,
      players: z.array(z.object({ player_id: z.number().int(), name: z.string(), position })),
    }),
    freshness: freshnessSchema,
  })
  .describe('Fixture squads');

const expectedPlayer = z.object({
  player_id: z.number().int(),
  name: z.string(),
  position,
  p_start: z.number().min(0).max(1).describe('Model start probability.'),
});
const expectedSide = z.object({
  team: sideTeamSchema,
  xi: z.array(expectedPlayer),
  bench: z.array(expectedPlayer),
  expected_formation: z.string().nullable(),
});

export const expectedLineupSchema = z
  .object({
    object: z.literal('expected_lineup'),
    fixture_id: z.number().int(),
    as_of: z.string(),
    data_version: z.string().describe('The same organisation reads the same version again for free.'),
    squad_version: z.string(),
    official_lineups_announced: z
      .boolean()
      .describe('True once team sheets are published; the XI stays the model expectation.'),
    home: expectedSide,
    away: expectedSide,
    model: z.object({ public_name: z.string(), version: z.string() }),
    credits_charged: z.number().describe('1 on the first live delivery of a data_version, else 0.'),
    replay: z.boolean().describe('True when this organisation was already delivered this data_version.'),
    first_delivery: z
      .object({
        request_id: z.string().nullable(),
        delivered_at: z.string(),
        credits_charged: z.number(),
      })
      .optional()
      .describe(
        'On a replay: the first delivery of this data_version, the request charged for it (a client whose first answer was lost learns what it charged).',
      ),
    livemode: z.boolean(),
    receipt: z
      .object({
        request_id: z.string(),
        price: z.string().describe('"1.000"'),
        credits_charged: z.number(),
        credits_remaining: z.number(),
      })
      .optional()
      .describe('On live deliveries and replays.'),
  })
  .describe('Expected lineup');

export const feedLoadSchema = z.object({
  object: z.literal('feed_load'),
  competitions: z.number().int(),
  teams: z.number().int(),
  players: z.number().int(),
  fixtures: z.object({ created: z.number().int(), updated: z.number().int() }),
  inputs_replaced: z.number().int(),
  loaded_at: z.string(),
});

// Component names in the OpenAPI documents (src/http/schemas/registry.ts).
named('FixtureSummary', summarySchema);
named('Fixture', fixtureItemSchema);
named('FixtureList', fixtureListSchema);
named('Squads', squadsSchema);
named('ExpectedPlayer', expectedPlayer);
named('ExpectedLineup', expectedLineupSchema);
named('FeedLoad', feedLoadSchema);
