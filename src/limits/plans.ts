// The per-plan numbers (docs/api.md §8, docs/decisions.md §3): the one table every part of the service reads,
// and the one function that applies an organisation's operator overrides to it.
import { LIMIT_NAMES, type Plan } from '../accounts/orgs.js';

export type LimitName = (typeof LIMIT_NAMES)[number];

export interface PlanTerms {
  /** `usage_tier` of the credit balance (docs/decisions.md §3). */
  usageTier: number;
  /** Credits included per UTC month, in milli-credits (docs/api.md §1 and §8). */
  monthlyAllowanceMilli: number;
  limits: Record<LimitName, number>;
}

/**
 * Draws of one test-key run: test keys cost nothing, so their engine work is bounded instead; a larger
 * request runs this many with the warning `test_draws_capped` (docs/decisions.md §2).
 */
export const TEST_KEY_MAX_DRAWS = 10_000;

/** A spend cap is this many monthly allowances unless an operator sets one (docs/decisions.md §1). */
const DEFAULT_SPEND_CAP_ALLOWANCES = 10;

export const PLAN_TERMS: Record<Plan, PlanTerms> = {
  // No plan: refused with tier_restricted before any limit applies; zeros keep every check closed.
  none: {
    usageTier: 0,
    monthlyAllowanceMilli: 0,
    limits: {
      data_rpm: 0,
      simulations_rpm: 0,
      concurrent_simulations: 0,
      batches_per_day: 0,
      submissions_per_day: 0,
      gpu_seconds_per_day: 0,
    },
  },
  plus: {
    usageTier: 1,
    monthlyAllowanceMilli: 100_000,
    limits: {
      data_rpm: 60,
      simulations_rpm: 30,
      concurrent_simulations: 4,
      batches_per_day: 20,
      submissions_per_day: 200,
      gpu_seconds_per_day: 600,
    },
  },
  pro: {
    usageTier: 2,
    monthlyAllowanceMilli: 2_500_000,
    limits: {
      data_rpm: 600,
      simulations_rpm: 300,
      concurrent_simulations: 16,
      batches_per_day: 200,
      submissions_per_day: 2_000,
      gpu_seconds_per_day: 6_000,
    },
  },
};

export interface PlanHolder {
  plan: Plan;
  /** Operator overrides by limit name; unknown names are ignored. */
  limitOverrides?: Readonly<Record<string, number>> | undefined;
}

/** The organisation's effective limits: the plan's numbers with the operator's overrides applied. */
export function limitsFor(org: PlanHolder): Record<LimitName, number> {
  const limits = { ...PLAN_TERMS[org.plan].limits };
  const overrides = org.limitOverrides ?? {};
  for (const name of LIMIT_NAMES) {
    const value = overrides[name];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) limits[name] = value;
  }
  return limits;
}

/** Monthly allowance in milli-credits; an inactive plan grants nothing. */
export function monthlyAllowanceMilli(plan: Plan, planActive = true): number {
  return planActive ? PLAN_TERMS[plan].monthlyAllowanceMilli : 0;
}

/** The spend cap in milli-credits per UTC month: the operator's value, else 10x the plan's allowance. */
export function spendCapMilli(plan: Plan, spendCapOverrideMilli: number | null | undefined): number {
  return spendCapOverrideMilli ?? DEFAULT_SPEND_CAP_ALLOWANCES * PLAN_TERMS[plan].monthlyAllowanceMilli;
}
