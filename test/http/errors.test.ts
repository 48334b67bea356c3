import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ERRORS, type ErrorCode, errorBody, errorType } from '../../src/errors.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

const SPEC_CODES = [
  'parameter_invalid',
  'webhook_url_refused',
  'webhook_endpoints_exceeded',
  'parameter_missing',
  'fixture_not_covered',
  'lineup_invalid',
  'player_not_in_squad',
  'market_unreachable',
  'invalid_api_key',
  'key_revoked',
  'key_expired',
  'balance_too_low',
  'scope_missing',
  'tier_restricted',
  'org_suspended',
  'ip_not_allowed',
  'fixture_not_found',
  'resource_missing',
  'simulation_cancelled',
  'fixture_ambiguous',
  'idempotency_conflict',
  'reservation_expired',
  'lineups_not_announced',
  'rate_limited',
  'concurrency_limited',
  'loop_guard',
  'lineup_cooldown',
  'simulation_failed',
  'internal_error',
  'payload_missing',
  'provenance_missing',
  'provenance_mismatch',
  'fixture_lookup_incomplete',
  'settlement_unknown',
  'dependency_unavailable',
  'engine_cold_start',
  'engine_overloaded',
  'engine_unavailable',
  'storage_unavailable',
  'refreshing',
  'capability_off',
  'capability_disabled',
  'maintenance',
  // "additional codes" of docs/api.md §7
  'coverage_unavailable',
  'lever_unsupported',
  'max_credits_exceeded',
  'ambiguous_team',
  'connector_sign_in_required',
  'retrieval_required',
  'email_unverified',
  'email_conflict',
  'not_found',
  'data_stale',
  // added by the service (docs/api.md §7): a batch with no runnable item, and the HTTP layer's own limits
  'batch_rejected',
  'request_timeout',
  'request_headers_too_large',
  'response_timeout',
  // season projections (docs/api.md §4.12)
  'competition_not_covered',
  'competition_not_found',
  'competition_inputs_missing',
  'projection_failed',
];

const SPEC_STATUS: Record<string, number> = {
  competition_not_covered: 400,
  competition_not_found: 404,
  competition_inputs_missing: 409,
  projection_failed: 500,
  parameter_invalid: 400,
  webhook_url_refused: 400,
  webhook_endpoints_exceeded: 409,
  parameter_missing: 400,
  fixture_not_covered: 400,
  lineup_invalid: 400,
  player_not_in_squad: 400,
  market_unreachable: 400,
  invalid_api_key: 401,
  key_revoked: 401,
  key_expired: 401,
  balance_too_low: 402,
  scope_missing: 403,
  tier_restricted: 403,
  org_suspended: 403,
  ip_not_allowed: 403,
  fixture_not_found: 404,
  resource_missing: 404,
  fixture_ambiguous: 409,
  idempotency_conflict: 409,
  reservation_expired: 409,
  simulation_cancelled: 409,
  lineups_not_announced: 409,
  rate_limited: 429,
  concurrency_limited: 429,
  loop_guard: 429,
  lineup_cooldown: 429,
  simulation_failed: 500,
  internal_error: 500,
  payload_missing: 500,
  provenance_missing: 502,
  provenance_mismatch: 502,
  fixture_lookup_incomplete: 503,
  settlement_unknown: 503,
  dependency_unavailable: 503,
  engine_cold_start: 503,
  engine_overloaded: 503,
  engine_unavailable: 503,
  storage_unavailable: 503,
  refreshing: 503,
  capability_off: 503,
  capability_disabled: 503,
  maintenance: 503,
  batch_rejected: 400,
  request_timeout: 408,
  request_headers_too_large: 431,
  response_timeout: 503,
};

describe('the error table', () => {
  it('holds every code of docs/api.md §7, with its status there', () => {
    expect(Object.keys(ERRORS).sort()).toEqual([...SPEC_CODES].sort());
    for (const [code, status] of Object.entries(SPEC_STATUS))
      expect(ERRORS[code as ErrorCode].status, code).toBe(status);
  });

  it.each(SPEC_CODES)('%s has the error object of docs/api.md §7 and docs/decisions.md §9', (code) => {
    const body = errorBody(new ApiError(code as ErrorCode), {
      requestId: 'req_1',
      docsUrl: 'https://d.example/docs',
    });
    const e = body.error;
    expect(e.code).toBe(code);
    expect(e.type).toBe(errorType(ERRORS[code as ErrorCode].status));
    expect(e.message.length).toBeGreaterThan(0);
    expect(e.param).toBeNull();
    expect(e.doc_url).toBe(`https://d.example/docs#${code}`);
    expect(e.request_id).toBe('req_1');
    expect(typeof e.retry.retryable).toBe('boolean');
    expect(['correct_request', 'backoff_with_jitter', 'wait_for_change']).toContain(e.retry.strategy);
    expect(['same', 'new', 'not_applicable']).toContain(e.retry.idempotency_key);
    expect(e.credit_effect).toBe(code === 'settlement_unknown' ? 'unknown' : 'not_charged');
    expect(e.recovery).toBeNull();
  });

  it('maps statuses to the types of docs/decisions.md §9', () => {
    expect([400, 401, 402, 403, 404, 408, 409, 431, 429, 500, 502, 503].map(errorType)).toEqual([
      'invalid_request_error',
      'authentication_error',
      'billing_error',
      'permission_error',
      'not_found_error',
      'invalid_request_error',
      'conflict_error',
      'invalid_request_error',
      'rate_limit_error',
      'api_error',
      'api_error',
      'service_unavailable_error',
    ]);
  });

  it('matches the example of docs/api.md §7 for a limit of 0', () => {
    const e = errorBody(new ApiError('parameter_invalid', { param: 'limit' }), {
      requestId: 'r',
      docsUrl: 'x',
    }).error;
    expect(e).toMatchObject({
      code: 'parameter_invalid',
      param: 'limit',
      retry: { strategy: 'correct_request', idempotency_key: 'not_applicable' },
      credit_effect: 'not_charged',
      recovery: null,
    });
  });
});

describe('errors over HTTP', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext();
  });
  afterAll(async () => t.close());

  it('answers unknown routes with 404 resource_missing and a Request-Id', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/nothing-here' });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('resource_missing');
    expect(response.headers['request-id']).toMatch(/^req_[0-9A-Za-z]{24}$/);
    expect(response.json().error.request_id).toBe(response.headers['request-id']);
  });

  it('logs an unknown route with the path asked for (its query left out), not only as unmatched', async () => {
    t.app.log.level = 'info'; // the test app logs errors only; its request loggers follow this level
    const response = await t.app.inject({ method: 'GET', url: '/v1/nothing-here/either?secret=1' });
    t.app.log.level = 'error';
    expect(response.statusCode).toBe(404);
    const lines = t.serverErrors(String(response.headers['request-id'])).map((line) => JSON.parse(line));
    expect(lines.find((line) => line.msg === 'request')).toMatchObject({
      route: 'unmatched',
      path: '/v1/nothing-here/either',
      status: 404,
    });
  });

  it('sends a distinct Request-Id on every response, successes included', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/healthz' });
    const b = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(a.statusCode).toBe(200);
    expect(a.headers['request-id']).toMatch(/^req_/);
    expect(a.headers['request-id']).not.toBe(b.headers['request-id']);
  });

  it('refuses malformed JSON, a wrong content type, unknown fields and bodies over 1 MiB', async () => {
    const org = await t.newOrg();
    const headers = { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' };
    const bad = await t.app.inject({ method: 'POST', url: '/admin/v1/orgs', headers, payload: '{"name":' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('parameter_invalid');
    const text = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/orgs',
      headers: { ...headers, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(400);
    expect(text.json().error.param).toBe('Content-Type');
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/orgs',
      headers,
      payload: { name: 'x', plan: 'pro', colour: 'red' },
    });
    expect(unknown.json().error).toMatchObject({ code: 'parameter_invalid', param: 'colour' });
    const missing = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/orgs',
      headers,
      payload: { name: 'x' },
    });
    expect(missing.json().error).toMatchObject({ code: 'parameter_missing', param: 'plan' });
    const wrongType = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/orgs/${org.orgId}/keys`,
      headers,
      payload: { mode: 'live', scopes: ['data.read', 7] },
    });
    expect(wrongType.json().error).toMatchObject({ code: 'parameter_invalid', param: 'scopes.1' });
    const huge = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/orgs',
      headers,
      payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), plan: 'pro' }),
    });
    expect(huge.statusCode).toBe(400);
    expect(huge.json().error.code).toBe('parameter_invalid');
  });

  it('serves a docs page with an anchor for every code, and the OpenAPI document', async () => {
    const docs = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(docs.statusCode).toBe(200);
    for (const code of SPEC_CODES) expect(docs.body).toContain(`id="${code}"`);
    expect(docs.body).toContain('GET /v1/credits');
    // Calls that charge or hold credits are marked; reads that never charge are not.
    const operation = (id: string) => new RegExp(`<li id="op-${id}">.*?</li>`).exec(docs.body)?.[0] ?? '';
    for (const id of ['getExpectedLineup', 'runSimulation', 'createBatch', 'runProjection'])
      expect(operation(id), id).toContain('charges credits (live keys)');
    for (const id of ['getCreditBalance', 'listFixtures', 'quoteSimulation'])
      expect(operation(id), id).not.toContain('charges credits');
    const openapi = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(openapi.info.version).toBe('2.0.0');
    expect(openapi.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(openapi.security).toEqual([{ ApiKeyAuth: [] }]);
    expect(openapi.paths['/v1/credits'].get.responses['200']).toBeDefined();
  });

  it('counts requests by route and status, with latency, in the metrics behind the admin token', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' });
    const refused = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(refused.statusCode).toBe(401);
    const metrics = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${t.adminToken}` },
    });
    expect(metrics.headers['content-type']).toContain('text/plain');
    expect(metrics.body).toMatch(
      /matchsim_http_requests_total\{route="\/healthz",method="GET",status="200"\} \d+/,
    );
    expect(metrics.body).toMatch(
      /matchsim_http_request_duration_seconds_bucket\{le="\+Inf",route="\/healthz",method="GET"\} \d+/,
    );
    expect(metrics.body).toContain('matchsim_credits_charged_total');
  });
});
