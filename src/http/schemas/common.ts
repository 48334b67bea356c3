// Wire schemas several resources share: prices, freshness, team labels, the error object and the
// Idempotency-Key header.
import { z } from 'zod';
import { ERRORS, type ErrorCode, errorType } from '../../errors.js';
import { FRESHNESS_STATUSES } from '../../fixtures/freshness.js';
import { named, openEnum } from './registry.js';

/**
 * The headers of a POST that takes an Idempotency-Key (docs/api.md §8.5): the key's
 * length is checked by the idempotency store's route wrapper (src/http/idempotent.ts), which answers the
 * error the contract names.
 */
export const idempotencyHeadersSchema = z.object({ 'idempotency-key': z.string().optional() }).passthrough();

/**
 * The headers of a re-read of stored documents (docs/api.md §4.10, "Reading again"): If-None-Match with
 * the ETag of a copy the client holds; src/http/entity-tags.ts answers it.
 */
export const conditionalReadHeadersSchema = z
  .object({
    'if-none-match': z
      .string()
      .optional()
      .describe('The ETag of a copy you hold: 304 with no body when the answer would be the same bytes.'),
  })
  .passthrough();

/**
 * 304 to a conditional re-read: the same bytes as the copy the client holds, so none are sent. A null
 * schema is a response without content in the OpenAPI document.
 */
export const notModifiedResponse = z
  .null()
  .describe("Not Modified: If-None-Match names this answer's ETag. No body; nothing charged.");

export const priceSchema = named(
  'Price',
  z
    .object({
      draws: z.number().int().describe('Simulated matches priced.'),
      credits: z.string().describe('Exact price in credits, three decimals ("1.000" for 1,000 draws).'),
    })
    .describe('The price of a simulation: draws / 1000 credits.'),
);

export const freshnessSchema = named(
  'Freshness',
  z.object({
    status: openEnum(FRESHNESS_STATUSES, 'Whether the fixture is on sale: `fresh` is.'),
    reason: z.string().describe('When the inputs are from, or why the fixture is not on sale.'),
    evaluatedAt: z.number().describe('Check time, Unix milliseconds.'),
    validUntil: z
      .number()
      .nullable()
      .describe('Kick-off in Unix milliseconds minus one; null when not on sale.'),
    inputsAsOf: z.number().optional().describe('When the inputs were captured, Unix milliseconds.'),
  }),
);

export const teamSchema = named(
  'Team',
  z.object({
    team_id: z.number().int(),
    name: z.string(),
    short_name: z.string().describe('Short name; `home`/`away` lookups accept it.'),
    country: z.string(),
  }),
);

export const sideTeamSchema = named('SideTeam', z.object({ team_id: z.number().int(), name: z.string() }));

const codes = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]];
const ERROR_TYPES = [...new Set(Object.values(ERRORS).map((definition) => errorType(definition.status)))] as [
  string,
  ...string[],
];
const RETRY_STRATEGIES = ['correct_request', 'backoff_with_jitter', 'wait_for_change'] as const;
const IDEMPOTENCY_ADVICE = ['same', 'new', 'not_applicable'] as const;
const CREDIT_EFFECTS = ['not_charged', 'unknown'] as const;

/** The error object of every error response (docs/api.md §7). */
export const errorResponseSchema = named(
  'Error',
  z
    .object({
      error: z.object({
        type: openEnum(ERROR_TYPES, 'Family of the error, from the HTTP status.'),
        code: openEnum(codes, 'Stable machine-readable code; each has an entry at `/docs#<code>`.'),
        message: z.string().describe('For people; may change wording.'),
        cause: z.string().optional().describe('What in the request or state caused it, when known.'),
        fix: z.string().optional().describe('One-line recovery instruction.'),
        param: z.string().nullable().describe('The request field at fault (`lineups.home.xi`), or null.'),
        doc_url: z.string().describe('Link to the code in the error-code reference: `/docs#<code>`.'),
        request_id: z.string().nullable().describe('Same as the Request-Id header.'),
        retry: z
          .object({
            retryable: z.boolean().describe('Whether sending again can succeed.'),
            after_seconds: z.number().nullable().describe('Least delay before a retry; mirrors Retry-After.'),
            strategy: openEnum(RETRY_STRATEGIES, 'How to retry.'),
            idempotency_key: openEnum(IDEMPOTENCY_ADVICE, 'Which Idempotency-Key a retry carries.'),
          })
          .describe('Retry advice (docs/api.md §7).'),
        credit_effect: openEnum(CREDIT_EFFECTS, 'What the failed request did to credits.'),
        recovery: z
          .record(z.string(), z.unknown())
          .nullable()
          .describe('Code-specific facts: candidates, items, retry_at, reason, result_url.'),
        rule: z.string().optional().describe('The limit that refused the request (429s).'),
        reason: z.string().optional(),
        retryAfterMs: z.number().optional().describe('after_seconds in milliseconds.'),
      }),
    })
    .describe('The error object of every 4xx and 5xx answer (docs/api.md §7).'),
);
