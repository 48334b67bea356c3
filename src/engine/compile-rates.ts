// The event rates of a fixture (compile.ts compileFixture): added time, the per-step curves, the base
// goal rates calibrated to the ratings' expected goals under the in-match dynamics, and the threshold
// table the engines read.
import {
  EVENT_GOAL,
  EVENT_RED,
  EVENT_SHOT_OFF_TARGET,
  EVENT_SHOT_ON_TARGET,
  EVENT_SUBSTITUTION,
  EVENT_YELLOW,
  FIRST_HALF_ADDED_START,
  RED_CARD_BUCKETS,
  SCORE_STATE_BUCKETS,
  SECOND_HALF_ADDED_START,
  SECOND_HALF_START,
  SIDES,
  STEP_BAND,
  STEPS,
  STRENGTH_BUCKETS,
  THRESHOLD_STEP_STRIDE,
  THRESHOLD_WORDS,
  thresholdIndex,
} from '../engine-contract/layout.js';
import type { ModelParams } from '../engine-contract/model-params.js';

const TWO_POW_32 = 4294967296;
/** Relative error at which the calibration of base goal rates stops. */
const CALIBRATION_TOLERANCE = 1e-7;

/** A probability as a `u < threshold` cut-off. */
export function probabilityThreshold(p: number): number {
  if (!(p > 0)) return 0;
  return Math.min(TWO_POW_32 - 1, Math.floor(p * TWO_POW_32));
}

interface AddedTimeModel {
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
  const stepPlayed = Array.from({ length: STEPS }, (_, step) => {
    if (step >= FIRST_HALF_ADDED_START && step < SECOND_HALF_START) {
      return 1 - firstCumulative[step - FIRST_HALF_ADDED_START]!;
    }
    if (step >= SECOND_HALF_ADDED_START) return 1 - secondCumulative[step - SECOND_HALF_ADDED_START]!;
    return 1;
  });
  const bandSteps = new Array<number>(6).fill(0);
  stepPlayed.forEach((p, step) => {
    bandSteps[STEP_BAND[step]!]! += p;
  });
  return { firstCumulative, secondCumulative, stepPlayed, bandSteps };
}

/** Per-step shape of a band-weighted rate: sums to 1 over the expected played steps of a match. */
function stepCurve(bandWeights: readonly number[], added: AddedTimeModel): number[] {
  const total = bandWeights.reduce((a, b) => a + b, 0);
  return STEP_BAND.map((band) => bandWeights[band]! / total / added.bandSteps[band]!);
}

/**
 * A side's event rates at a step before the cell's multipliers, index side * STEPS + step: a cell's
 * categorical draw is these times its score, red-card and strength multipliers (categoricalRates). Each
 * product is formed in the order the per-cell formula always used, so the compiled tables keep their bits.
 */
interface EventRates {
  /** base goals of the side * goal curve at the step (rewritten by each calibration round). */
  goals: Float64Array;
  yellow: Float64Array;
  red: Float64Array;
  substitution: Float64Array;
  savedPerGoal: number;
  offTargetPerGoal: number;
  scoreMultipliers: Float64Array;
  redMultipliers: Float64Array;
  /** Goals per match of each side under the dynamics, after calibration (for tests and reports). */
  calibratedGoals: [number, number];
}

/**
 * Rates per minute become one categorical draw per side and step whose marginals equal the rates (at
 * most one event per side and minute; a per-minute total above 1 is scaled down, never reached with
 * football's rates, about 0.2). The scale of a cell whose rates are `goals` (times savedPerGoal and
 * offTargetPerGoal for the shots) and the (side, step) factors at `sideStep`: 1, or 1 / their total.
 */
function categoricalTotal(rates: EventRates, sideStep: number, goals: number): number {
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
  thresholds[index + EVENT_GOAL] = probabilityThreshold(cumulative);
  cumulative += (goals * rates.savedPerGoal) / total;
  thresholds[index + EVENT_SHOT_ON_TARGET] = probabilityThreshold(cumulative);
  cumulative += (goals * rates.offTargetPerGoal) / total;
  thresholds[index + EVENT_SHOT_OFF_TARGET] = probabilityThreshold(cumulative);
  cumulative += rates.yellow[sideStep]! / total;
  thresholds[index + EVENT_YELLOW] = probabilityThreshold(cumulative);
  cumulative += rates.red[sideStep]! / total;
  thresholds[index + EVENT_RED] = probabilityThreshold(cumulative);
  cumulative += rates.substitution[sideStep]! / total;
  thresholds[index + EVENT_SUBSTITUTION] = probabilityThreshold(cumulative);
}

/**
 * The cumulative `u < threshold` cut-offs of every (side, strength, step, score, red) cell. A cell's goals
 * are base goals * goal curve * score multiplier * red multiplier * strength multiplier, multiplied in
 * that order (floating-point products are rounded at each step, and the tables must keep their bits).
 */
export function thresholdTable(
  rates: EventRates,
  strengthMultipliers: readonly number[],
  thresholds: Uint32Array = new Uint32Array(THRESHOLD_WORDS),
): Uint32Array {
  for (let side = 0; side < SIDES; side++) {
    for (let strength = 0; strength < STRENGTH_BUCKETS; strength++) {
      const multiplier = strengthMultipliers[strength]!;
      for (let step = 0; step < STEPS; step++) {
        const sideStep = side * STEPS + step;
        const at = thresholdIndex(side, strength, step, 0, 0);
        if (step > 0 && sameRates(rates, sideStep - 1, sideStep)) {
          thresholds.copyWithin(at, at - THRESHOLD_STEP_STRIDE, at);
          continue;
        }
        for (let score = 0; score < SCORE_STATE_BUCKETS; score++) {
          const scoreGoals = rates.goals[sideStep]! * rates.scoreMultipliers[score]!;
          for (let red = 0; red < RED_CARD_BUCKETS; red++) {
            const goals = scoreGoals * rates.redMultipliers[red]! * multiplier;
            writeCell(thresholds, thresholdIndex(side, strength, step, score, red), rates, sideStep, goals);
          }
        }
      }
    }
  }
  return thresholds;
}

/**
 * Whether two (side, step) entries of `rates` are equal: the model's rates change by 15-minute band, so
 * most steps repeat the step before, and a cell is a function of its step's rates alone. Copying such a
 * step's cells gives the bits computing them would (docs/decisions.md §6, "What a job costs the host").
 */
function sameRates(rates: EventRates, a: number, b: number): boolean {
  return (
    rates.goals[a] === rates.goals[b] &&
    rates.yellow[a] === rates.yellow[b] &&
    rates.red[a] === rates.red[b] &&
    rates.substitution[a] === rates.substitution[b]
  );
}

/** The rates' per-(side, step) factors but the goals, which setBaseGoals writes. */
function rateFactors(params: ModelParams, added: AddedTimeModel): EventRates {
  const cardCurve = stepCurve(params.cards.band_weights, added);
  const subCurve = stepCurve(params.substitutions.band_weights, added);
  const { conversion, on_target_share } = params.shots;
  const yellowPerMatch = [params.cards.yellow_per_match.home, params.cards.yellow_per_match.away];
  const redPerMatch = [params.cards.straight_red_per_match.home, params.cards.straight_red_per_match.away];
  const subs = params.substitutions;
  const rates: EventRates = {
    goals: new Float64Array(SIDES * STEPS),
    yellow: new Float64Array(SIDES * STEPS),
    red: new Float64Array(SIDES * STEPS),
    substitution: new Float64Array(SIDES * STEPS),
    savedPerGoal: on_target_share / conversion - 1,
    offTargetPerGoal: (1 - on_target_share) / conversion,
    scoreMultipliers: Float64Array.from(params.score_state_multipliers),
    redMultipliers: Float64Array.from([
      params.red_card_multipliers.side_down,
      1,
      params.red_card_multipliers.side_up,
    ]),
    calibratedGoals: [0, 0],
  };
  for (let side = 0; side < SIDES; side++) {
    for (let step = 0; step < STEPS; step++) {
      const at = side * STEPS + step;
      rates.yellow[at] = yellowPerMatch[side]! * cardCurve[step]!;
      rates.red[at] = redPerMatch[side]! * cardCurve[step]!;
      const halfTime = step === SECOND_HALF_START ? subs.half_time_share : 0;
      rates.substitution[at] =
        subs.expected_per_side * (halfTime + (1 - subs.half_time_share) * subCurve[step]!);
    }
  }
  return rates;
}

function setBaseGoals(rates: EventRates, goalCurve: readonly number[], base: readonly number[]): void {
  for (let side = 0; side < SIDES; side++) {
    for (let step = 0; step < STEPS; step++)
      rates.goals[side * STEPS + step] = base[side]! * goalCurve[step]!;
  }
}

/** Rounds of calibration at most; they stop earlier once both corrections are within tolerance. */
const CALIBRATION_ROUNDS = 8;

export function eventRates(
  params: ModelParams,
  added: AddedTimeModel,
  ratedGoals: [number, number],
): EventRates {
  const goalCurve = stepCurve(params.goal_band_weights, added);
  const rates = rateFactors(params, added);
  const base = [...ratedGoals];
  // Score-state and red-card effects shift a side's goals away from its rated figure: find the base
  // rates whose simulated expectation equals the rating (a few fixed-point rounds of an exact forward
  // pass over goal difference and player-count difference).
  const probabilities: StepProbabilities = {
    goal: new Float64Array(SIDES * STEPS * RATE_CELLS),
    red: new Float64Array(SIDES * STEPS * RATE_CELLS),
  };
  let simulated: [number, number] = [...ratedGoals];
  for (let round = 0; round < CALIBRATION_ROUNDS; round++) {
    setBaseGoals(rates, goalCurve, base);
    stepProbabilities(rates, probabilities);
    simulated = expectedGoalsUnderDynamics(added, probabilities);
    let converged = true;
    for (let side = 0; side < SIDES; side++) {
      if (!(simulated[side]! > 0)) continue;
      const correction = ratedGoals[side]! / simulated[side]!;
      if (Math.abs(correction - 1) > CALIBRATION_TOLERANCE) converged = false;
      base[side] = base[side]! * correction;
    }
    if (converged) break;
  }
  setBaseGoals(rates, goalCurve, base);
  rates.calibratedGoals = simulated;
  return rates;
}

const MAX_DIFF = 10;
const MAX_MEN_DIFF = 2;
const NEGLIGIBLE_MASS = 1e-13;
const MEN_STATES = 2 * MAX_MEN_DIFF + 1;
/** States of the forward pass: goal difference × player-count difference. */
const DYNAMICS_STATES = (2 * MAX_DIFF + 1) * MEN_STATES;
/** Rate cells of one (side, step): score bucket × red bucket. */
const RATE_CELLS = SCORE_STATE_BUCKETS * RED_CARD_BUCKETS;

/** Goal and red-card probabilities of each (side, step, score bucket, red bucket). */
interface StepProbabilities {
  goal: Float64Array;
  red: Float64Array;
}

function stateIndex(diff: number, men: number): number {
  return (diff + MAX_DIFF) * MEN_STATES + (men + MAX_MEN_DIFF);
}

/**
 * The forward pass's fixed geometry, built once: each state's rate cell for each side (the offset
 * within a (side, step) block) and where each of its six moves (besides staying) lands, clamped at the
 * edges: (+1, +1), (+1, 0), (-1, -1), (0, -1), (-1, 0), (0, +1) in (goal difference, men difference).
 */
const STATE_MOVES = [
  [1, 1],
  [1, 0],
  [-1, -1],
  [0, -1],
  [-1, 0],
  [0, 1],
] as const;
const MOVES = STATE_MOVES.length;
const HOME_CELL = new Int32Array(DYNAMICS_STATES);
const AWAY_CELL = new Int32Array(DYNAMICS_STATES);
const MOVE_TO = new Int32Array(DYNAMICS_STATES * MOVES);
for (let diff = -MAX_DIFF; diff <= MAX_DIFF; diff++) {
  for (let men = -MAX_MEN_DIFF; men <= MAX_MEN_DIFF; men++) {
    const i = stateIndex(diff, men);
    HOME_CELL[i] = rateCell(0, diff, men);
    AWAY_CELL[i] = rateCell(1, diff, men);
    STATE_MOVES.forEach(([dDiff, dMen], m) => {
      const d = Math.max(-MAX_DIFF, Math.min(MAX_DIFF, diff + dDiff));
      const n = Math.max(-MAX_MEN_DIFF, Math.min(MAX_MEN_DIFF, men + dMen));
      MOVE_TO[i * MOVES + m] = stateIndex(d, n);
    });
  }
}

/**
 * Expected goals of both sides under the score-state and red-card dynamics (at neutral lineup strength),
 * by propagating the distribution of (goal difference, red-card difference) through the steps. Added
 * steps are nested (step k+1 is played only if step k is), so the pass keeps the distribution of draws
 * still playing and folds finished ones back in after the added-time block.
 */
function expectedGoalsUnderDynamics(
  added: AddedTimeModel,
  probabilities: StepProbabilities,
): [number, number] {
  let dist = new Float64Array(DYNAMICS_STATES);
  let next = new Float64Array(DYNAMICS_STATES);
  const finished = new Float64Array(DYNAMICS_STATES);
  dist[stateIndex(0, 0)] = 1;
  const goals = new Float64Array(SIDES);
  let reach = 1; // P(this added step is played) before folding
  for (let step = 0; step < STEPS; step++) {
    const inAdded =
      (step >= FIRST_HALF_ADDED_START && step < SECOND_HALF_START) || step >= SECOND_HALF_ADDED_START;
    if (inAdded) {
      const played = added.stepPlayed[step]!;
      setAsideStopped(dist, finished, reach, played);
      reach = played;
    }
    next.fill(0);
    playStep(dist, next, step, probabilities, goals);
    [dist, next] = [next, dist];
    const lastAdded = step === SECOND_HALF_START - 1 || step === STEPS - 1;
    if (lastAdded) {
      for (let i = 0; i < DYNAMICS_STATES; i++) dist[i]! += finished[i]!;
      finished.fill(0);
      reach = 1;
    }
  }
  return [goals[0]!, goals[1]!];
}

/**
 * Goal and red-card probabilities of each (side, step, score bucket, red bucket) at neutral strength (a
 * strength multiplier of 1 changes no bit of a product), as thresholdTable computes them.
 */
function stepProbabilities(rates: EventRates, out: StepProbabilities): void {
  for (let sideStep = 0; sideStep < SIDES * STEPS; sideStep++) {
    if (sideStep % STEPS !== 0 && sameRates(rates, sideStep - 1, sideStep)) {
      const at = sideStep * RATE_CELLS;
      out.goal.copyWithin(at, at - RATE_CELLS, at);
      out.red.copyWithin(at, at - RATE_CELLS, at);
      continue;
    }
    for (let score = 0; score < SCORE_STATE_BUCKETS; score++) {
      const scoreGoals = rates.goals[sideStep]! * rates.scoreMultipliers[score]!;
      for (let redBucket = 0; redBucket < RED_CARD_BUCKETS; redBucket++) {
        const at = sideStep * RATE_CELLS + score * RED_CARD_BUCKETS + redBucket;
        const goals = scoreGoals * rates.redMultipliers[redBucket]!;
        const total = categoricalTotal(rates, sideStep, goals);
        out.goal[at] = goals / total;
        out.red[at] = rates.red[sideStep]! / total;
      }
    }
  }
}

/** The rate cell of `side` in state (diff, men), both counted from home's side, within its (side, step) block. */
function rateCell(side: number, diff: number, men: number): number {
  // men = home's opponents sent off minus home's: > 0 means home has more players.
  const own = side === 0 ? diff : -diff;
  const score = Math.max(-2, Math.min(2, own)) + 2;
  const sideMen = side === 0 ? men : -men;
  const redBucket = sideMen < 0 ? 0 : sideMen === 0 ? 1 : 2;
  return score * RED_CARD_BUCKETS + redBucket;
}

/**
 * At an added step: moves the draws whose half ended before it (reach − played of them) from `dist`
 * to `finished`, leaving in `dist` the draws that play it.
 */
function setAsideStopped(dist: Float64Array, finished: Float64Array, reach: number, played: number): void {
  const stopping = reach - played; // draws whose half ended before this step
  if (stopping > 0 && reach > 0) {
    for (let i = 0; i < DYNAMICS_STATES; i++) finished[i]! += (dist[i]! * stopping) / reach;
    const keep = played / reach;
    for (let i = 0; i < DYNAMICS_STATES; i++) dist[i]! *= keep;
  }
}

/**
 * One step of the forward pass: adds the step's expected goals to `goals` and spreads `dist` into `next`.
 * The sums are made in state order and, within a state, in move order, as they always were: floating-point
 * addition is not associative, and the calibrated rates must keep their last bits. (A move of zero mass
 * adds nothing: `next` holds no -0.)
 */
function playStep(
  dist: Float64Array,
  next: Float64Array,
  step: number,
  { goal, red }: StepProbabilities,
  goals: Float64Array,
): void {
  const homeAt = step * RATE_CELLS;
  const awayAt = (STEPS + step) * RATE_CELLS;
  let homeGoals = goals[0]!;
  let awayGoals = goals[1]!;
  for (let i = 0; i < DYNAMICS_STATES; i++) {
    const mass = dist[i]!;
    if (mass < NEGLIGIBLE_MASS) continue; // far tails (10-goal margins) change nothing measurable
    const homeCell = homeAt + HOME_CELL[i]!;
    const awayCell = awayAt + AWAY_CELL[i]!;
    const homeGoal = goal[homeCell]!;
    const homeRed = red[homeCell]!;
    const awayGoal = goal[awayCell]!;
    const awayRed = red[awayCell]!;
    homeGoals += mass * homeGoal;
    awayGoals += mass * awayGoal;
    const homeNone = 1 - homeGoal - homeRed;
    const awayNone = 1 - awayGoal - awayRed;
    const to = i * MOVES;
    next[i]! += mass * (homeGoal * awayGoal + homeRed * awayRed + homeNone * awayNone);
    next[MOVE_TO[to]!]! += mass * homeGoal * awayRed;
    next[MOVE_TO[to + 1]!]! += mass * homeGoal * awayNone;
    next[MOVE_TO[to + 2]!]! += mass * homeRed * awayGoal;
    next[MOVE_TO[to + 3]!]! += mass * homeRed * awayNone;
    next[MOVE_TO[to + 4]!]! += mass * homeNone * awayGoal;
    next[MOVE_TO[to + 5]!]! += mass * homeNone * awayRed;
  }
  goals[0] = homeGoals;
  goals[1] = awayGoals;
}
