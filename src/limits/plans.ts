// The per-plan numbers (docs/api.md §8, docs/decisions.md §3): the one table every part of the service reads,
// and the one function that applies an organisation's operator overrides to it.
import { LIMIT_NAMES, type Plan } from '../accounts/orgs.js';

export type LimitName = (typeof LIMIT_NAMES)[number];

export interface PlanTerms {
  /** `usage_tier` of the credit balance (docs/decisions.md §3). */
  usageTier: number;
  /** Credits included per UTC month, in milli-credits (docs/api.md §1 and §8). */
  monthlyAllowanceMilli: number;
  /**
   * The weight of the organisation's lane in the engine's fair shares (docs/decisions.md §6 "Fair
   * shares"): while lanes wait, a lane of weight 2 gets twice the draws of a lane of weight 1.
   */
  laneWeight: number;
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
    laneWeight: 1,
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
    laneWeight: 1,
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
    laneWeight: 2,
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

/**
 * The weight of every test key's lane (one lane for all organisations' test keys): test keys cost nothing,
 * so they never outweigh a paying lane.
 */
export const TEST_LANE_WEIGHT = 1;

/** Each plan's lane weight, by plan name: what the claim's statement reads (src/jobs/kind-queue.ts). */
export function laneWeights(): Record<Plan, number> {
  const weights = {} as Record<Plan, number>;
  for (const plan of Object.keys(PLAN_TERMS) as Plan[]) weights[plan] = PLAN_TERMS[plan].laneWeight;
  return weights;
}

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
