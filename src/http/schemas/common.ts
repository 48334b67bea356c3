// Wire schemas several resources share: prices, freshness, team labels and the error object.
import { z } from 'zod';
import { ERRORS, type ErrorCode } from '../../errors.js';
import { FRESHNESS_STATUSES } from '../../fixtures/freshness.js';

export const priceSchema = z.object({
  draws: z.number().int(),
  credits: z.string().describe('Exact price, three decimals.'),
});

export const freshnessSchema = z
  .object({
    status: z.enum(FRESHNESS_STATUSES),
    reason: z.string().describe('When the inputs are from, or why the fixture is not on sale.'),
    evaluatedAt: z.number().describe('Check time, Unix milliseconds.'),
    validUntil: z
      .number()
      .nullable()
      .describe('Kick-off in Unix milliseconds minus one; null when not on sale.'),
    inputsAsOf: z.number().optional().describe('When the inputs were captured, Unix milliseconds.'),
  })
  .describe('Freshness');

export const teamSchema = z.object({
  team_id: z.number().int(),
  name: z.string(),
  short_name: z.string(),
  country: z.string(),
});

export const sideTeamSchema = z.object({ team_id: z.number().int(), name: z.string() });

const codes = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]];

/** The error object of every error response (docs/api.md §7). */
export const errorResponseSchema = z
  .object({
    error: z.object({
      type: z.string(),
      code: z.enum(codes).describe('Stable code; the list may gain values.'),
      message: z.string(),
      cause: z.string().optional(),
      fix: z.string().optional(),
      param: z.string().nullable(),
      doc_url: z.string(),
      request_id: z.string().nullable(),
      retry: z.object({
        retryable: z.boolean(),
        after_seconds: z.number().nullable(),
        strategy: z.enum(['correct_request', 'backoff_with_jitter', 'wait_for_change']),
        idempotency_key: z.enum(['same', 'new', 'not_applicable']),
      }),
      credit_effect: z.enum(['not_charged', 'unknown']),
      recovery: z.record(z.string(), z.unknown()).nullable(),
      rule: z.string().optional(),
      reason: z.string().optional(),
      retryAfterMs: z.number().optional(),
    }),
  })
  .describe('Error');

/** The error responses every route can answer, beside its own success responses. */
export const errorResponses = { '4XX': errorResponseSchema, '5XX': errorResponseSchema } as const;
