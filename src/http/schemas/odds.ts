// Wire schemas of POST /v1/odds/implied (docs/api.md §4.13). The limits are the domain's
// (src/market/margin-removal.ts), which checks them again for callers that are not this route.
import { z } from 'zod';
import {
  DEFAULT_MARGIN_METHOD,
  MARGIN_METHODS,
  MAX_DECIMAL_ODDS,
  MAX_OUTCOMES,
  MAX_OVERROUND,
  MIN_OUTCOMES,
} from '../../market/margin-removal.js';
import { named, openEnum } from './registry.js';

const decimalOdds = z
  .number()
  .gt(1, 'decimal odds must be greater than 1.0.')
  .max(MAX_DECIMAL_ODDS, `decimal odds are at most ${MAX_DECIMAL_ODDS}.`);

export const impliedOddsBody = named(
  'ImpliedOddsRequest',
  z.strictObject({
    odds: z
      .array(decimalOdds)
      .min(MIN_OUTCOMES, `a market has at least ${MIN_OUTCOMES} outcomes.`)
      .max(MAX_OUTCOMES, `a market has at most ${MAX_OUTCOMES} outcomes.`)
      .describe(
        `One market's decimal odds, every outcome of it once (e.g. home, draw, away): ${MIN_OUTCOMES} to ` +
          `${MAX_OUTCOMES} prices above 1.0 and at most ${MAX_DECIMAL_ODDS}, whose inverses sum to 1 to ${MAX_OVERROUND}.`,
      ),
    method: z
      .enum(MARGIN_METHODS)
      .optional()
      .describe(`How the margin is taken out (docs/api.md §4.13); default \`${DEFAULT_MARGIN_METHOD}\`.`),
  }),
);

const parameterSchema = z
  .object({
    name: openEnum(['z', 'k', 'c', 'subtracted'], "The parameter's name."),
    value: z.number(),
  })
  .nullable()
  .describe(
    "The method's parameter: Shin's insider share `z`, the power method's exponent `k`, the odds ratio `c`, " +
      "the additive method's per-outcome `subtracted`; null for `multiplicative`.",
  );

export const impliedOddsSchema = named(
  'ImpliedProbabilities',
  z
    .object({
      object: z.literal('implied_probabilities'),
      method: openEnum(MARGIN_METHODS, 'The margin-removal method used.'),
      odds: z.array(z.number()).describe('The odds sent, in their order.'),
      probabilities: z
        .array(z.number().min(0).max(1))
        .describe('One per price, in the order of `odds`; they sum to 1.'),
      fair_odds: z.array(z.number()).describe('1 / probability, per price: the odds without margin.'),
      overround: z.number().describe('The sum of the inverse odds (1.048 for a 4.8% book).'),
      margin: z.number().describe('overround − 1.'),
      parameter: parameterSchema,
    })
    .describe('Implied probabilities'),
);
