// POST /v1/odds/implied (docs/api.md §4.13) over the real app: the answer for the worked example, every
// method, refusals naming the field, the data.read scope, the data_rpm group and no charge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARGIN_METHODS, removeMargin } from '../../src/market/margin-removal.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

const implied = (auth: Record<string, string>, body: unknown) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/odds/implied',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function refused(auth: Record<string, string>, body: unknown, code: string, param: string) {
  const response = await implied(auth, body);
  expect(response.statusCode).toBe(400);
  const { error } = response.json();
  expect(error).toMatchObject({ code, param });
  return error as { message: string };
}

describe('POST /v1/odds/implied', () => {
  it("answers the worked example of docs/api.md with Shin's method by default", async () => {
    const { auth } = await t.newOrg();
    const response = await implied(auth, { odds: [2.1, 3.4, 3.6] });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ object: 'implied_probabilities', method: 'shin', odds: [2.1, 3.4, 3.6] });
    expect(body.probabilities.map((p: number) => p.toFixed(4))).toEqual(['0.4587', '0.2787', '0.2626']);
    expect(body.fair_odds.map((o: number) => o.toFixed(3))).toEqual(['2.180', '3.588', '3.808']);
    expect(body.overround).toBeCloseTo(1.048086, 6);
    expect(body.margin).toBeCloseTo(0.048086, 6);
    expect(body.parameter.name).toBe('z');
    expect(body.parameter.value).toBeCloseTo(0.024083, 6);
  });

  it('answers every method as the domain function does, its parameter named', async () => {
    const { auth } = await t.newOrg();
    const names = { multiplicative: null, additive: 'subtracted', power: 'k', shin: 'z', odds_ratio: 'c' };
    for (const method of MARGIN_METHODS) {
      const body = (await implied(auth, { odds: [1.9, 3.5, 4.5], method })).json();
      const expected = removeMargin([1.9, 3.5, 4.5], method);
      expect(body.method).toBe(method);
      expect(body.probabilities).toEqual(expected.probabilities);
      expect(Math.abs(body.probabilities.reduce((a: number, b: number) => a + b, 0) - 1)).toBeLessThan(1e-12);
      expect(body.parameter?.name ?? null).toBe(names[method]);
    }
  });

  it('refuses odds no market has with 400 naming the field and why', async () => {
    const { auth } = await t.newOrg();
    expect((await refused(auth, { odds: [2.1, 1.0, 3.6] }, 'parameter_invalid', 'odds.1')).message).toContain(
      'greater than 1.0',
    );
    await refused(auth, { odds: [2.1, -3, 3.6] }, 'parameter_invalid', 'odds.1');
    expect((await refused(auth, { odds: [2.1] }, 'parameter_invalid', 'odds')).message).toContain(
      'at least 2',
    );
    await refused(auth, { odds: [] }, 'parameter_invalid', 'odds');
    // 1e999 is valid JSON that parses to Infinity.
    await refused(auth, '{"odds": [2.1, 1e999, 3.6]}', 'parameter_invalid', 'odds.1');
    await refused(auth, { odds: [2.1, '3.4', 3.6] }, 'parameter_invalid', 'odds.1');
    await refused(auth, { odds: [2.1, null, 3.6] }, 'parameter_invalid', 'odds.1');
    expect((await refused(auth, { odds: [2.4, 3.6, 4.0] }, 'parameter_invalid', 'odds')).message).toContain(
      'below 1',
    );
    expect((await refused(auth, { odds: [1.1, 1.6] }, 'parameter_invalid', 'odds')).message).toContain(
      'above 1.5',
    );
    const negative = await refused(
      auth,
      { odds: [1.02, 21, 151], method: 'additive' },
      'parameter_invalid',
      'odds.2',
    );
    expect(negative.message).toContain('additive');
    await refused(auth, { odds: [2.1, 3.4, 3.6], method: 'basic' }, 'parameter_invalid', 'method');
    await refused(auth, { odds: [2.1, 3.4, 3.6], margin: 0.05 }, 'parameter_invalid', 'margin');
    await refused(auth, { method: 'shin' }, 'parameter_missing', 'odds');
  });

  it('needs the data.read scope', async () => {
    const { auth } = await t.newOrg({ scopes: ['simulations.run'] });
    const response = await implied(auth, { odds: [2.1, 3.4, 3.6] });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('scope_missing');
    const reader = await t.newOrg({ scopes: ['data.read'] });
    expect((await implied(reader.auth, { odds: [2.1, 3.4, 3.6] })).statusCode).toBe(200);
  });

  it('counts against data_rpm, not simulations_rpm', async () => {
    const { auth } = await t.newOrg({ limits: { data_rpm: 2, simulations_rpm: 1 } });
    for (let i = 0; i < 2; i++) expect((await implied(auth, { odds: [2.1, 3.4, 3.6] })).statusCode).toBe(200);
    const limited = await implied(auth, { odds: [2.1, 3.4, 3.6] });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toMatchObject({ code: 'rate_limited', rule: 'data_rpm' });
  });

  it('charges nothing and holds nothing, for live and test keys alike', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const balance = async () =>
      (await t.app.inject({ method: 'GET', url: '/v1/credits', headers: auth })).json();
    const ledgerRows = async () =>
      Number((await t.db.sql`SELECT count(*) AS n FROM credit_ledger WHERE org_id = ${orgId}`)[0]!.n);
    const before = await balance();
    const rowsBefore = await ledgerRows();
    for (const method of MARGIN_METHODS) {
      expect((await implied(auth, { odds: [2.1, 3.4, 3.6], method })).statusCode).toBe(200);
    }
    const test = await t.operator.createKey({ orgId, mode: 'test' });
    const testAuth = { authorization: `Bearer ${test.secret}` };
    const live = (await implied(auth, { odds: [2.1, 3.4, 3.6] })).json();
    expect((await implied(testAuth, { odds: [2.1, 3.4, 3.6] })).json()).toEqual(live);
    const after = await balance();
    expect(after.total).toBe(before.total);
    expect(after.held ?? 0).toBe(before.held ?? 0);
    expect(await ledgerRows()).toBe(rowsBefore);
  });
});
