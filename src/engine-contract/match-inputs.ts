// The match engine's input: everything one fixture's simulation depends on, already resolved from the
// database (ratings, squads, lineups). The fixtures code builds it; the engine compiles it into integer
// tables (./layout.ts) and the document builder reads its labels.
import { z } from 'zod';
import { PLAYER_SLOTS } from './layout.js';
import type { ModelParams } from './model-params.js';

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

/**
 * What the engine reads of a player beside its id, name and position; `share` is the schema of the four
 * shares (the feed bounds them tighter, src/fixtures/feed-schema.ts).
 */
export function playerWeightFields<Share extends z.ZodType<number>>(share: Share) {
  return {
    /** Relative weights while on the pitch: who scores, assists, shoots, is booked. Only ratios within a side matter. */
    goal_share: share,
    assist_share: share,
    shot_share: share,
    card_share: share,
    /** Model probability of starting (drives predicted lineups). */
    start_probability: z.number().min(0).max(1),
    /** Expected minutes when starting: a low figure means an early substitution is likely. */
    typical_minutes: z.number().min(1).max(90),
  };
}

const playerProfileSchema = z.object({
  player_id: z.number().int(),
  name: z.string(),
  position: z.enum(PLAYER_POSITIONS).nullable(),
  ...playerWeightFields(z.number().finite().min(0)),
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

const ratePerSide = z.object({
  home: z.number().finite().min(0).max(10),
  away: z.number().finite().min(0).max(10),
});

/**
 * A competition's own card and shot rates (docs/model.md, "League profiles"), in place of the model's
 * global constants (model-params.json `cards` and `shots`). Goals and home advantage are `params`.
 */
export const competitionProfileSchema = z
  .object({
    yellow_per_match: ratePerSide,
    /** Straight reds; the engine adds second yellows from the yellow-card rate. */
    straight_red_per_match: ratePerSide,
    /**
     * A booked player's card weight relative to before (model-params `cards.booked_player_factor`):
     * sets how many second yellows the engine makes. Absent: the global constant.
     */
    booked_player_factor: z.number().min(0).max(1).optional(),
    shots: z.object({
      conversion: z.number().gt(0).lt(1),
      on_target_share: z.number().gt(0).lt(1),
    }),
  })
  .refine((profile) => profile.shots.on_target_share >= profile.shots.conversion, {
    message: 'on_target_share must be at least conversion (goals are shots on target)',
    path: ['shots', 'on_target_share'],
  });
export type CompetitionProfile = z.infer<typeof competitionProfileSchema>;

const probabilityTarget = z.number().gt(0).lt(1);

/** How a fit uses the market's prices (docs/model.md, "Fitting to the market"). */
export const MARKET_FITS = ['exact', 'supremacy'] as const;
export type MarketFitKind = (typeof MARKET_FITS)[number];

/**
 * A run fitted to the market: the probabilities the domain read from the bookmaker's odds (margin
 * removed, src/market), which the compile fits the sides' goals to, and the odds and method they came
 * from, which the document states. Absent: the model's own rated goals, as before fits existed.
 */
export const marketInputsSchema = z.object({
  odds: z.object({
    '1x2': z.array(z.number()).length(3),
    'total_2.5': z.array(z.number()).length(2).optional(),
  }),
  margin_method: z.string(),
  fit: z.enum(MARKET_FITS),
  targets: z.object({
    home_win: probabilityTarget,
    draw: probabilityTarget,
    away_win: probabilityTarget,
    over_2_5: probabilityTarget.optional(),
  }),
});
export type MarketInputs = z.infer<typeof marketInputsSchema>;

const playerIds = z.array(z.number().int());
const perSide = <T extends z.ZodTypeAny>(schema: T) => z.object({ home: schema, away: schema });
const goalCount = z.number().int().min(0).max(30);

/**
 * An in-play state (docs/model.md "In play"): the run plays the match from the start of `minute` (the
 * timeline's label of the first step still to play, "67" or "45+2") with what happened before it.
 * `red_cards` counts every red card (default: the players named in `sent_off`); players are named by
 * player_id, and naming any needs the side's XI (an announced or custom lineup). Checked against the
 * fixture by src/engine/compile-state.ts stateIssues.
 */
export const fromStateSchema = z.object({
  minute: z.string().max(8),
  score: perSide(goalCount),
  red_cards: perSide(z.number().int().min(0).max(11)).optional(),
  sent_off: perSide(playerIds).optional(),
  substitutions: perSide(
    z.array(z.object({ off: z.number().int(), on: z.number().int() })).max(PLAYER_SLOTS),
  ).optional(),
  booked: perSide(playerIds).optional(),
  /** A minute in the second half: the half-time score (default: the state's score). */
  half_time: perSide(goalCount).optional(),
});
export type FromState = z.infer<typeof fromStateSchema>;

export const matchInputsSchema = z
  .object({
    fixture_id: z.number().int(),
    kickoff: z.string(),
    state: z.string(),
    competition: competitionLabelSchema,
    /** Per competition, log scale. */
    params: z.object({ intercept: z.number().finite(), home_advantage: z.number().finite() }),
    /** The competition's card and shot rates; absent: the model's global constants. */
    profile: competitionProfileSchema.optional(),
    /** The market the run is fitted to; absent for an unfitted run. */
    market: marketInputsSchema.optional(),
    /** The in-play state the run starts from; absent for a pre-match run. */
    from_state: fromStateSchema.optional(),
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

/**
 * The model constants one fixture is compiled with: the global ones, with its competition's card and
 * shot rates where the inputs carry a league profile. Without one the very same object comes back, so
 * a fixture without a profile compiles exactly as before profiles existed.
 */
export function paramsForFixture(params: ModelParams, profile: CompetitionProfile | undefined): ModelParams {
  if (!profile) return params;
  return {
    ...params,
    shots: { ...profile.shots },
    cards: {
      ...params.cards,
      yellow_per_match: { ...profile.yellow_per_match },
      straight_red_per_match: { ...profile.straight_red_per_match },
      booked_player_factor: profile.booked_player_factor ?? params.cards.booked_player_factor,
    },
  };
}

/**
 * A fitted league's profile from the model constants (`league_profile.<league>` in model-params.json,
 * written by `matchsim model fit`); undefined when the constants carry none for it.
 */
export function fittedCompetitionProfile(
  params: ModelParams,
  league: string,
): CompetitionProfile | undefined {
  const f = params.league_profile?.[league];
  const keys = [
    'yellow_home',
    'yellow_away',
    'straight_red_home',
    'straight_red_away',
    'shot_conversion',
    'shot_on_target_share',
    'booked_player_factor',
  ] as const;
  if (!f || !keys.every((key) => typeof f[key] === 'number')) return undefined;
  return {
    yellow_per_match: { home: f.yellow_home!, away: f.yellow_away! },
    straight_red_per_match: { home: f.straight_red_home!, away: f.straight_red_away! },
    booked_player_factor: f.booked_player_factor!,
    shots: { conversion: f.shot_conversion!, on_target_share: f.shot_on_target_share! },
  };
}
