// The hostile inputs an adversarial run found answering 500 (issue 17), each as a test on both back ends:
// input that PostgreSQL cannot store is refused by the request schemas as a 400 naming its parameter
// (src/http/schemas/primitives.ts), and a batch whose every item is rejected is a 400 that carries each
// item's error, holding and counting nothing (docs/api.md §4.5).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FX, smallFeed } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

let t: TestContext;
let auth: { authorization: string };
let orgId: string;
let admin: { authorization: string };

beforeAll(async () => {
  t = await createFeedTestContext();
  ({ auth, orgId } = await t.newOrg());
  admin = { authorization: `Bearer ${t.adminToken}` };
});
afterAll(async () => t.close());

async function refused(
  request: { method: 'GET' | 'POST' | 'PATCH'; url: string; payload?: unknown; headers?: Json },
  param: string | null,
  code = 'parameter_invalid',
) {
  const response = await t.app.inject({
    method: request.method,
    url: request.url,
    headers: request.headers ?? auth,
    ...(request.payload === undefined ? {} : { payload: request.payload as Json }),
  });
  expect(response.statusCode, `${request.method} ${request.url}: ${response.body}`).toBe(400);
  const error = response.json().error;
  expect(error.code).toBe(code);
  expect(error.param).toBe(param);
  expect(error.request_id).toBe(response.headers['request-id']);
  return error;
}

describe('a batch whose every item is rejected', () => {
  it('answers 400 batch_rejected with each item error; no batch, no hold, nothing counted', async () => {
    const org = await t.newOrg();
    const body = {
      fixtures: [{ fixture_id: 1 }, { fixture_id: FX.uncovered }, { home: 'Nobody' }],
      draws: 100,
    };
    const error = await refused(
      { method: 'POST', url: '/v1/simulations/batch', payload: body, headers: org.auth },
      'fixtures',
      'batch_rejected',
    );
    expect(error.recovery.items).toEqual([
      expect.objectContaining({
        index: 0,
        fixture: 1,
        error: expect.objectContaining({ code: 'fixture_not_found' }),
      }),
      expect.objectContaining({
        index: 1,
        fixture: FX.uncovered,
        error: expect.objectContaining({
          code: 'fixture_not_covered',
          doc_url: expect.stringMatching(/#fixture_not_covered$/),
        }),
      }),
      expect.objectContaining({
        index: 2,
        fixture: null,
        error: expect.objectContaining({ code: 'parameter_missing', param: 'fixtures.2.away' }),
      }),
    ]);
    expect(error.retry).toMatchObject({ retryable: false, idempotency_key: 'new' });
    const [batches] = await t.db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM batches WHERE org_id = ${org.orgId}`;
    const [usage] = await t.db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM usage_days WHERE org_id = ${org.orgId}`;
    expect([batches!.n, usage!.n]).toEqual([0, 0]);
    expect(await t.services.ledger.balance(org.orgId)).toMatchObject({ held: 0, spentThisMonth: 0 });
    expect((await t.services.ledger.checkBalanced(org.orgId)).balanced).toBe(true);
  });

  it('is stored and replayed under its Idempotency-Key like any 4xx', async () => {
    const headers = { ...auth, 'idempotency-key': 'all-rejected' };
    const payload = { fixtures: [{ fixture_id: 2 }], draws: 100 };
    const first = await t.app.inject({ method: 'POST', url: '/v1/simulations/batch', headers, payload });
    const again = await t.app.inject({ method: 'POST', url: '/v1/simulations/batch', headers, payload });
    expect(first.statusCode).toBe(400);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
  });
});

describe('NUL characters and unpaired surrogates', () => {
  it('are refused in bodies, query strings and paths', async () => {
    await refused(
      { method: 'POST', url: '/v1/simulations/quote', payload: { home: '\u0000', away: 'x' } },
      'home',
    );
    await refused(
      { method: 'POST', url: '/v1/simulations/quote', payload: { home: 'x', away: 'a\ud800' } },
      'away',
    );
    await refused(
      {
        method: 'POST',
        url: '/v1/simulations',
        payload: { home: 'Northbridge', away: 'x\u0000', wait_seconds: 0 },
      },
      'away',
    );
    await refused(
      {
        method: 'POST',
        url: '/v1/simulations/batch',
        payload: { fixtures: [{ home: 'a\u0000b', away: 'c' }] },
      },
      'fixtures.0.home',
    );
    await refused(
      {
        method: 'POST',
        url: '/v1/simulations/quote',
        payload: {
          fixture_id: FX.upcoming,
          lineups: { home: { source: 'custom', xi: [1], formation: '4\u00004' } },
        },
      },
      'lineups.home.formation',
    );
    await refused({ method: 'GET', url: '/v1/fixtures?team=%00' }, 'team');
    await refused({ method: 'GET', url: '/v1/simulations/batch/%00' }, 'batch_id');
    await refused({ method: 'GET', url: '/v1/simulations/jobs/%00?reservation_id=res_1' }, 'job_id');
    await refused({ method: 'GET', url: '/v1/simulations/jobs/job_1?reservation_id=%00' }, 'reservation_id');
  });

  it('are refused in the admin API and in a feed', async () => {
    await refused(
      { method: 'POST', url: '/admin/v1/orgs', headers: admin, payload: { name: 'a\u0000', plan: 'pro' } },
      'name',
    );
    await refused(
      { method: 'PATCH', url: `/admin/v1/orgs/${orgId}`, headers: admin, payload: { name: '\u0000' } },
      'name',
    );
    await refused(
      {
        method: 'POST',
        url: `/admin/v1/orgs/${orgId}/keys`,
        headers: admin,
        payload: { mode: 'live', ip_allowlist: ['\u0000'] },
      },
      'ip_allowlist.0',
    );
    const feed = smallFeed();
    feed.teams[0]!.name = 'North\u0000bridge';
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/feed',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify(feed),
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error.message).toContain('teams');
  });
});

describe('ids beyond int4', () => {
  it('are refused in bodies as numbers and as digits, and in paths and queries', async () => {
    for (const fixture_id of [2_147_483_648, '2147483648', '99999999999', 0, -1]) {
      await refused({ method: 'POST', url: '/v1/simulations/quote', payload: { fixture_id } }, 'fixture_id');
    }
    await refused(
      { method: 'POST', url: '/v1/simulations', payload: { fixture_id: 3e9, wait_seconds: 0 } },
      'fixture_id',
    );
    await refused(
      {
        method: 'POST',
        url: '/v1/simulations/batch',
        payload: { fixtures: [{ fixture_id: 2_147_483_648 }], draws: 100 },
      },
      'fixtures.0.fixture_id',
    );
    await refused(
      {
        method: 'POST',
        url: '/v1/simulations/quote',
        payload: { fixture_id: FX.upcoming, lineups: { home: { source: 'custom', xi: [2_147_483_648] } } },
      },
      'lineups.home.xi.0',
    );
    await refused({ method: 'GET', url: '/v1/fixtures/2147483648/squads' }, 'fixture_id');
    await refused({ method: 'GET', url: '/v1/fixtures?team_id=2147483648' }, 'team_id');
    const largest = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations/quote',
      headers: auth,
      payload: { fixture_id: 2_147_483_647 },
    });
    expect(largest.statusCode).toBe(404);
    expect(largest.json().error.code).toBe('fixture_not_found');
  });
});

describe('dates outside 1900-01-01 to 2199-12-31', () => {
  it('are refused in the fixture list window and in a lookup date', async () => {
    await refused({ method: 'GET', url: '/v1/fixtures?from=0000-01-01' }, 'from');
    await refused({ method: 'GET', url: '/v1/fixtures?to=9999-12-31' }, 'to');
    await refused({ method: 'GET', url: '/v1/fixtures?from=9999-12-25&to=9999-12-31' }, 'from');
    for (const date of ['0000-01-01', '9999-12-31', '1899-12-31', '2200-01-01']) {
      await refused(
        { method: 'POST', url: '/v1/simulations/quote', payload: { home: 'a', away: 'b', date } },
        'date',
      );
    }
    const earliest = await t.app.inject({
      method: 'GET',
      url: '/v1/fixtures?from=1900-01-01',
      headers: auth,
    });
    expect(earliest.statusCode).toBe(200);
    expect(earliest.json().data).toEqual([]);
    const latest = await t.app.inject({
      method: 'GET',
      url: '/v1/fixtures?from=2199-12-01&to=2199-12-31',
      headers: auth,
    });
    expect(latest.statusCode).toBe(200);
  });

  it('are refused in an API key expiry and in a feed', async () => {
    for (const expires_at of ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z']) {
      await refused(
        {
          method: 'POST',
          url: `/admin/v1/orgs/${orgId}/keys`,
          headers: admin,
          payload: { mode: 'live', expires_at },
        },
        'expires_at',
      );
    }
    const feed = smallFeed();
    feed.fixtures[0]!.kickoff = '0000-01-01T00:00:00Z';
    await expect(t.loadFeed(feed)).rejects.toMatchObject({ code: 'parameter_invalid' });
  });
});

describe('admin credit amounts', () => {
  it('must be whole milli-credits as written: 5e-324 and 0.0001 are refused, 0.001 is one milli-credit', async () => {
    const org = await t.newOrg();
    const topUp = (credits: number) =>
      t.app.inject({
        method: 'POST',
        url: `/admin/v1/orgs/${org.orgId}/topups`,
        headers: admin,
        payload: { credits },
      });
    for (const credits of [5e-324, 0.0001, 1.0005, 0, -1, 1e10]) {
      const response = await topUp(credits);
      expect(response.statusCode, `${credits}: ${response.body}`).toBe(400);
      expect(response.json().error.param).toBe('credits');
    }
    const smallest = await topUp(0.001);
    expect(smallest.statusCode, smallest.body).toBe(201);
    expect((await t.services.ledger.balance(org.orgId)).topupRemaining).toBe(1);
    await refused(
      {
        method: 'PATCH',
        url: `/admin/v1/orgs/${org.orgId}`,
        headers: admin,
        payload: { spend_cap_credits: 1e-7 },
      },
      'spend_cap_credits',
    );
    await refused(
      {
        method: 'PATCH',
        url: `/admin/v1/orgs/${org.orgId}`,
        headers: admin,
        payload: { limits: { data_rpm: 1e12 } },
      },
      'limits.data_rpm',
    );
  });
});

describe('bodies nested 12,000 and 100,000 levels deep (issue 33, item 7)', () => {
  it('are refused with 400 by the route schemas, in a known field and an unknown one', async () => {
    for (const depth of [12_000, 100_000]) {
      const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const headers = { ...auth, 'content-type': 'application/json' };
      for (const payload of [
        `{"fixture_id": ${nested}, "draws": 1000}`,
        `{"fixture_id": 1, "deep": ${nested}}`,
      ]) {
        const response = await t.app.inject({
          method: 'POST',
          url: '/v1/simulations/quote',
          headers,
          payload,
        });
        expect(response.statusCode, response.body.slice(0, 300)).toBe(400);
        expect(response.json().error.code).toBe('parameter_invalid');
      }
    }
  });
});
