// The global constants of the match model (everything that is not a team rating or a per-competition
// intercept). `matchsim model fit` regenerates model-params.json; the engine compiles these numbers into
// integer tables once per run (./layout.ts), so nothing here is read inside the per-draw loop.
import { z } from 'zod';
import { MAX_ADDED_MINUTES, SCORE_STATE_BUCKETS } from './layout.js';
import storedParams from './model-params.json' with { type: 'json' };
import { ENGINE_STREAM } from './rng.js';

/** The six 15-minute bands of a match; bands 3 and 6 include the added time of their half. */
const MINUTE_BAND_COUNT = 6;

const positive = z.number().finite().positive();
const nonNegative = z.number().finite().min(0);
const bandWeights = z.array(nonNegative).length(MINUTE_BAND_COUNT);
/** Probabilities of 0..10 added minutes; normalised by the compiler. */
const addedMinutes = z.array(nonNegative).length(MAX_ADDED_MINUTES + 1);
const perSide = z.object({ home: nonNegative, away: nonNegative });

export const modelParamsSchema = z.object({
  /**
   * `minute-` and a hash of everything else here (model/fit-model.ts modelVersionOf): the constants and
   * the engine's random stream they were versioned with, so that a new stream is a new version.
   */
  model_version: z.string().min(1),
  /**
   * The engine's random stream (rng.ts ENGINE_STREAM) these constants were versioned with; absent in the
   * versions made before streams were numbered, which drew stream 1.
   */
  engine_stream: z.number().int().min(1).optional(),
  public_name: z.string().min(1),
  /** Relative goal rate of each 15-minute band (goals in the band / goals per band on average). */
  goal_band_weights: bandWeights,
  /**
   * Multiplier on a side's goal and shot rates by its goal difference, indexed
   * [trailing by 2+, trailing by 1, level, leading by 1, leading by 2+]. The compiler rescales each
   * side's base rate so the expected goals still equal the ratings' figure.
   */
  score_state_multipliers: z.array(positive).length(SCORE_STATE_BUCKETS),
  /** Multipliers on goal and shot rates once the sides' player counts differ. */
  red_card_multipliers: z.object({
    /** The side with fewer players. */
    side_down: positive,
    /** The side with more players. */
    side_up: positive,
  }),
  /**
   * Elasticity of a side's goal and shot rates to its starting XI's attacking weight (sum of goal
   * shares) relative to the squad's expectation: rate x ratio^elasticity, in coarse buckets.
   */
  lineup_strength_elasticity: nonNegative,
  shots: z
    .object({
      /** Share of shots that are goals (goals / shots). */
      conversion: z.number().gt(0).lt(1),
      /** Share of shots on target, goals included. */
      on_target_share: z.number().gt(0).lt(1),
    })
    // Goals are shots on target: fewer on target than scored would give the compiler a negative rate
    // of saved shots (and non-monotonic cumulative thresholds).
    .refine((shots) => shots.on_target_share >= shots.conversion, {
      message: 'on_target_share must be at least conversion (goals are shots on target)',
      path: ['on_target_share'],
    }),
  cards: z.object({
    yellow_per_match: perSide,
    /** Straight red cards; second yellows are produced by the engine from the yellow-card rate. */
    straight_red_per_match: perSide,
    /** Relative card rate by 15-minute band. */
    band_weights: bandWeights,
    /** A booked player's card weight relative to before (booked players avoid a second yellow). */
    booked_player_factor: z.number().min(0).max(1),
  }),
  /**
   * Added minutes of each half. The project's match data has no added-time column, so the shipped values
   * are approximate shapes of what top-flight match reports show (first half about 2-3 minutes, mode 2;
   * second half about 4-6, mode 4-5; longer tails since the 2023 timekeeping directive). Each half
   * adds 0..10 steps to the 110-step grid.
   */
  added_time: z.object({
    first_half: addedMinutes,
    second_half: addedMinutes,
  }),
  substitutions: z.object({
    /** Intended substitutions per side and match (the engine stops at max_per_side or an empty bench). */
    expected_per_side: nonNegative,
    max_per_side: z.number().int().min(0).max(5),
    /** Share of the intended substitutions made at half-time (the first minute of the second half). */
    half_time_share: z.number().min(0).max(1),
    /** Relative rate of the remaining substitutions by 15-minute band. */
    band_weights: bandWeights,
  }),
  /** Share of goals credited with an assist. */
  assisted_share: z.number().min(0).max(1),
  /** Room for the fit's per-league rating summaries (mean/sd of ratings, intercept, home advantage). */
  league_profile: z.record(z.string(), z.record(z.string(), z.number())).optional(),
});
export type ModelParams = z.infer<typeof modelParamsSchema>;

/** The random stream the constants were versioned with (stream 1 where they name none). */
export function engineStreamOf(params: ModelParams): number {
  return params.engine_stream ?? 1;
}

/**
 * The shipped constants, validated once at import so a bad fit never reaches the engine. One version is
 * served at a time: constants versioned with another stream than the engines draw would give documents
 * whose version does not name their bits, so they are refused here.
 */
export const defaultModelParams: ModelParams = modelParamsSchema.parse(storedParams);
if (engineStreamOf(defaultModelParams) !== ENGINE_STREAM) {
  throw new Error(
    `model-params.json (${defaultModelParams.model_version}) was versioned with engine stream ` +
      `${engineStreamOf(defaultModelParams)}, the engines draw stream ${ENGINE_STREAM}: version the ` +
      'constants with this stream (docs/decisions.md §13, "Changelog of model versions")',
  );
}
