// Property-based requests over every route and every parameter (issue 17), on the back end this run uses:
// hostile text (NUL, unpaired surrogates, overlong), numbers beyond int4 and doubles, dates outside any
// calendar, arbitrary JSON in every field, bad encodings, wrong content types, random credentials and
// Idempotency-Keys. Every answer must be below 500, carry a Request-Id, be the error object of
// docs/api.md §7 when it is an error (the wire contract checks every response against /openapi.json),
// never come from the database's refusal of a value that validation let through, and arrive: a request
// that hangs fails at LIVENESS_BOUND_MS, a bound far above any answer (it catches hangs, it measures
// nothing). FUZZ_RUNS requests: 500 in the fast tier, 5,000 in the slow (vitest.config.ts); FUZZ_SEED
// replays a run.
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_NAMES } from '../../src/accounts/orgs.js';
import { UNSTORABLE_VALUE_MESSAGE } from '../../src/http/error-handler.js';
import { errorResponseSchema } from '../../src/http/schemas/common.js';
import { MARGIN_METHODS } from '../../src/market/margin-removal.js';
import { FX, smallFeed } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';
import { usingServer } from '../helpers/database.js';

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
const LIVENESS_BOUND_MS = 15_000;

interface FuzzRequest {
  route: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  payload?: string;
  remoteAddress?: string;
}

/** Ids that exist, so that fuzzed requests also reach the rows behind them. */
interface Pools {
  live: string;
  test: string;
  adminToken: string;
  jobs: Array<{ id: string; reservationId: string }>;
  batches: string[];
  orgs: string[];
  keys: string[];
}

// ---- values ------------------------------------------------------------------------------------------

const hostileText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '\u0000',
      'a\u0000b',
      '\ud800',
      'x\udfffy',
      '',
      ' ',
      'x'.repeat(201),
      'y'.repeat(3000),
      'Northbridge',
      'southport rovers',
      '%00',
      "' OR 1=1 --",
      '../../etc/passwd',
      'NaN',
      '1e400',
      '\u202e\ufeff',
      '😀'.repeat(101),
    ),
  },
);

const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(
    0,
    -1,
    1,
    99,
    100,
    1000,
    2_147_483_647,
    2_147_483_648,
    1e300,
    -1e300,
    5e-324,
    1.5,
    2 ** 53 + 2,
  ),
  fc.constantFrom(...Object.values(FX)),
);

const anyJson = fc.jsonValue({ maxDepth: 2 });
const anyValue = fc.oneof(hostileText, hostileNumber, fc.boolean(), fc.constant(null), anyJson);

const hostileDay = fc.oneof(
  fc.constantFrom(
    '0000-01-01',
    '9999-12-31',
    '1899-12-31',
    '1900-01-01',
    '2199-12-31',
    '2200-01-01',
    '2026-02-30',
    '2026-11-21',
    '2026-11-23',
    '2026-1-1',
    '-001-01-01',
  ),
  fc.date({ noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10)),
  hostileText,
);

const hostileInstant = fc.oneof(
  fc.constantFrom(
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '2027-01-01T00:00:00+14:00',
    '2027-13-01T00:00:00Z',
  ),
  fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
  hostileText,
);

/** Text in a URL: percent-encoded, or one of the encodings a router must refuse. */
function urlText(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80'; // an unpaired surrogate cannot be encoded: send its raw UTF-8 bytes instead
  }
}
const rawSegments = fc.constantFrom(
  '%00',
  '%ED%A0%80',
  '%',
  '%zz',
  '2147483648',
  '0',
  '-1',
  '1e3',
  '0x10',
  '+7',
);
const segment = (pool: string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: pool.length ? fc.constantFrom(...pool) : fc.constant('x') },
    { weight: 3, arbitrary: hostileText.map(urlText) },
    { weight: 2, arbitrary: rawSegments },
    { weight: 1, arbitrary: fc.nat().map(String) },
    { weight: 1, arbitrary: fc.constantFrom('a'.repeat(65), 'b'.repeat(250)) },
  );

/** A query string from known parameter names (and unknown ones) with hostile values. */
function query(names: string[], value: fc.Arbitrary<string>) {
  return fc
    .array(fc.tuple(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...names) }, hostileText), value), {
      maxLength: 4,
    })
    .map((pairs) =>
      pairs.length === 0 ? '' : `?${pairs.map(([name, text]) => `${urlText(name)}=${text}`).join('&')}`,
    );
}

/** A body as sent: JSON of `value` mostly, sometimes not JSON at all. */
function body(value: fc.Arbitrary<unknown>) {
  return fc.oneof(
    { weight: 12, arbitrary: value.map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
    {
      weight: 1,
      arbitrary: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', '{', '{"a":', 'null')),
    },
  );
}

/** `fields` with any of them left out, plus now and then a field nobody asked for. */
function partial(fields: Record<string, fc.Arbitrary<unknown>>) {
  return fc
    .tuple(
      fc.record(fields, { requiredKeys: [] }),
      fc.option(fc.dictionary(hostileText, anyValue, { maxKeys: 2 }), { freq: 8 }),
    )
    .map(([known, extra]) => ({ ...(extra ?? {}), ...known }));
}

// ---- request bodies ----------------------------------------------------------------------------------

const playerId = fc.oneof(
  fc.integer({ min: 101, max: 125 }),
  fc.integer({ min: 201, max: 225 }),
  hostileNumber,
);
const lineupSide = fc.oneof(
  fc.constantFrom(
    { source: 'auto' },
    { source: 'predicted' },
    { source: 'announced' },
    { source: 'official' },
  ),
  partial({
    source: fc.constant('custom'),
    xi: fc.oneof(fc.array(playerId, { maxLength: 12 }), anyValue),
    bench: fc.array(playerId, { maxLength: 13 }),
    formation: fc.oneof(fc.constantFrom('4-3-3', '4-4-2', '5-5', '9-1', '1-1-1-1-1-5'), hostileText),
  }),
  anyValue,
);
const selectorFields = {
  fixture_id: fc.oneof(
    fc.constantFrom(...Object.values(FX)),
    hostileNumber,
    fc.nat().map(String),
    hostileText,
  ),
  home: fc.oneof(fc.constantFrom('Northbridge Athletic', 'Northbridge', 'Eastfield', 'Lowmoor'), hostileText),
  away: fc.oneof(fc.constantFrom('Southport Rovers', 'Southport', 'Westholm City', 'Highdale'), hostileText),
  date: hostileDay,
  lineups: fc.oneof(partial({ home: lineupSide, away: lineupSide }), anyValue),
};
const validDraws = fc.constantFrom(100, 1000, 5000, 20_000, 1_000_000);
const draws = fc.oneof(validDraws, fc.constantFrom(99, 1_000_001), hostileNumber);
// Never a valid wait above 0: with no worker a queued job would hold its request for the whole wait.
const waitSeconds = fc.constantFrom(0, -1, 26, 2.5, '3', null, true);

/** Selectors that pass validation, odd as they may be, so that the lookups behind them run too. */
const squadIds = (team: number) => fc.integer({ min: team * 100 + 1, max: team * 100 + 25 });
const validLineupSide = fc.oneof(
  fc.constantFrom({ source: 'auto' }, { source: 'predicted' }, { source: 'announced' }),
  fc.record({
    source: fc.constant('custom'),
    xi: fc.uniqueArray(fc.oneof(squadIds(1), squadIds(2)), { minLength: 10, maxLength: 12 }),
    bench: fc.uniqueArray(squadIds(1), { maxLength: 3 }),
    formation: fc.constantFrom('4-3-3', '4-4-2', '3-5-2', '5-5'),
  }),
);
const validSelector = fc
  .tuple(
    fc.oneof(
      fc.record({
        fixture_id: fc.oneof(
          fc.constantFrom(...Object.values(FX)),
          fc.integer({ min: 1, max: 2_147_483_647 }),
          fc.constantFrom(...Object.values(FX)).map((id) => ` ${id} `),
        ),
      }),
      fc.record(
        {
          home: fc.oneof(
            fc.constantFrom('Northbridge Athletic', 'northbridge', 'Eastfield'),
            fc.string({ minLength: 1 }),
          ),
          away: fc.oneof(
            fc.constantFrom('Southport Rovers', 'SOUTHPORT', 'Westholm City'),
            fc.string({ minLength: 1 }),
          ),
          date: fc
            .date({ min: new Date('1990-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
            .map((date) => date.toISOString().slice(0, 10)),
        },
        { requiredKeys: ['home', 'away'] },
      ),
    ),
    fc.option(fc.record({ home: validLineupSide, away: validLineupSide }, { requiredKeys: [] }), { freq: 2 }),
  )
  .map(([selector, lineups]) => (lineups ? { ...selector, lineups } : selector));

const simulationBody = fc.oneof(
  fc.tuple(validSelector, validDraws).map(([selector, n]) => ({ ...selector, draws: n, wait_seconds: 0 })),
  fc
    .tuple(partial({ ...selectorFields, draws }), waitSeconds)
    .map(([fields, wait]) => ({ ...fields, wait_seconds: wait })),
);
const batchBody = fc.oneof(
  fc
    .tuple(fc.array(validSelector, { minLength: 1, maxLength: 4 }), validDraws)
    .map(([fixtures, n]) => ({ fixtures, draws: n })),
  partial({
    fixtures: fc.oneof(
      { weight: 8, arbitrary: fc.array(fc.oneof(validSelector, partial(selectorFields)), { maxLength: 4 }) },
      { weight: 1, arbitrary: fc.constant(Array.from({ length: 1001 }, (_, i) => ({ fixture_id: i + 1 }))) },
      { weight: 1, arbitrary: anyValue },
    ),
    draws,
  }),
);

// Mostly real markets (some refused: an overround outside 1 to 1.5, the additive method at zero), and
// hostile odds and methods.
const oddsBody = fc.oneof(
  fc.record({
    odds: fc.array(fc.double({ min: 1.01, max: 40, noNaN: true }), { minLength: 2, maxLength: 6 }),
    method: fc.constantFrom(...MARGIN_METHODS),
  }),
  partial({
    odds: fc.oneof(fc.array(hostileNumber, { maxLength: 4 }), anyValue),
    method: fc.oneof(fc.constantFrom(...MARGIN_METHODS, 'basic'), anyValue),
  }),
);

const credits = fc.oneof(hostileNumber, fc.constantFrom(0.001, 0.0001, 1.0005, 12.5, 1e9, 1e10));
const limitsBody = fc.dictionary(
  fc.oneof(fc.constantFrom(...LIMIT_NAMES), hostileText),
  fc.option(hostileNumber),
  {
    maxKeys: 3,
  },
);
const orgFields = {
  name: fc.oneof(fc.constant('Fuzz org'), hostileText),
  plan: fc.oneof(fc.constantFrom('none', 'plus', 'pro', 'gold'), anyValue),
  status: fc.oneof(fc.constantFrom('active', 'suspended', 'closed'), anyValue),
  spend_cap_credits: fc.oneof(credits, fc.constant(null)),
  limits: fc.oneof(limitsBody, anyValue),
};
const keyBody = partial({
  mode: fc.oneof(fc.constantFrom('live', 'test', 'prod'), anyValue),
  scopes: fc.oneof(
    fc.array(fc.constantFrom('simulations.run', 'data.read', 'admin'), { maxLength: 3 }),
    anyValue,
  ),
  expires_at: fc.oneof(hostileInstant, fc.constant(null)),
  ip_allowlist: fc.oneof(
    fc.array(
      fc.oneof(fc.constantFrom('10.0.0.0/8', '::1', '1.2.3.4/33', '300.1.1.1'), fc.ipV4(), hostileText),
      {
        maxLength: 3,
      },
    ),
    anyValue,
  ),
});
/** A feed: the small test feed with one field made hostile, or anything at all. */
const feedText = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('teams.0.name', 'fixtures.0.kickoff', 'fixtures.1.fixture_id', 'competitions.0.season'),
      anyValue,
    )
    .map(([where, value]) => {
      const feed = smallFeed() as unknown as Record<string, Array<Record<string, unknown>>>;
      const [list, index, field] = where.split('.') as [string, string, string];
      feed[list]![Number(index)]![field] = value;
      return JSON.stringify(feed);
    }),
  anyJson.map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 60 }),
);

// ---- requests ----------------------------------------------------------------------------------------

const idempotencyKey = fc.option(
  fc.oneof(fc.stringMatching(/^[!-~]{1,40}$/), fc.constantFrom('k'.repeat(256), 'same-key', '')),
  { freq: 3 },
);

function routes(
  pools: Pools,
): Array<fc.Arbitrary<Omit<FuzzRequest, 'headers'> & { auth: 'api' | 'admin' | 'none' }>> {
  const api = (
    route: string,
    method: FuzzRequest['method'],
    url: fc.Arbitrary<string>,
    payload?: fc.Arbitrary<string>,
  ) =>
    fc.record({
      route: fc.constant(route),
      method: fc.constant(method),
      url,
      auth: fc.constant(route.startsWith('admin') ? ('admin' as const) : ('api' as const)),
      ...(payload ? { payload } : {}),
    });
  const jobIds = pools.jobs.map((job) => job.id);
  const reservations = pools.jobs.map((job) => job.reservationId);
  const listQuery = query(
    ['limit', 'from', 'to', 'competition_id', 'team_id', 'team', 'state'],
    fc
      .oneof(hostileDay, hostileNumber.map(String), hostileText, fc.constantFrom('finished', 'in_play', '50'))
      .map(urlText),
  );
  // These routes take no query: most requests send none, so that the path parameter is what is tested.
  const junkQuery = fc.option(query(['x', 'limit'], hostileText.map(urlText)), { freq: 4, nil: '' });
  return [
    api(
      'credits',
      'GET',
      junkQuery.map((q) => `/v1/credits${q}`),
    ),
    api(
      'fixtures',
      'GET',
      listQuery.map((q) => `/v1/fixtures${q}`),
    ),
    api(
      'squads',
      'GET',
      fc
        .tuple(segment(Object.values(FX).map(String)), junkQuery)
        .map(([id, q]) => `/v1/fixtures/${id}/squads${q}`),
    ),
    api(
      'expected-lineup',
      'GET',
      fc
        .tuple(segment(Object.values(FX).map(String)), junkQuery)
        .map(([id, q]) => `/v1/fixtures/${id}/expected-lineup${q}`),
    ),
    api('odds', 'POST', fc.constant('/v1/odds/implied'), body(oddsBody)),
    api('quote', 'POST', fc.constant('/v1/simulations/quote'), body(simulationBody)),
    api('simulate', 'POST', fc.constant('/v1/simulations'), body(simulationBody)),
    api('batch', 'POST', fc.constant('/v1/simulations/batch'), body(batchBody)),
    api(
      'batch-status',
      'GET',
      segment(pools.batches).map((id) => `/v1/simulations/batch/${id}`),
    ),
    api(
      'result',
      'GET',
      fc
        .tuple(
          segment(jobIds),
          fc.oneof(segment(reservations), query(['reservation_id', 'x'], segment(reservations))),
        )
        .map(([id, q]) => `/v1/simulations/jobs/${id}${q.startsWith('?') ? q : `?reservation_id=${q}`}`),
    ),
    api('admin-create-org', 'POST', fc.constant('/admin/v1/orgs'), body(partial(orgFields))),
    api(
      'admin-read-org',
      'GET',
      segment(pools.orgs).map((id) => `/admin/v1/orgs/${id}`),
    ),
    api(
      'admin-update-org',
      'PATCH',
      segment(pools.orgs).map((id) => `/admin/v1/orgs/${id}`),
      body(partial({ ...orgFields, plan_active: fc.oneof(fc.boolean(), anyValue) })),
    ),
    api(
      'admin-create-key',
      'POST',
      segment(pools.orgs).map((id) => `/admin/v1/orgs/${id}/keys`),
      body(keyBody),
    ),
    api(
      'admin-revoke-key',
      'POST',
      segment(pools.keys).map((id) => `/admin/v1/keys/${id}/revoke`),
    ),
    api(
      'admin-topup',
      'POST',
      segment(pools.orgs).map((id) => `/admin/v1/orgs/${id}/topups`),
      body(partial({ credits })),
    ),
    api('admin-feed', 'POST', fc.constant('/admin/v1/feed'), feedText),
    fc.record({
      route: fc.constant('public'),
      method: fc.constant('GET' as const),
      url: fc.constantFrom('/docs', '/openapi.json', '/healthz', '/docs?x=%00'),
      auth: fc.constant('none' as const),
    }),
    fc.record({
      route: fc.constant('unknown'),
      method: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE'),
      url: fc
        .array(fc.oneof(fc.constantFrom('v1', 'admin', 'simulations', 'fixtures', 'jobs'), segment([])), {
          minLength: 1,
          maxLength: 4,
        })
        .map((parts) => `/${parts.join('/')}`),
      auth: fc.constantFrom('api' as const, 'none' as const),
    }),
  ];
}

/** Credentials as a client would send them: mostly right, sometimes wrong, absent or the other kind. */
function withCredentials(
  pools: Pools,
  arbitrary: ReturnType<typeof routes>[number],
): fc.Arbitrary<FuzzRequest> {
  const credential = fc.oneof(
    { weight: 16, arbitrary: fc.constant('right') },
    { weight: 2, arbitrary: fc.constant('test') },
    { weight: 2, arbitrary: fc.constantFrom('none', 'wrong', 'malformed', 'other') },
  );
  const contentType = fc.oneof(
    { weight: 12, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/json; charset=latin1',
        'application/x-www-form-urlencoded',
      ),
    },
    { weight: 1, arbitrary: fc.constant(null) },
  );
  return fc
    .tuple(arbitrary, credential, contentType, idempotencyKey, fc.ipV4())
    .map(([request, kind, type, key, address]): FuzzRequest => {
      const headers: Record<string, string> = {};
      const right = request.auth === 'admin' ? pools.adminToken : pools.live;
      const secrets: Record<string, string | null> = {
        right,
        test: request.auth === 'admin' ? pools.live : pools.test,
        none: null,
        wrong: request.auth === 'admin' ? 'x'.repeat(pools.adminToken.length) : `ms_live_${'w'.repeat(40)}`,
        malformed: 'not a key',
        other: request.auth === 'admin' ? pools.live : pools.adminToken,
      };
      const secret = secrets[kind];
      if (secret) headers.authorization = `Bearer ${secret}`;
      if (request.payload !== undefined && type) headers['content-type'] = type;
      if (key !== null) headers['idempotency-key'] = key;
      // Failed authentications count per address: each wrong one comes from its own, so that the
      // right ones (from the default address) are never locked out.
      const remoteAddress =
        kind === 'right' || (kind === 'test' && request.auth === 'api') ? undefined : address;
      const { auth: _auth, ...rest } = request;
      return { ...rest, headers, ...(remoteAddress ? { remoteAddress } : {}) };
    });
}

// ---- the run -----------------------------------------------------------------------------------------

let t: TestContext;
let pools: Pools;

/** Jobs in each state the result path distinguishes, a batch, and organisations for the admin routes. */
async function makePools(): Promise<Pools> {
  const unlimited = Object.fromEntries(LIMIT_NAMES.map((name) => [name, 1_000_000_000]));
  const live = await t.newOrg({ limits: unlimited });
  const test = await t.newOrg({ mode: 'test', limits: unlimited });
  await t.operator.topUp(live.orgId, 100_000_000);
  await t.operator.updateOrg(live.orgId, { spendCapCredits: 1_000_000_000 });
  const post = (url: string, payload: object) =>
    t.app.inject({ method: 'POST', url, headers: live.auth, payload: payload as Record<string, unknown> });
  const jobs: Pools['jobs'] = [];
  for (const fixture_id of [FX.upcoming, FX.unlabelled, FX.announced]) {
    const job = (await post('/v1/simulations', { fixture_id, draws: 100, wait_seconds: 0 })).json();
    jobs.push({ id: job.job_id, reservationId: job.reservation_id });
  }
  // The worker finishes them: one is delivered (a replay), the others wait to be delivered.
  for (const job of jobs) {
    for (let i = 0; i < 400 && (await t.graph.queue.get(job.id))?.status !== 'succeeded'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  await t.stopWorker();
  const first = jobs[0]!;
  await t.app.inject({
    method: 'GET',
    url: `/v1/simulations/jobs/${first.id}?reservation_id=${first.reservationId}`,
    headers: live.auth,
  });
  const queued = (
    await post('/v1/simulations', { fixture_id: FX.upcoming, draws: 300, wait_seconds: 0 })
  ).json();
  jobs.push({ id: queued.job_id, reservationId: queued.reservation_id });
  const batch = (
    await post('/v1/simulations/batch', {
      fixtures: [{ fixture_id: FX.upcoming }, { fixture_id: 1 }],
      draws: 200,
    })
  ).json();
  const admin = await t.newOrg();
  return {
    live: live.secret,
    test: test.secret,
    adminToken: t.adminToken,
    jobs,
    batches: [batch.batch_id],
    orgs: [admin.orgId],
    keys: [admin.keyId],
  };
}

beforeAll(async () => {
  t = await createFeedTestContext({ worker: true });
  pools = await makePools();
}, 120_000);
afterAll(async () => t.close());

async function answerOf(request: FuzzRequest): Promise<LightMyRequestResponse> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${LIVENESS_BOUND_MS} ms`)),
      LIVENESS_BOUND_MS,
    );
  });
  const { route: _route, ...options } = request;
  try {
    return await Promise.race([t.app.inject(options as InjectOptions), hang]);
  } finally {
    clearTimeout(timer);
  }
}

function checkAnswer(request: FuzzRequest, response: LightMyRequestResponse): void {
  const where = `${request.method} ${request.url} → ${response.statusCode} ${response.body.slice(0, 300)}`;
  expect(response.statusCode, where).toBeLessThan(500);
  const requestId = response.headers['request-id'];
  expect(requestId, where).toMatch(/^req_[0-9A-Za-z]{24}$/);
  if (response.statusCode < 400) return;
  const parsed = errorResponseSchema.safeParse(JSON.parse(response.body));
  expect(parsed.success, where).toBe(true);
  if (response.headers['idempotent-replayed'] === 'true') {
    // A stored answer replayed byte for byte names the request that first got it (docs/api.md §4.3).
    expect(parsed.data!.error.request_id, where).toMatch(/^req_[0-9A-Za-z]{24}$/);
    expect(parsed.data!.error.request_id, where).not.toBe(requestId);
  } else {
    expect(parsed.data!.error.request_id, where).toBe(requestId);
  }
  // The database refused a value validation let through: the primitives missed something.
  expect(parsed.data!.error.message, where).not.toBe(UNSTORABLE_VALUE_MESSAGE);
}

describe(`fuzzed requests over every route (${usingServer ? 'PostgreSQL' : 'PGlite'})`, () => {
  it(`answers ${FUZZ_RUNS} hostile requests below 500, each error an error object, none hanging`, async () => {
    const perRoute = new Map<string, number>();
    const debugCounts = new Map<string, number>();
    const statuses = new Map<number, number>();
    const arbitrary = fc.oneof(...routes(pools).map((route) => withCredentials(pools, route)));
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(arbitrary, async (request) => {
        const response = await answerOf(request);
        perRoute.set(request.route, (perRoute.get(request.route) ?? 0) + 1);
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        if (process.env.FUZZ_DEBUG) {
          const code = response.statusCode >= 400 ? JSON.parse(response.body).error.code : '';
          const key = `${request.route} ${response.statusCode} ${code}`;
          debugCounts.set(key, (debugCounts.get(key) ?? 0) + 1);
        }
        checkAnswer(request, response);
      }),
      {
        numRuns: FUZZ_RUNS,
        ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}),
      },
    );
    const seconds = (performance.now() - started) / 1000;
    const requests = [...perRoute.values()].reduce((sum, n) => sum + n, 0);
    console.info(
      `fuzz (${usingServer ? 'PostgreSQL' : 'PGlite'}): ${requests} requests in ${seconds.toFixed(1)} s; ` +
        `statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    if (process.env.FUZZ_DEBUG)
      console.info(
        [...debugCounts]
          .sort()
          .map(([k, n]) => `${k}: ${n}`)
          .join('\n'),
      );
    // Every route was exercised, not only the cheapest.
    expect([...perRoute.keys()].sort()).toEqual(
      [
        'credits',
        'fixtures',
        'squads',
        'expected-lineup',
        'odds',
        'quote',
        'simulate',
        'batch',
        'batch-status',
        'result',
        'admin-create-org',
        'admin-read-org',
        'admin-update-org',
        'admin-create-key',
        'admin-revoke-key',
        'admin-topup',
        'admin-feed',
        'public',
        'unknown',
      ].sort(),
    );
    for (const [route, count] of perRoute) expect(count, route).toBeGreaterThan(FUZZ_RUNS / 100);
    // Whatever moved, the ledger still balances for every organisation.
    expect(await t.services.ledger.findUnbalancedAccounts()).toEqual([]);
  }, 600_000);
});
