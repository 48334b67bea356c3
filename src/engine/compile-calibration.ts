// The base goal rates of a fixture (compile.ts compileFixture): score-state and red-card effects shift a
// side's goals away from its rated figure, so the base rates are calibrated until the goals expected
// under those dynamics equal the ratings' (a few fixed-point rounds of an exact forward pass over goal
// difference and player-count difference). The rounds' every bit is pinned by the compiled tables'
// golden digests (test/engine/golden.test.ts): how a pass is computed may change, its arithmetic only
// with a new model version (docs/decisions.md §13).
import * as layout from '../engine-contract/layout.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import {
  type AddedTimeModel,
  categoricalTotal,
  type EventRates,
  rateCell,
  rateFactors,
  setBaseGoals,
} from './compile-rates.js';

/** Relative error at which the calibration of base goal rates stops. */
const CALIBRATION_TOLERANCE = 1e-7;
/** Rounds of calibration at most; they stop earlier once both corrections are within tolerance. */
const CALIBRATION_ROUNDS = 8;

/**
 * What a calibration finds: each side's base goals, and the goals the last round expected under the
 * dynamics (EventRates.calibratedGoals). All the rates are a function of it and the model's constants.
 */
export interface Calibration {
  base: readonly [number, number];
  simulated: readonly [number, number];
}

/**
 * The fixture's event rates, their base goals calibrated to `ratedGoals` under the in-match dynamics,
 * and the calibration itself; or, given a `calibration` made before for the same constants and rated
 * goals (compile.ts RatesCache), the rates it gives without calibrating again: the same bits.
 */
export function eventRates(
  params: ModelParams,
  added: AddedTimeModel,
  ratedGoals: readonly [number, number],
  calibration?: Calibration,
): { rates: EventRates; calibration: Calibration } {
  const rates = rateFactors(params, added);
  const found = calibration ?? calibrate(rates, added, ratedGoals);
  setBaseGoals(rates, found.base);
  rates.calibratedGoals = [...found.simulated];
  return { rates, calibration: found };
}

/**
 * The goals each side is expected to score under the dynamics when its base goals are `base`: the rated
 * goals whose calibration gives these base goals (within CALIBRATION_TOLERANCE). A market fit
 * (market-fit.ts) finds base goals and states them as rated goals through this.
 */
export function ratedGoalsOfBase(
  rates: EventRates,
  added: AddedTimeModel,
  base: readonly [number, number],
): [number, number] {
  const probabilities = new Float64Array(layout.SIDES * rates.stretches * RATE_CELLS * 2);
  setBaseGoals(rates, base);
  stretchProbabilities(rates, probabilities);
  return expectedGoalsUnderDynamics(added, rates, probabilities);
}

function calibrate(
  rates: EventRates,
  added: AddedTimeModel,
  ratedGoals: readonly [number, number],
): Calibration {
  const base: [number, number] = [...ratedGoals];
  const probabilities = new Float64Array(layout.SIDES * rates.stretches * RATE_CELLS * 2);
  let simulated: [number, number] = [...ratedGoals];
  for (let round = 0; round < CALIBRATION_ROUNDS; round++) {
    setBaseGoals(rates, base);
    stretchProbabilities(rates, probabilities);
    simulated = expectedGoalsUnderDynamics(added, rates, probabilities);
    let converged = true;
    for (let side = 0; side < layout.SIDES; side++) {
      if (!(simulated[side]! > 0)) continue;
      const correction = ratedGoals[side]! / simulated[side]!;
      if (Math.abs(correction - 1) > CALIBRATION_TOLERANCE) converged = false;
      base[side] = base[side]! * correction;
    }
    if (converged) break;
  }
  return { base, simulated };
}

const MAX_DIFF = 10;
/**
 * Player-count differences beyond one count as one, as in the market pass (market-pass.ts): a rate cell
 * reads only the difference's sign, so only a red card the other way after two the same way is misplaced.
 */
const MAX_MEN_DIFF = 1;
/**
 * Mass below this is not carried on (10-goal margins), as in the market pass: at most some 1e-6 of the
 * whole over a match. It was 1e-13, with player-count differences to ±2, before model minute-9c1af992c0
 * (docs/decisions.md §13), whose backtest figures moved in the sixth decimal.
 */
const NEGLIGIBLE_MASS = 1e-10;
const MEN_STATES = 2 * MAX_MEN_DIFF + 1;
/** States of the forward pass: goal difference × player-count difference. */
const DYNAMICS_STATES = (2 * MAX_DIFF + 1) * MEN_STATES;
/** Rate cells of one (side, step): score bucket × red bucket. */
const RATE_CELLS = layout.SCORE_STATE_BUCKETS * layout.RED_CARD_BUCKETS;

function stateIndex(diff: number, men: number): number {
  return (diff + MAX_DIFF) * MEN_STATES + (men + MAX_MEN_DIFF);
}

/**
 * The forward pass's fixed geometry, built once: each state's rate cell for each side (the offset
 * within a (side, stretch) block) and where each of its six moves (besides staying) lands, clamped at the
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
 * Goal and red-card probabilities of each (side, stretch, score bucket, red bucket) at neutral strength
 * (a strength multiplier of 1 changes no bit of a product), as thresholdTable computes them: goal at
 * ((side * stretches + stretch) * RATE_CELLS + cell) * 2, red after it.
 */
function stretchProbabilities(rates: EventRates, out: Float64Array): void {
  for (let side = 0; side < layout.SIDES; side++) {
    for (let stretch = 0; stretch < rates.stretches; stretch++) {
      const sideStep = side * layout.STEPS + rates.changes[stretch]!;
      const block = (side * rates.stretches + stretch) * RATE_CELLS;
      for (let score = 0; score < layout.SCORE_STATE_BUCKETS; score++) {
        const scoreGoals = rates.goals[sideStep]! * rates.scoreMultipliers[score]!;
        for (let redBucket = 0; redBucket < layout.RED_CARD_BUCKETS; redBucket++) {
          const at = (block + score * layout.RED_CARD_BUCKETS + redBucket) * 2;
          const goals = scoreGoals * rates.redMultipliers[redBucket]!;
          const total = categoricalTotal(rates, sideStep, goals);
          out[at] = goals / total;
          out[at + 1] = rates.red[sideStep]! / total;
        }
      }
    }
  }
}

/**
 * What a state's draws do in a step of a stretch, the same for every step of it: per state, home's goal
 * and red-card probabilities, away's, each side's probability of neither, and of the state staying put
 * (both score, both see red, or neither does), formed as the per-state formula always formed them.
 */
const MOVE_WORDS = 7;

function stretchMoves(
  probabilities: Float64Array,
  stretches: number,
  stretch: number,
  moves: Float64Array,
): void {
  const homeAt = stretch * RATE_CELLS;
  const awayAt = (stretches + stretch) * RATE_CELLS;
  for (let i = 0; i < DYNAMICS_STATES; i++) {
    const homeCell = (homeAt + HOME_CELL[i]!) * 2;
    const awayCell = (awayAt + AWAY_CELL[i]!) * 2;
    const homeGoal = probabilities[homeCell]!;
    const homeRed = probabilities[homeCell + 1]!;
    const awayGoal = probabilities[awayCell]!;
    const awayRed = probabilities[awayCell + 1]!;
    const homeNone = 1 - homeGoal - homeRed;
    const awayNone = 1 - awayGoal - awayRed;
    const at = i * MOVE_WORDS;
    moves[at] = homeGoal;
    moves[at + 1] = homeRed;
    moves[at + 2] = homeNone;
    moves[at + 3] = awayGoal;
    moves[at + 4] = awayRed;
    moves[at + 5] = awayNone;
    moves[at + 6] = homeGoal * awayGoal + homeRed * awayRed + homeNone * awayNone;
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
  rates: EventRates,
  probabilities: Float64Array,
): [number, number] {
  let dist = new Float64Array(DYNAMICS_STATES);
  let next = new Float64Array(DYNAMICS_STATES);
  const finished = new Float64Array(DYNAMICS_STATES);
  const moves = new Float64Array(DYNAMICS_STATES * MOVE_WORDS);
  dist[stateIndex(0, 0)] = 1;
  const goals = new Float64Array(layout.SIDES);
  let reach = 1; // P(this added step is played) before folding
  let stretch = -1;
  for (let step = 0; step < layout.STEPS; step++) {
    if (step === rates.changes[stretch + 1]) {
      stretch++;
      stretchMoves(probabilities, rates.stretches, stretch, moves);
    }
    const inAdded =
      (step >= layout.FIRST_HALF_ADDED_START && step < layout.SECOND_HALF_START) ||
      step >= layout.SECOND_HALF_ADDED_START;
    if (inAdded) {
      const played = added.stepPlayed[step]!;
      setAsideStopped(dist, finished, reach, played);
      reach = played;
    }
    next.fill(0);
    playStep(dist, next, moves, goals);
    [dist, next] = [next, dist];
    const lastAdded = step === layout.SECOND_HALF_START - 1 || step === layout.STEPS - 1;
    if (lastAdded) {
      for (let i = 0; i < DYNAMICS_STATES; i++) dist[i]! += finished[i]!;
      finished.fill(0);
      reach = 1;
    }
  }
  return [goals[0]!, goals[1]!];
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
 * addition is not associative, and the calibrated rates must keep their last bits. A product such as
 * mass * homeGoal * awayRed is (mass * homeGoal) * awayRed, so each side's share of the mass is formed
 * once per state. (A move of zero mass adds nothing: `next` holds no -0.)
 */
function playStep(dist: Float64Array, next: Float64Array, moves: Float64Array, goals: Float64Array): void {
  let homeGoals = goals[0]!;
  let awayGoals = goals[1]!;
  for (let i = 0; i < DYNAMICS_STATES; i++) {
    const mass = dist[i]!;
    if (mass < NEGLIGIBLE_MASS) continue; // far tails (10-goal margins) change nothing measurable
    const at = i * MOVE_WORDS;
    const homeGoal = mass * moves[at]!;
    const homeRed = mass * moves[at + 1]!;
    const homeNone = mass * moves[at + 2]!;
    const awayGoal = moves[at + 3]!;
    const awayRed = moves[at + 4]!;
    const awayNone = moves[at + 5]!;
    homeGoals += homeGoal;
    awayGoals += mass * awayGoal;
    const to = i * MOVES;
    next[i]! += mass * moves[at + 6]!;
    next[MOVE_TO[to]!]! += homeGoal * awayRed;
    next[MOVE_TO[to + 1]!]! += homeGoal * awayNone;
    next[MOVE_TO[to + 2]!]! += homeRed * awayGoal;
    next[MOVE_TO[to + 3]!]! += homeRed * awayNone;
    next[MOVE_TO[to + 4]!]! += homeNone * awayGoal;
    next[MOVE_TO[to + 5]!]! += homeNone * awayRed;
  }
  goals[0] = homeGoals;
  goals[1] = awayGoals;
}
