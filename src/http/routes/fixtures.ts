// GET /v1/fixtures, GET /v1/fixtures/{fixture_id}/squads, GET /v1/fixtures/{fixture_id}/expected-lineup
// (docs/api.md §2.2, §2.7, §2.8, §4.2, §4.6, §4.7; docs/decisions.md §4) and the operators'
// POST /admin/v1/feed. The list and the squads read through the fixture cache (src/fixtures/read-cache.ts).
import { ApiError, type ErrorCode } from '../../errors.js';
import { EXPECTED_LINEUP_PRICE_MILLI } from '../../fixtures/expected-lineup-sales.js';
import { ingestFeed } from '../../fixtures/feed-loader.js';
import { readableFixture } from '../../fixtures/fixture-access.js';
import { DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS } from '../../fixtures/fixture-list.js';
import type { FixtureReadCache } from '../../fixtures/read-cache.js';
import type { App, AppDeps } from '../app-types.js';
import {
  expectedLineupSchema,
  feedLoadSchema,
  fixtureListSchema,
  fixtureParams,
  listQuery,
  noQuery,
  squadsSchema,
} from '../schemas/fixtures.js';
import { sendSerialized } from '../serialize.js';
import { fixtureListBody, squadsBody } from '../views/fixture-pages.js';
import { expectedLineupView, fixtureListView } from '../views/fixtures.js';

const DAY_MS = 86_400_000;
/** What reading one fixture can answer (src/fixtures/fixture-access.ts). */
const READ_ERRORS: ErrorCode[] = ['fixture_not_found', 'fixture_not_covered', 'refreshing'];
/** Feeds of whole seasons are large; the admin route alone accepts bodies up to this size. */
const FEED_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

/** The list window of docs/decisions.md §4: default today to today + 14 days, at most 31 days. */
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

export function registerFixtureRoutes(app: App, deps: AppDeps, cache: FixtureReadCache) {
  registerFixtureList(app, deps, cache);
  if (deps.config.demo) registerDemoFixtureList(app, deps, cache);
  registerSquads(app, deps, cache);
  registerExpectedLineup(app, deps);
  registerFeedLoad(app, deps, cache);
}

function registerFixtureList(app: App, deps: AppDeps, cache: FixtureReadCache) {
  app.get(
    '/v1/fixtures',
    {
      config: { access: 'api', rateGroup: 'data' },
      schema: {
        operationId: 'listFixtures',
        summary: 'List fixtures',
        description:
          'Free fixture discovery, ordered by kick-off then fixture_id. Test keys get an empty list. ' +
          'Unknown or malformed parameters answer 400 parameter_invalid naming `param`.',
        tags: ['fixtures'],
        querystring: listQuery,
        response: { 200: fixtureListSchema },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const now = deps.clock();
      const window = listWindow(query, now);
      if (!request.auth!.livemode) return fixtureListView({ items: [], hasMore: false }, now);
      const list = await cache.list({
        ...window,
        limit: query.limit,
        competitionId: query.competition_id,
        teamId: query.team_id,
        team: query.team,
        state: query.state,
        onSaleAt: query.status === 'fresh' ? now : undefined,
      });
      // Already serialised through fixtureListSchema (views/fixture-pages.ts).
      return sendSerialized(reply, fixtureListBody(list, now));
    },
  );
}

/**
 * The demo's fixtures on sale for the playground's test key (docs/api.md §4.2: a test key lists none), as
 * a live key lists them. Only where the demo is on (never in production): its fixtures are fictional.
 */
function registerDemoFixtureList(app: App, deps: AppDeps, cache: FixtureReadCache) {
  app.get(
    '/playground/demo-fixtures',
    { config: { access: 'public' }, schema: { hide: true } },
    async (_request, reply) => {
      const now = deps.clock();
      const list = await cache.list({ ...listWindow({}, now), limit: 100, onSaleAt: now });
      return sendSerialized(reply, fixtureListBody(list, now));
    },
  );
}

function registerSquads(app: App, deps: AppDeps, cache: FixtureReadCache) {
  app.get(
    '/v1/fixtures/:fixture_id/squads',
    {
      config: { access: 'api', scope: 'data.read', rateGroup: 'data', errors: READ_ERRORS },
      schema: {
        operationId: 'getFixtureSquads',
        summary: "Read both sides' eligible players and the supported formations",
        description: 'Free. Readable after kick-off; not for fixtures of uncovered competitions.',
        tags: ['fixtures'],
        params: fixtureParams,
        querystring: noQuery,
        response: { 200: squadsSchema },
      },
    },
    async (request, reply) => {
      const now = deps.clock();
      const fixtureId = request.params.fixture_id;
      const fixture = readableFixture(await cache.fixture(fixtureId), fixtureId, now);
      // Already serialised through squadsSchema (views/fixture-pages.ts).
      return sendSerialized(reply, squadsBody(fixture, now));
    },
  );
}

function registerExpectedLineup(app: App, deps: AppDeps) {
  app.get(
    '/v1/fixtures/:fixture_id/expected-lineup',
    {
      config: {
        access: 'api',
        scope: 'data.read',
        rateGroup: 'data',
        errors: [...READ_ERRORS, 'balance_too_low', 'max_credits_exceeded', 'settlement_unknown'],
      },
      schema: {
        operationId: 'getExpectedLineup',
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
      const delivery = await deps.services.expectedLineups.read(
        { orgId: auth.org.id, livemode: auth.livemode, requestId: request.id },
        request.params.fixture_id,
      );
      return expectedLineupView(delivery, request.id, EXPECTED_LINEUP_PRICE_MILLI);
    },
  );
}

function registerFeedLoad(app: App, deps: AppDeps, cache: FixtureReadCache) {
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
          operationId: 'loadFeed',
          summary: 'Load a fixture-inputs feed (docs/feed.md), as `matchsim ingest FILE`',
          response: { 200: feedLoadSchema },
        },
      },
      async (request) => {
        const summary = await ingestFeed(deps.db.sql, request.body as string, {
          clock: deps.clock,
          onChanged: cache.changed,
        });
        return { object: 'feed_load' as const, ...summary };
      },
    );
  });
}
