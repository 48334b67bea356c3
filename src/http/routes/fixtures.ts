// GET /v1/fixtures, GET /v1/fixtures/{fixture_id}/squads, GET /v1/fixtures/{fixture_id}/expected-lineup
// (spec 2.2, 2.7, 2.8, 4.2, 4.6, 4.7; decisions 4) and the operators' POST /admin/v1/feed.
import { z } from 'zod';
import { PLAYER_POSITIONS } from '../../engine/contract/match-inputs.js';
import { ApiError } from '../../errors.js';
import { makeExpectedLineupSales } from '../../fixtures/expected-lineup-sales.js';
import { ingestFeed } from '../../fixtures/feed-loader.js';
import { getFixtureForReading } from '../../fixtures/fixture-access.js';
import { FIXTURE_STATES } from '../../fixtures/fixture-inputs.js';
import { DEFAULT_WINDOW_DAYS, listFixtures, MAX_WINDOW_DAYS } from '../../fixtures/fixture-list.js';
import { squadsBody } from '../../fixtures/fixture-views.js';
import { FRESHNESS_STATUSES } from '../../fixtures/freshness.js';
import type { App, AppDeps } from '../app.js';

const DAY_MS = 86_400_000;
/** Feeds of whole seasons are large; the admin route alone accepts bodies up to this size. */
const FEED_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

const isoDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD')
  .refine((value) => {
    const day = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(day.getTime()) && day.toISOString().startsWith(value);
  }, 'not a calendar date');
const positiveId = z.coerce.number().int().min(1).max(2_147_483_647);

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('1 to 200, default 50.'),
  from: isoDay.optional().describe('First UTC day (YYYY-MM-DD); default today.'),
  to: isoDay
    .optional()
    .describe(
      `Last UTC day, inclusive; default from + ${DEFAULT_WINDOW_DAYS} days; at most ${MAX_WINDOW_DAYS} days after from.`,
    ),
  competition_id: positiveId.optional(),
  team_id: positiveId.optional().describe('Fixtures where this team plays home or away.'),
  team: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Case-insensitive part of a team name, or its short name.'),
  state: z.enum(FIXTURE_STATES).optional(),
});

/** The fixture reads take no query parameters; any sent is refused by name. */
const noQuery = z.strictObject({});

const fixtureParams = z.strictObject({
  fixture_id: positiveId.describe('Fixture id, minimum 1.'),
});

const teamSchema = z.object({
  team_id: z.number().int(),
  name: z.string(),
  short_name: z.string(),
  country: z.string(),
});

const freshnessSchema = z
  .object({
    status: z.enum(FRESHNESS_STATUSES),
    reason: z.string().describe('When the inputs are from, or why the fixture is not on sale.'),
    evaluatedAt: z.number().describe('Check time, Unix milliseconds.'),
    validUntil: z
      .number()
      .nullable()
      .describe('Kick-off in Unix milliseconds minus one; null when not on sale.'),
    inputsAsOf: z.number().optional().describe('When the inputs were captured, Unix milliseconds.'),
  })
  .describe('Freshness');

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
  competition: z.object({
    competition_id: z.number().int(),
    name: z.string(),
    country: z.string(),
    season: z.string(),
    covered: z
      .boolean()
      .describe('False: listed only; squads, lineups and simulations answer fixture_not_covered.'),
  }),
  state: z
    .enum(FIXTURE_STATES)
    .describe(
      'provisional, inputs_final, lineups_announced, in_play, finished, postponed, cancelled; may gain values.',
    ),
  score: z
    .object({ home: z.number().int(), away: z.number().int() })
    .nullable()
    .describe('Final score when known.'),
  data_version: z.string().describe('Opaque input version; compare for equality only.'),
  summary: summarySchema.nullable(),
  freshness: freshnessSchema,
});

const fixtureListSchema = z
  .object({
    object: z.literal('list'),
    has_more: z.boolean().describe('True when `limit` cut the list: narrow the window or filters.'),
    data: z.array(fixtureItemSchema),
  })
  .describe('Fixture list');

const sideTeam = z.object({ team_id: z.number().int(), name: z.string() });
const position = z.enum(PLAYER_POSITIONS).nullable();

const squadsSchema = z
  .object({
    object: z.literal('fixture_squads'),
    fixture_id: z.number().int(),
    squad_version: z.string().describe('Echoed as inputs.squad_version on quotes and runs.'),
    data_version: z.string(),
    as_of: z.string().describe('Input watermark, ISO 8601 UTC.'),
    lineups_announced: z.boolean(),
    formations: z.array(z.string()).describe('Formations a custom lineup may use.'),
    home: z.object({
      team: sideTeam,
      players: z.array(z.object({ player_id: z.number().int(), name: z.string(), position })),
    }),
    away: z.object({
      team: sideTeam,
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
  team: sideTeam,
  xi: z.array(expectedPlayer),
  bench: z.array(expectedPlayer),
  expected_formation: z.string().nullable(),
});

const expectedLineupSchema = z
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

const feedLoadSchema = z.object({
  object: z.literal('feed_load'),
  competitions: z.number().int(),
  teams: z.number().int(),
  players: z.number().int(),
  fixtures: z.object({ created: z.number().int(), updated: z.number().int() }),
  inputs_replaced: z.number().int(),
  loaded_at: z.string(),
});

/** The list window of decisions 4: default today to today + 14 days, at most 31 days. */
function listWindow(query: { from?: string | undefined; to?: string | undefined }, now: Date) {
  const day = (value: string) => new Date(`${value}T00:00:00Z`);
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const to = query.to ? day(query.to) : null;
  const from = query.from
    ? day(query.from)
    : to
      ? new Date(to.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS)
      : today;
  const last = to ?? new Date(from.getTime() + DEFAULT_WINDOW_DAYS * DAY_MS);
  if (last.getTime() < from.getTime()) {
    throw new ApiError('parameter_invalid', { param: 'to', message: '`to` is before `from`.' });
  }
  if (last.getTime() - from.getTime() > MAX_WINDOW_DAYS * DAY_MS) {
    throw new ApiError('parameter_invalid', {
      param: 'to',
      message: `The window from \`from\` to \`to\` is at most ${MAX_WINDOW_DAYS} days.`,
    });
  }
  return { from, to: last };
}

export function registerFixtureRoutes(app: App, deps: AppDeps) {
  const sql = deps.db.sql;
  const sales = makeExpectedLineupSales({ sql, ledger: deps.services.ledger, clock: deps.clock });

  app.get(
    '/v1/fixtures',
    {
      config: { access: 'api', rateGroup: 'data' },
      schema: {
        summary: 'List fixtures',
        description:
          'Free fixture discovery, ordered by kick-off then fixture_id. Test keys get an empty list. ' +
          'Unknown or malformed parameters answer 400 parameter_invalid naming `param`.',
        tags: ['fixtures'],
        querystring: listQuery,
        response: { 200: fixtureListSchema },
      },
    },
    async (request) => {
      const query = request.query;
      const now = deps.clock();
      const window = listWindow(query, now);
      if (!request.auth!.livemode) return { object: 'list' as const, has_more: false, data: [] };
      const result = await listFixtures(
        sql,
        {
          ...window,
          limit: query.limit,
          competitionId: query.competition_id,
          teamId: query.team_id,
          team: query.team,
          state: query.state,
        },
        now,
      );
      return { object: 'list' as const, ...result };
    },
  );

  app.get(
    '/v1/fixtures/:fixture_id/squads',
    {
      config: { access: 'api', scope: 'data.read', rateGroup: 'data' },
      schema: {
        summary: "Read both sides' eligible players and the supported formations",
        description: 'Free. Readable after kick-off; not for fixtures of uncovered competitions.',
        tags: ['fixtures'],
        params: fixtureParams,
        querystring: noQuery,
        response: { 200: squadsSchema },
      },
    },
    async (request) => {
      const now = deps.clock();
      const fixture = await getFixtureForReading(sql, request.params.fixture_id, now);
      return squadsBody(fixture, now);
    },
  );

  app.get(
    '/v1/fixtures/:fixture_id/expected-lineup',
    {
      config: { access: 'api', scope: 'data.read', rateGroup: 'data' },
      schema: {
        summary: 'Read the expected XI, bench, formation and start probabilities',
        description:
          'One credit on the first live delivery per organisation and data_version; reading the same ' +
          'data_version again is a free replay (`replay: true`). Test keys: livemode false, nothing charged.',
        tags: ['fixtures'],
        params: fixtureParams,
        querystring: noQuery,
        response: { 200: expectedLineupSchema },
      },
    },
    async (request) => {
      const auth = request.auth!;
      return sales.read(
        { orgId: auth.org.id, livemode: auth.livemode, requestId: request.id },
        request.params.fixture_id,
      );
    },
  );

  // The feed is read as text so that a refused feed can be answered with its line and column.
  app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    scope.post(
      '/admin/v1/feed',
      {
        config: { access: 'admin' },
        bodyLimit: FEED_BODY_LIMIT_BYTES,
        schema: {
          tags: ['admin'],
          summary: 'Load a fixture-inputs feed (docs/feed.md), as `matchsim ingest FILE`',
          response: { 200: feedLoadSchema },
        },
      },
      async (request) => {
        const summary = await ingestFeed(sql, request.body as string, { clock: deps.clock });
        return { object: 'feed_load' as const, ...summary };
      },
    );
  });
}
