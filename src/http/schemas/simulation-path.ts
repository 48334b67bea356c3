// POST /v1/simulations/path and /v1/simulations/path/quote (docs/api.md §4.14): a fixture, its events
// so far and the draws of each minute's run; the answer of a submission is a batch (schemas/simulations.ts
// batchSchema), of a quote the path's price.
import { z } from 'zod';
import { PATH_EVENT_TYPES } from '../../engine/compile-path.js';
import type { PathRequest } from '../../simulations/path-request.js';
import { priceSchema } from './common.js';
import { int4Id } from './primitives.js';
import { named } from './registry.js';
import { draws, metadataRequestSchema, selectorFields } from './simulations.js';

const { from_state: _state, offered_odds: _offered, ...pathSelectorFields } = selectorFields;
const minute = z.string().max(8);

export const pathEventSchema = z
  .strictObject({
    minute: minute.describe('When it happened, as the timeline labels minutes: "23", "45+2", "90+4".'),
    type: z.enum(PATH_EVENT_TYPES),
    team: z.enum(['home', 'away']),
    player_id: int4Id
      .optional()
      .describe(
        'The scorer, the player booked or sent off, the substitute coming on (required for a substitution).',
      ),
    player_off_id: int4Id.optional().describe("A substitution's player going off."),
  })
  .describe('A match event. A player’s second yellow card is his red card.');

export const pathBodySchema = z
  .strictObject({
    ...pathSelectorFields,
    events: z.array(pathEventSchema).max(60).describe('The events so far, in any order.'),
    through: minute
      .optional()
      .describe('The last minute of the path; default 90, or the minute after the last event when later.'),
    draws: draws.optional().describe('Draws of each minute’s run (100 to 1,000,000; default 1,000).'),
    metadata: metadataRequestSchema.optional(),
  })
  .describe(
    "A match's win-probability path: one in-play run a minute from kick-off to `through`, each from the state the events before that minute make.",
  ) satisfies z.ZodType<PathRequest>;

export const pathQuoteSchema = z
  .object({
    object: z.literal('path_quote'),
    fixture_id: z.number().int(),
    steps: z.number().int().describe('Runs of the path, one a minute.'),
    draws_per_step: z.number().int(),
    price: priceSchema,
    credits: z.number(),
    credits_charged: z.literal(0),
    rate_card: z.string(),
    livemode: z.boolean(),
    data_version: z.string(),
  })
  .describe('The exact price of a path (its total draws / 1000); nothing is reserved.');

named('PathRequest', pathBodySchema);
named('PathQuote', pathQuoteSchema);
