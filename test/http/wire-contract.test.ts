// The check every HTTP test runs on the responses it receives (test/helpers/wire-contract.ts) refuses
// what breaks /openapi.json: an undeclared status, a body off its schema, a non-JSON body, an unknown
// route without the error object. Real responses of the running app pass it.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/app.js';
import { WireContract } from '../helpers/wire-contract.js';

let t: TestContext;
let contract: WireContract;

beforeAll(async () => {
  t = await createTestContext();
  contract = new WireContract((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json());
});
afterAll(() => t.close());

function response(statusCode: number, body: unknown, type = 'application/json; charset=utf-8') {
  return {
    statusCode,
    headers: { 'content-type': type },
    body: JSON.stringify(body),
    json: () => body,
  } as unknown as LightMyRequestResponse;
}

describe('the wire contract check', () => {
  it('passes a real response and names the route it matched', async () => {
    const { auth } = await t.newOrg();
    const real = await t.app.inject({ method: 'GET', url: '/v1/credits', headers: auth });
    expect(real.statusCode).toBe(200);
    expect(contract.check('GET', '/v1/credits', real)).toBe('/v1/credits');
    const missing = await t.app.inject({
      method: 'GET',
      url: '/v1/simulations/batch/batch_nope',
      headers: auth,
    });
    expect(contract.check('GET', '/v1/simulations/batch/batch_nope', missing)).toBe(
      '/v1/simulations/batch/{batch_id}',
    );
  });

  it('refuses a body that breaks its schema', async () => {
    const { auth } = await t.newOrg();
    const body = (await t.app.inject({ method: 'GET', url: '/v1/credits', headers: auth })).json();
    expect(() => contract.check('GET', '/v1/credits', response(200, { ...body, total: 'many' }))).toThrow(
      /breaks its OpenAPI schema/,
    );
    expect(() => contract.check('GET', '/v1/credits', response(200, { object: 'credit_balance' }))).toThrow(
      /breaks its OpenAPI schema/,
    );
  });

  it('refuses a status the route does not declare, and a body that is not JSON', () => {
    expect(() => contract.check('GET', '/v1/credits', response(302, {}))).toThrow(/does not declare/);
    expect(() => contract.check('GET', '/v1/credits', response(200, {}, 'text/html'))).toThrow(
      /declares JSON/,
    );
  });

  it('refuses an error without the error object, on a route and off one', () => {
    expect(() => contract.check('GET', '/v1/credits', response(500, { message: 'boom' }))).toThrow(
      /breaks its OpenAPI schema/,
    );
    expect(() => contract.check('GET', '/v1/nowhere', response(404, { statusCode: 404 }))).toThrow(
      /error object/,
    );
  });

  it('resolves dot segments as inject does: /v1/fixtures/./squads reaches no route', async () => {
    const { auth } = await t.newOrg();
    const dotted = await t.app.inject({ method: 'GET', url: '/v1/fixtures/./squads', headers: auth });
    expect(dotted.statusCode).toBe(404);
    expect(contract.check('GET', '/v1/fixtures/./squads', dotted)).toBeNull();
    expect(contract.check('GET', '/v1/simulations/batch/x/../batch_nope', dotted)).toBe(
      '/v1/simulations/batch/{batch_id}',
    );
  });
});

describe('the wire contract check of error codes', () => {
  it('refuses an error whose code its route does not document for that status', async () => {
    const { auth } = await t.newOrg();
    const real = await t.app.inject({ method: 'GET', url: '/v1/fixtures?limit=0', headers: auth });
    expect(contract.check('GET', '/v1/fixtures', real)).toBe('/v1/fixtures');
    const body = real.json();
    const undocumented = { error: { ...body.error, code: 'fixture_ambiguous' } };
    expect(() => contract.check('GET', '/v1/fixtures', response(400, undocumented))).toThrow(
      /400 fixture_ambiguous, which its OpenAPI does not list/,
    );
  });
});
