import { describe, expect, it } from 'vitest';
import { limitsFor, monthlyAllowanceMilli, PLAN_TERMS, spendCapMilli } from '../../src/limits/plans.js';

describe('plan terms', () => {
  it('holds the numbers of docs/api.md §8 and docs/decisions.md §3 (lane weights: §6 Fair shares)', () => {
    expect(PLAN_TERMS.plus).toEqual({
      usageTier: 1,
      monthlyAllowanceMilli: 100_000,
      laneWeight: 1,
      limits: {
        data_rpm: 60,
        simulations_rpm: 30,
        concurrent_simulations: 4,
        batches_per_day: 20,
        submissions_per_day: 200,
        gpu_seconds_per_day: 600,
      },
    });
    expect(PLAN_TERMS.pro).toEqual({
      usageTier: 2,
      monthlyAllowanceMilli: 2_500_000,
      laneWeight: 2,
      limits: {
        data_rpm: 600,
        simulations_rpm: 300,
        concurrent_simulations: 16,
        batches_per_day: 200,
        submissions_per_day: 2_000,
        gpu_seconds_per_day: 6_000,
      },
    });
    expect(Object.values(PLAN_TERMS.none.limits).every((value) => value === 0)).toBe(true);
  });

  it("applies an organisation's overrides and ignores what is not a limit", () => {
    const limits = limitsFor({
      plan: 'plus',
      limitOverrides: { simulations_rpm: 100, concurrent_simulations: 0, unknown_limit: 5, data_rpm: -1 },
    });
    expect(limits).toMatchObject({ simulations_rpm: 100, concurrent_simulations: 0, data_rpm: 60 });
    expect(limits).not.toHaveProperty('unknown_limit');
    expect(PLAN_TERMS.plus.limits.simulations_rpm).toBe(30);
    expect(limitsFor({ plan: 'pro' })).toEqual(PLAN_TERMS.pro.limits);
  });

  it('defaults the spend cap to ten monthly allowances', () => {
    expect(spendCapMilli('plus', null)).toBe(1_000_000);
    expect(spendCapMilli('pro', undefined)).toBe(25_000_000);
    expect(spendCapMilli('pro', 5_000)).toBe(5_000);
    expect(spendCapMilli('plus', 0)).toBe(0);
  });

  it('grants the allowance only while the plan is active', () => {
    expect(monthlyAllowanceMilli('pro')).toBe(2_500_000);
    expect(monthlyAllowanceMilli('pro', false)).toBe(0);
    expect(monthlyAllowanceMilli('none')).toBe(0);
  });
});
