// The request's in-play state (docs/api.md §4.3, "In play"): what happened before the minute a run starts
// from. The engine's own schema is the match inputs' (src/engine-contract/match-inputs.ts fromStateSchema);
// this one describes each field to the client and refuses fields it does not know.
import { z } from 'zod';
import type { FromState } from '../../engine-contract/match-inputs.js';
import { int4Id } from './primitives.js';

const playerId = int4Id.describe('A player_id of the side’s squad.');
const goals = z.number().int().min(0).max(30);
const bySide = <T extends z.ZodTypeAny>(schema: T, description: string) =>
  z.strictObject({ home: schema, away: schema }).describe(description);

export const fromStateRequestSchema = z
  .strictObject({
    minute: z
      .string()
      .max(8)
      .describe(
        'The first minute still to play, as the timeline labels it: "1" to "90", "45+1" to "45+10", "90+1" to "90+10". The state is the one at its start.',
      ),
    score: bySide(goals, 'Goals scored before the minute.'),
    red_cards: bySide(
      z.number().int().min(0).max(11),
      'Red cards before the minute (default: the players in sent_off).',
    ).optional(),
    sent_off: bySide(
      z.array(playerId),
      'Players sent off (needs the side’s XI: an announced or custom lineup).',
    ).optional(),
    substitutions: bySide(
      z.array(z.strictObject({ off: playerId, on: playerId })).max(40),
      'Substitutions made, in order (needs the side’s XI).',
    ).optional(),
    booked: bySide(z.array(playerId), 'Players on a yellow card (needs the side’s XI).').optional(),
    half_time: bySide(
      goals,
      'A minute in the second half: the half-time score, for the half-time markets (default: the state’s score).',
    ).optional(),
  })
  .describe(
    'Simulate the rest of the match from this state instead of from kick-off: the document describes the end of the match from here and echoes the state in its `state` section.',
  ) satisfies z.ZodType<FromState>;
