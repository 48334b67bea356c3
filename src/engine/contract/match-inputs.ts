// The match engine's input: everything one fixture's simulation depends on, already resolved from the
// database (ratings, squads, lineups). The fixtures code builds it; the engine compiles it into integer
// tables (./layout.ts) and the document builder reads its labels.
import { z } from 'zod';
import { PLAYER_SLOTS } from './layout.js';

export const PLAYER_POSITIONS = ['goalkeeper', 'defender', 'midfielder', 'attacker'] as const;
export const LINEUP_SOURCES = ['predicted', 'announced', 'custom'] as const;

/** Squads larger than this are refused: the engine's counter layout has a fixed slot count per side. */
export const MAX_SQUAD_SIZE = PLAYER_SLOTS;
export const MIN_SQUAD_SIZE = 11;
export const MAX_BENCH_SIZE = 12;
/**
 * A predicted lineup's bench: the engine brings substitutes on from the most likely non-starters, this
 * many of them, as a matchday squad of 20 would; the expected lineup shows the same bench.
 */
export const PREDICTED_BENCH_SIZE = 9;

export const teamLabelSchema = z.object({
  team_id: z.number().int(),
  name: z.string(),
  short_name: z.string(),
  country: z.string(),
});
export type TeamLabel = z.infer<typeof teamLabelSchema>;

export const competitionLabelSchema = z.object({
  competition_id: z.number().int(),
  name: z.string(),
  country: z.string(),
  season: z.string(),
});
export type CompetitionLabel = z.infer<typeof competitionLabelSchema>;

const share = z.number().finite().min(0);

const playerProfileSchema = z.object({
  player_id: z.number().int(),
  name: z.string(),
  position: z.enum(PLAYER_POSITIONS).nullable(),
  /** Relative weights while on the pitch: who scores, assists, shoots, is booked. Only ratios within a side matter. */
  goal_share: share,
  assist_share: share,
  shot_share: share,
  card_share: share,
  /** Model probability of starting (drives predicted lineups). */
  start_probability: z.number().min(0).max(1),
  /** Expected minutes when starting: a low figure means an early substitution is likely. */
  typical_minutes: z.number().min(1).max(90),
});
export type PlayerProfile = z.infer<typeof playerProfileSchema>;

export const sideLineupSchema = z.object({
  source: z.enum(LINEUP_SOURCES),
  /** 11 player ids for announced/custom; empty for predicted (drawn per draw from start probabilities). */
  xi: z.array(z.number().int()),
  /** Ordered: the first eligible bench player comes on first. Ignored for predicted lineups. */
  bench: z.array(z.number().int()).max(MAX_BENCH_SIZE),
  formation: z.string().nullable(),
});
export type SideLineup = z.infer<typeof sideLineupSchema>;

const sideInputsSchema = z.object({
  team: teamLabelSchema,
  /** Log-scale ratings: expected home goals = exp(intercept + home_advantage + home.attack - away.defence). */
  attack: z.number().finite(),
  defence: z.number().finite(),
  players: z.array(playerProfileSchema).min(MIN_SQUAD_SIZE).max(MAX_SQUAD_SIZE),
  lineup: sideLineupSchema,
});
export type SideInputs = z.infer<typeof sideInputsSchema>;

export const matchInputsSchema = z
  .object({
    fixture_id: z.number().int(),
    kickoff: z.string(),
    state: z.string(),
    competition: competitionLabelSchema,
    /** Per competition, log scale. */
    params: z.object({ intercept: z.number().finite(), home_advantage: z.number().finite() }),
    home: sideInputsSchema,
    away: sideInputsSchema,
  })
  .superRefine((inputs, ctx) => {
    for (const side of ['home', 'away'] as const) {
      const { players, lineup } = inputs[side];
      const ids = new Set(players.map((p) => p.player_id));
      if (ids.size !== players.length) {
        ctx.addIssue({ code: 'custom', path: [side, 'players'], message: 'player ids must be unique' });
      }
      if (lineup.source === 'predicted') continue;
      if (lineup.xi.length !== 11) {
        ctx.addIssue({ code: 'custom', path: [side, 'lineup', 'xi'], message: 'a fixed XI has 11 players' });
      }
      const named = [...lineup.xi, ...lineup.bench];
      if (new Set(named).size !== named.length) {
        ctx.addIssue({ code: 'custom', path: [side, 'lineup'], message: 'a player is named twice' });
      }
      for (const id of named) {
        if (!ids.has(id)) {
          ctx.addIssue({
            code: 'custom',
            path: [side, 'lineup'],
            message: `player ${id} is not in the squad`,
          });
        }
      }
    }
  });
export type MatchInputs = z.infer<typeof matchInputsSchema>;

/** Expected goals of each side before in-match dynamics, as the ratings define them. */
export function expectedGoalsFromRatings(inputs: MatchInputs): { home: number; away: number } {
  const { intercept, home_advantage } = inputs.params;
  return {
    home: Math.exp(intercept + home_advantage + inputs.home.attack - inputs.away.defence),
    away: Math.exp(intercept + inputs.away.attack - inputs.home.defence),
  };
}
