// GET /v1/credits: the organisation's balance, plan tier and limits (docs/api.md §2.1, docs/decisions.md
// §2 and §3).
import { z } from 'zod';
import { creditsNumber } from '../../billing/amounts.js';
import { nextPeriodStart } from '../../billing/billing-period.js';
import { limitsFor, monthlyAllowanceMilli, PLAN_TERMS } from '../../limits/plans.js';
import type { App, AppDeps } from '../app-types.js';
import { named } from '../schemas/registry.js';
import { compiledSerializer } from '../serialize.js';

// Read many times a second by clients that poll it: written by a compiled serializer (serialize.ts).
export const creditBalanceSchema = compiledSerializer(
  named(
    'CreditBalance',
    z
      .object({
        object: z.literal('credit_balance'),
        livemode: z.boolean(),
        total: z.number().describe('Available credits: monthly remaining + top-up remaining − active holds.'),
        usage_tier: z.number().int(),
        plan: z.enum(['plus', 'pro']),
        held: z.number().describe('Credits held by reservations of jobs not yet delivered.'),
        monthly: z.object({
          remaining: z.number(),
          allowance: z.number(),
          resets_at: z.string().describe('Next reset of the monthly allowance, ISO 8601 UTC.'),
        }),
        topup: z.object({ remaining: z.number() }),
        limits: z.object({
          data_rpm: z.number(),
          simulations_rpm: z.number(),
          concurrent_simulations: z.number(),
          batches_per_day: z.number(),
          submissions_per_day: z.number(),
          gpu_seconds_per_day: z.number(),
        }),
        spend_cap: z.object({
          credits: z.number().describe('Most credits that may be charged in one UTC month.'),
          spent_this_month: z.number(),
        }),
      })
      .describe("The organisation's credit balance, plan tier and limits (docs/api.md §2.1)."),
  ),
);

export function registerCreditRoutes(app: App, deps: AppDeps) {
  app.get(
    '/v1/credits',
    {
      config: { access: 'api', rateGroup: 'data' },
      // Its body (and any error it answers) stays far below the 1 KiB from which bodies are compressed
      // (docs/api.md §1): @fastify/compress's hooks would only decide not to, on every poll.
      compress: false,
      schema: {
        operationId: 'getCreditBalance',
        summary: 'Read the credit balance, plan tier and limits',
        description: 'Free. Test keys read the same balance with livemode false.',
        tags: ['credits'],
        response: { 200: creditBalanceSchema },
      },
    },
    async (request) => {
      const auth = request.auth!;
      const limits = limitsFor(auth.org);
      const balance = await deps.services.ledger.balance(auth.org.id);
      return {
        object: 'credit_balance' as const,
        livemode: auth.livemode,
        total: creditsNumber(balance.available),
        usage_tier: PLAN_TERMS[auth.org.plan].usageTier,
        plan: auth.org.plan as 'plus' | 'pro',
        held: creditsNumber(balance.held),
        monthly: {
          remaining: creditsNumber(balance.monthlyRemaining),
          allowance: creditsNumber(monthlyAllowanceMilli(auth.org.plan, auth.org.planActive)),
          resets_at: nextPeriodStart(deps.clock()).toISOString(),
        },
        topup: { remaining: creditsNumber(balance.topupRemaining) },
        limits: {
          data_rpm: limits.data_rpm,
          simulations_rpm: limits.simulations_rpm,
          concurrent_simulations: limits.concurrent_simulations,
          batches_per_day: limits.batches_per_day,
          submissions_per_day: limits.submissions_per_day,
          gpu_seconds_per_day: limits.gpu_seconds_per_day,
        },
        spend_cap: {
          credits: creditsNumber(balance.spendCap),
          spent_this_month: creditsNumber(balance.spentThisMonth),
        },
      };
    },
  );
}
