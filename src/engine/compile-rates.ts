// The event rates of a fixture (compile.ts compileFixture): added time, the per-step curves, the stretches
// of steps whose rates are the same (the model's rates change by 15-minute band), and the threshold table
// the engines' event tables are made from. The base goal rates are calibrated in compile-calibration.ts.
import * as layout from '../engine-contract/layout.js';
import type { ModelParams } from '../engine-contract/model-params.js';

const TWO_POW_32 = 4294967296;

/** A probability as a `u < threshold` cut-off. */
export function probabilityThreshold(p: number): number {
  if (!(p > 0)) return 0;
  return Math.min(TWO_POW_32 - 1, Math.floor(p * TWO_POW_32));
}

export interface AddedTimeModel {
  /** P(added <= k), k = 0..10. */
  firstCumulative: number[];
  secondCumulative: number[];
  /** P(step is played). */
  stepPlayed: number[];
  /** Expected played steps in each 15-minute band. */
  bandSteps: number[];
}

export function addedTimeModel(params: ModelParams): AddedTimeModel {
  const cumulative = (weights: readonly number[]) => {
    const total = weights.reduce((a, b) => a + b, 0);
    let running = 0;
    return weights.map((w) => {
      running += w / total;
      return Math.min(1, running);
    });
  };
  const firstCumulative = cumulative(params.added_time.first_half);
  const secondCumulative = cumulative(params.added_time.second_half);
  const stepPlayed = Array.from({ length: layout.STEPS }, (_, step) => {
    if (step >= layout.FIRST_HALF_ADDED_START && step < layout.SECOND_HALF_START) {
      return 1 - firstCumulative[step - layout.FIRST_HALF_ADDED_START]!;
    }
    if (step >= layout.SECOND_HALF_ADDED_START)
      return 1 - secondCumulative[step - layout.SECOND_HALF_ADDED_START]!;
    return 1;
  });
  const bandSteps = new Array<number>(6).fill(0);
  stepPlayed.forEach((p, step) => {
    bandSteps[layout.STEP_BAND[step]!]! += p;
  });
  return { firstCumulative, secondCumulative, stepPlayed, bandSteps };
}

/** Per-step shape of a band-weighted rate: sums to 1 over the expected played steps of a match. */
function stepCurve(bandWeights: readonly number[], added: AddedTimeModel): number[] {
  const total = bandWeights.reduce((a, b) => a + b, 0);
  return layout.STEP_BAND.map((band) => bandWeights[band]! / total / added.bandSteps[band]!);
}

/**
 * A side's event rates at a step before the cell's multipliers, index side * STEPS + step: a cell's
 * categorical draw is these times its score, red-card and strength multipliers (categoricalTotal). Each
 * product is formed in the order the per-cell formula always used, so the compiled tables keep their bits.
 */
export interface EventRates {
  /** base goals of the side * goal curve at the step (rewritten by each calibration round, setBaseGoals). */
  goals: Float64Array;
  yellow: Float64Array;
  red: Float64Array;
  substitution: Float64Array;
  goalCurve: readonly number[];
  savedPerGoal: number;
  offTargetPerGoal: number;
  scoreMultipliers: Float64Array;
  redMultipliers: Float64Array;
  /**
   * The steps that start a stretch of steps whose rates are all the same (step 0 first; the goals' curve
   * and the cards' and substitutions' rates of both sides repeat the step before's elsewhere), then
   * STEPS; `stretches` of them. Some ten: the model's rates change by 15-minute band, and substitutions
   * at half time. A stretch's cells are worked out once, at its first step.
   */
  changes: Int32Array;
  stretches: number;
  /** Goals per match of each side under the dynamics, after calibration (for tests and reports). */
  calibratedGoals: [number, number];
}

/**
 * Rates per minute become one categorical draw per side and step whose marginals equal the rates (at
 * most one event per side and minute; a per-minute total above 1 is scaled down, never reached with
 * football's rates, about 0.2). The scale of a cell whose rates are `goals` (times savedPerGoal and
 * offTargetPerGoal for the shots) and the (side, step) factors at `sideStep`: 1, or 1 / their total.
 */
export function categoricalTotal(rates: EventRates, sideStep: number, goals: number): number {
  const total =
    goals +
    goals * rates.savedPerGoal +
    goals * rates.offTargetPerGoal +
    rates.yellow[sideStep]! +
    rates.red[sideStep]! +
    rates.substitution[sideStep]!;
  return total <= 1 ? 1 : total;
}

/**
 * Writes one cell's cumulative `u < threshold` cut-offs (EVENT_GOAL..EVENT_SUBSTITUTION order), each
 * probability divided by the cell's categoricalTotal as the kinds are summed.
 */
function writeCell(
  thresholds: Uint32Array,
  index: number,
  rates: EventRates,
  sideStep: number,
  goals: number,
): void {
  const total = categoricalTotal(rates, sideStep, goals);
  // x / 1 is x: the common case divides by 1 and keeps the same bits as no division.
  let cumulative = goals / total;
  thresholds[index + layout.EVENT_GOAL] = probabilityThreshold(cumulative);
  cumulative += (goals * rates.savedPerGoal) / total;
  thresholds[index + layout.EVENT_SHOT_ON_TARGET] = probabilityThreshold(cumulative);
  cumulative += (goals * rates.offTargetPerGoal) / total;
  thresholds[index + layout.EVENT_SHOT_OFF_TARGET] = probabilityThreshold(cumulative);
  cumulative += rates.yellow[sideStep]! / total;
  thresholds[index + layout.EVENT_YELLOW] = probabilityThreshold(cumulative);
  cumulative += rates.red[sideStep]! / total;
  thresholds[index + layout.EVENT_RED] = probabilityThreshold(cumulative);
  cumulative += rates.substitution[sideStep]! / total;
  thresholds[index + layout.EVENT_SUBSTITUTION] = probabilityThreshold(cumulative);
}

/**
 * The (score, red) cell of `side` within its (side, strength, step) block of the threshold table, in the
 * state (diff, men), both counted from home's side: diff is home's goals minus away's, men home's
 * opponents sent off minus home's (> 0: home has more players). The calibration's and the market fit's
 * passes (compile-calibration.ts, market-pass.ts) read the rates of a state here.
 */
export function rateCell(side: number, diff: number, men: number): number {
  const own = side === 0 ? diff : -diff;
  const score = Math.max(-2, Math.min(2, own)) + 2;
  const sideMen = side === 0 ? men : -men;
  const redBucket = sideMen < 0 ? 0 : sideMen === 0 ? 1 : 2;
  return score * layout.RED_CARD_BUCKETS + redBucket;
}

/**
 * The cumulative `u < threshold` cut-offs of every (side, strength, step, score, red) cell. A cell's goals
 * are base goals * goal curve * score multiplier * red multiplier * strength multiplier, multiplied in
 * that order (floating-point products are rounded at each step, and the tables must keep their bits).
 * A cell is a function of its step's rates alone, so each stretch's first step is worked out and copied
 * over the stretch (docs/decisions.md §6, "Compile").
 */
export function thresholdTable(
  rates: EventRates,
  strengthMultipliers: readonly number[],
  thresholds: Uint32Array = new Uint32Array(layout.THRESHOLD_WORDS),
): Uint32Array {
  const { changes } = rates;
  for (let side = 0; side < layout.SIDES; side++) {
    for (let strength = 0; strength < layout.STRENGTH_BUCKETS; strength++) {
      const multiplier = strengthMultipliers[strength]!;
      for (let stretch = 0; stretch < rates.stretches; stretch++) {
        const first = changes[stretch]!;
        const sideStep = side * layout.STEPS + first;
        for (let score = 0; score < layout.SCORE_STATE_BUCKETS; score++) {
          const scoreGoals = rates.goals[sideStep]! * rates.scoreMultipliers[score]!;
          for (let red = 0; red < layout.RED_CARD_BUCKETS; red++) {
            const goals = scoreGoals * rates.redMultipliers[red]! * multiplier;
            writeCell(
              thresholds,
              layout.thresholdIndex(side, strength, first, score, red),
              rates,
              sideStep,
              goals,
            );
          }
        }
        repeatStep(
          thresholds,
          layout.thresholdIndex(side, strength, first, 0, 0),
          changes[stretch + 1]! - first,
        );
      }
    }
  }
  return thresholds;
}

/**
 * Copies the step's block of cells at `at` over the next `steps - 1` steps, doubling the copied run each
 * time: a few copies a stretch, where one per step cost a typed array's copyWithin call (about a tenth
 * of a microsecond) a thousand times a compile.
 */
function repeatStep(thresholds: Uint32Array, at: number, steps: number): void {
  for (let filled = 1; filled < steps; ) {
    const copied = Math.min(filled, steps - filled);
    thresholds.copyWithin(
      at + filled * layout.THRESHOLD_STEP_STRIDE,
      at,
      at + copied * layout.THRESHOLD_STEP_STRIDE,
    );
    filled += copied;
  }
}

/** The rates' per-(side, step) factors and stretches, but the goals, which setBaseGoals writes. */
export function rateFactors(params: ModelParams, added: AddedTimeModel): EventRates {
  const goalCurve = stepCurve(params.goal_band_weights, added);
  const cardCurve = stepCurve(params.cards.band_weights, added);
  const subCurve = stepCurve(params.substitutions.band_weights, added);
  const { conversion, on_target_share } = params.shots;
  const yellowPerMatch = [params.cards.yellow_per_match.home, params.cards.yellow_per_match.away];
  const redPerMatch = [params.cards.straight_red_per_match.home, params.cards.straight_red_per_match.away];
  const subs = params.substitutions;
  const rates: EventRates = {
    goals: new Float64Array(layout.SIDES * layout.STEPS),
    yellow: new Float64Array(layout.SIDES * layout.STEPS),
    red: new Float64Array(layout.SIDES * layout.STEPS),
    substitution: new Float64Array(layout.SIDES * layout.STEPS),
    goalCurve,
    savedPerGoal: on_target_share / conversion - 1,
    offTargetPerGoal: (1 - on_target_share) / conversion,
    scoreMultipliers: Float64Array.from(params.score_state_multipliers),
    redMultipliers: Float64Array.from([
      params.red_card_multipliers.side_down,
      1,
      params.red_card_multipliers.side_up,
    ]),
    changes: new Int32Array(layout.STEPS + 1),
    stretches: 0,
    calibratedGoals: [0, 0],
  };
  for (let side = 0; side < layout.SIDES; side++) {
    for (let step = 0; step < layout.STEPS; step++) {
      const at = side * layout.STEPS + step;
      rates.yellow[at] = yellowPerMatch[side]! * cardCurve[step]!;
      rates.red[at] = redPerMatch[side]! * cardCurve[step]!;
      const halfTime = step === layout.SECOND_HALF_START ? subs.half_time_share : 0;
      rates.substitution[at] =
        subs.expected_per_side * (halfTime + (1 - subs.half_time_share) * subCurve[step]!);
    }
  }
  rates.stretches = findChanges(rates);
  return rates;
}

/**
 * Fills rates.changes: step 0, then every step at which a side's goal curve, cards or substitutions
 * differ from the step before's (a side's goals are its base times the curve, so equal curves give equal
 * goals whatever the base), then STEPS. Returns the number of stretches.
 */
function findChanges(rates: EventRates): number {
  const { changes, goalCurve } = rates;
  let count = 0;
  changes[count++] = 0;
  for (let step = 1; step < layout.STEPS; step++) {
    let same = goalCurve[step] === goalCurve[step - 1];
    for (let side = 0; side < layout.SIDES && same; side++) {
      const at = side * layout.STEPS + step;
      same =
        rates.yellow[at] === rates.yellow[at - 1] &&
        rates.red[at] === rates.red[at - 1] &&
        rates.substitution[at] === rates.substitution[at - 1];
    }
    if (!same) changes[count++] = step;
  }
  changes[count] = layout.STEPS;
  return count;
}

/** Each side's goals at each step: its base goals times the goal curve. */
export function setBaseGoals(rates: EventRates, base: readonly number[]): void {
  for (let side = 0; side < layout.SIDES; side++) {
    for (let step = 0; step < layout.STEPS; step++)
      rates.goals[side * layout.STEPS + step] = base[side]! * rates.goalCurve[step]!;
  }
}
