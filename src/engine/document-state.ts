// The document of an in-play run (match inputs' from_state, docs/api.md §2.3 "In play"): its `state`
// section echoes the state the run started from, with the goals still to come, and its timeline starts at
// the state's step. Absent from a pre-match document, which keeps its bytes.
import { z } from 'zod';
import { AWAY, C_TEAM, HOME, TEAM_COUNTERS, TEAM_GOALS } from '../engine-contract/layout.js';
import type { FromState } from '../engine-contract/match-inputs.js';
import { stepOfMinute } from './compile-state.js';

const count = z.number().int().min(0);
const pair = z.object({ home: count, away: count });
const ids = z.object({ home: z.array(z.number().int()), away: z.array(z.number().int()) });
const substitution = z.object({ off: z.number().int(), on: z.number().int() });

export const stateSectionSchema = z.object({
  /** The first minute the run played, as the timeline labels it, and its step (0..109). */
  minute: z.string(),
  step: z.number().int().min(0),
  score: pair,
  red_cards: pair,
  sent_off: ids,
  substitutions: z.object({ home: z.array(substitution), away: z.array(substitution) }),
  booked: ids,
  /** The half-time score a state in the second half was given; absent otherwise. */
  half_time: pair.optional(),
  /** Expected goals from the state on (goals.expected adds the score). */
  goals_to_come: z.object({ home: z.number().min(0), away: z.number().min(0), total: z.number().min(0) }),
});
export type StateSection = z.infer<typeof stateSectionSchema>;

/** The step an in-play run starts at; 0 before a match. */
export function startStepOf(state: FromState | undefined): number {
  return state ? (stepOfMinute(state.minute) ?? 0) : 0;
}

export function stateSection(state: FromState, counts: Uint32Array, draws: number): StateSection {
  const home = counts[C_TEAM + HOME * TEAM_COUNTERS + TEAM_GOALS]! / draws;
  const away = counts[C_TEAM + AWAY * TEAM_COUNTERS + TEAM_GOALS]! / draws;
  return {
    minute: state.minute,
    step: startStepOf(state),
    score: { home: state.score.home, away: state.score.away },
    red_cards: {
      home: state.red_cards?.home ?? state.sent_off?.home.length ?? 0,
      away: state.red_cards?.away ?? state.sent_off?.away.length ?? 0,
    },
    sent_off: { home: [...(state.sent_off?.home ?? [])], away: [...(state.sent_off?.away ?? [])] },
    substitutions: {
      home: (state.substitutions?.home ?? []).map(({ off, on }) => ({ off, on })),
      away: (state.substitutions?.away ?? []).map(({ off, on }) => ({ off, on })),
    },
    booked: { home: [...(state.booked?.home ?? [])], away: [...(state.booked?.away ?? [])] },
    ...(state.half_time ? { half_time: { home: state.half_time.home, away: state.half_time.away } } : {}),
    goals_to_come: { home, away, total: home + away },
  };
}
