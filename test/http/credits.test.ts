import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_TERMS } from '../../src/limits/plans.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

const get = (auth: Record<string, string>) =>
  t.app.inject({ method: 'GET', url: '/v1/credits', headers: auth });

describe('GET /v1/credits', () => {
  it('has the shape of docs/api.md §2.1 with the Pro numbers of docs/decisions.md §3', async () => {
    const { auth } = await t.newOrg({ plan: 'pro' });
    const response = await get(auth);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      object: 'credit_balance',
      livemode: true,
      total: 2500,
      usage_tier: 2,
      monthly: { remaining: 2500 },
      topup: { remaining: 0 },
      limits: { data_rpm: 600, simulations_rpm: 300, concurrent_simulations: 16, batches_per_day: 200 },
      spend_cap: { credits: 25000 },
    });
    for (const field of ['total', 'usage_tier']) expect(typeof body[field]).toBe('number');
  });

  it('reports Plus numbers, top-ups and operator overrides', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus', limits: { simulations_rpm: 5 } });
    await t.operator.topUp(orgId, 12.345);
    const body = (await get(auth)).json();
    expect(body.usage_tier).toBe(PLAN_TERMS.plus.usageTier);
    expect(body.total).toBe(112.345);
    expect(body.monthly.remaining).toBe(100);
    expect(body.topup.remaining).toBe(12.345);
    expect(body.limits).toMatchObject({
      data_rpm: 60,
      simulations_rpm: 5,
      concurrent_simulations: 4,
      batches_per_day: 20,
    });
    expect(body.spend_cap.credits).toBe(1000);
  });

  it('subtracts active holds from the available total', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    await t.services.ledger.reserve(orgId, 30_500, { requestId: 'req_test' });
    const body = (await get(auth)).json();
    expect(body.total).toBe(69.5);
    expect(body.held).toBe(30.5);
  });

  it('limits reads per minute per organisation (data_rpm) with a 429 carrying Retry-After', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus', limits: { data_rpm: 3 } });
    for (let i = 0; i < 3; i++) expect((await get(auth)).statusCode).toBe(200);
    const limited = await get(auth);
    expect(limited.statusCode).toBe(429);
    const error = limited.json().error;
    expect(error).toMatchObject({ code: 'rate_limited', rule: 'data_rpm', type: 'rate_limit_error' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(error.retry.after_seconds).toBe(Number(limited.headers['retry-after']));
    expect(error.retryAfterMs).toBe(error.retry.after_seconds * 1000);
    // A second key of the same organisation shares the limit; another organisation does not.
    const second = await t.operator.createKey({ orgId, mode: 'live' });
    expect((await get({ authorization: `Bearer ${second.secret}` })).statusCode).toBe(429);
    const other = await t.newOrg({ plan: 'plus' });
    expect((await get(other.auth)).statusCode).toBe(200);
  });
});
