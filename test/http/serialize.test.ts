// The compiled serializer of hot response schemas (src/http/serialize.ts) writes the bytes the zod
// serializer would, and still refuses a body that does not fit.
import { describe, expect, it } from 'vitest';
import { creditBalanceSchema } from '../../src/http/routes/credits.js';
import { responseSerializerCompiler } from '../../src/http/serialize.js';
import { createTestContext } from '../helpers/app.js';

const compile = (schema: unknown) =>
  responseSerializerCompiler({ schema, method: 'GET', url: '/v1/credits', httpStatus: '200' } as never);

const balance = {
  object: 'credit_balance',
  livemode: true,
  total: 112.345,
  usage_tier: 1,
  plan: 'plus',
  held: 0.001,
  monthly: { remaining: 100, allowance: 100, resets_at: '2026-12-01T00:00:00.000Z' },
  topup: { remaining: 12.345 },
  limits: {
    data_rpm: 600,
    simulations_rpm: 5,
    concurrent_simulations: 4,
    batches_per_day: 20,
    submissions_per_day: 5000,
    gpu_seconds_per_day: 3600,
  },
  spend_cap: { credits: 25000, spent_this_month: 0 },
};

describe('compiled response serializer', () => {
  it('writes what the zod schema writes, fields in schema order, unknown fields left out', () => {
    const serialize = compile(creditBalanceSchema);
    const reordered = { ...balance, extra: 'not on the wire', object: 'credit_balance' };
    expect(serialize(reordered)).toBe(JSON.stringify(creditBalanceSchema.parse(balance)));
  });

  it('refuses a body without a required field, or with a number that is not finite', () => {
    const serialize = compile(creditBalanceSchema);
    const { held: _held, ...missing } = balance;
    expect(() => serialize(missing)).toThrow(/held/);
    expect(() => serialize({ ...balance, total: Number.NaN })).toThrow();
  });

  it('GET /v1/credits sends exactly the zod serialisation of what it sends', async () => {
    const t = await createTestContext();
    try {
      const { auth } = await t.newOrg({ plan: 'pro' });
      const response = await t.app.inject({ method: 'GET', url: '/v1/credits', headers: auth });
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe(JSON.stringify(creditBalanceSchema.parse(response.json())));
    } finally {
      await t.close();
    }
  });
});
