// Per-step event probabilities of the match model, for the exact forward pass (minute-model.ts):
// either read from a fixture the engine compiled (the engine's own numbers, to the last bit of its
// thresholds), or built from model parameters directly (fast, for fitting the parameters themselves).
import type { CompiledFixture } from '../src/engine-contract/layout.js';
import {
  EVENT_GOAL,
  EVENT_RED,
  EVENT_YELLOW,
  FX_ADDED_TIME_FIRST,
  FX_ADDED_TIME_SECOND,
  SECOND_HALF_ADDED_START,
  STEP_BAND,
  thresholdIndex,
} from '../src/engine-contract/layout.js';
import type { ModelParams } from '../src/engine-contract/model-params.js';
import {
  emptyStepTable,
  expectedGoalsUnder,
  FIRST_HALF_ADDED_START,
  SECOND_HALF_START,
  STEPS,
  type StepProbabilityTable,
  stepTableIndex,
} from './minute-model.js';

const TWO_POW_32 = 4294967296;
const ADDED_STEPS = 10;
/** The lineup-strength bucket of an XI exactly as strong as expected (src/engine/compile.ts). */
const NEUTRAL_STRENGTH = 2;

/** The engine's own per-step goal and straight-red probabilities for a compiled fixture (neutral XI). */
export function stepTableFromCompiled(compiled: CompiledFixture): StepProbabilityTable {
  const played = (offset: number) => {
    // The fixture table holds P(added <= k) as u32 cut-offs; a step k (0-based) is played when added > k.
    return Array.from({ length: ADDED_STEPS }, (_, k) => 1 - compiled.fixture[offset + k]! / TWO_POW_32);
  };
  const stepPlayed = stepPlayedFrom(played(FX_ADDED_TIME_FIRST), played(FX_ADDED_TIME_SECOND));
  const table = emptyStepTable(stepPlayed);
  for (let side = 0; side < 2; side++) {
    for (let step = 0; step < STEPS; step++) {
      for (let score = 0; score < 5; score++) {
        for (let red = 0; red < 3; red++) {
          const at = thresholdIndex(side, NEUTRAL_STRENGTH, step, score, red);
          const goalCut = compiled.thresholds[at + EVENT_GOAL]!;
          const out = stepTableIndex(side, step, score, red);
          table.goal[out] = goalCut / TWO_POW_32;
          table.red[out] =
            (compiled.thresholds[at + EVENT_RED]! - compiled.thresholds[at + EVENT_YELLOW]!) / TWO_POW_32;
        }
      }
    }
  }
  return table;
}

function stepPlayedFrom(firstAdded: number[], secondAdded: number[]): number[] {
  return Array.from({ length: STEPS }, (_, step) => {
    if (step >= FIRST_HALF_ADDED_START && step < SECOND_HALF_START)
      return firstAdded[step - FIRST_HALF_ADDED_START]!;
    if (step >= SECOND_HALF_ADDED_START) return secondAdded[step - SECOND_HALF_ADDED_START]!;
    return 1;
  });
}

/** P(step played) from the added-time distributions of the parameters. */
function stepPlayedFromParams(params: ModelParams): number[] {
  const survival = (weights: readonly number[]) => {
    const total = weights.reduce((a, b) => a + b, 0);
    let running = 0;
    // played step k ⇔ added minutes > k
    return Array.from({ length: ADDED_STEPS }, (_, k) => {
      running += weights[k]! / total;
      return Math.max(0, 1 - running);
    });
  };
  return stepPlayedFrom(survival(params.added_time.first_half), survival(params.added_time.second_half));
}

/** Per-step shape of a band-weighted rate: sums to 1 over the expected played steps of a match. */
export function stepCurve(bandWeights: readonly number[], stepPlayed: readonly number[]): number[] {
  const bandSteps = new Array<number>(6).fill(0);
  stepPlayed.forEach((p, step) => {
    bandSteps[STEP_BAND[step]!]! += p;
  });
  const total = bandWeights.reduce((a, b) => a + b, 0);
  return Array.from({ length: STEPS }, (_, step) => {
    const band = STEP_BAND[step]!;
    return bandWeights[band]! / total / bandSteps[band]!;
  });
}

export interface StepRateModel {
  /** The step table for given base goal rates per match (before score-state and red-card effects). */
  table(base: readonly [number, number]): StepProbabilityTable;
  /** Base rates whose expected goals under the dynamics equal the rated figures (fixed-point rounds). */
  calibratedBase(ratedGoals: readonly [number, number], rounds?: number): [number, number];
}

/**
 * Goal and straight-red probabilities per step from the parameters, with each side's base goal rate
 * scaled so its expected goals under the dynamics equal the rated figure (as the engine's compiler
 * does). The engine draws one event per side and step; its probabilities are the per-minute rates.
 */
export function makeStepRateModel(params: ModelParams): StepRateModel {
  const stepPlayed = stepPlayedFromParams(params);
  const goalCurve = stepCurve(params.goal_band_weights, stepPlayed);
  const cardCurve = stepCurve(params.cards.band_weights, stepPlayed);
  const subCurve = stepCurve(params.substitutions.band_weights, stepPlayed);
  const shotsPerGoal = 1 / params.shots.conversion - 1;
  const yellow = [params.cards.yellow_per_match.home, params.cards.yellow_per_match.away];
  const red = [params.cards.straight_red_per_match.home, params.cards.straight_red_per_match.away];
  const redMultiplier = [params.red_card_multipliers.side_down, 1, params.red_card_multipliers.side_up];
  const subs = params.substitutions;
  const otherEvents = [0, 1].map((side) =>
    Array.from({ length: STEPS }, (_, step) => {
      const halfTime = step === SECOND_HALF_START ? subs.half_time_share : 0;
      return (
        (yellow[side]! + red[side]!) * cardCurve[step]! +
        subs.expected_per_side * (halfTime + (1 - subs.half_time_share) * subCurve[step]!)
      );
    }),
  );
  const table = (base: readonly [number, number]): StepProbabilityTable => {
    const out = emptyStepTable(stepPlayed);
    for (let side = 0; side < 2; side++) {
      for (let step = 0; step < STEPS; step++) {
        const redRate = red[side]! * cardCurve[step]!;
        const other = otherEvents[side]![step]!;
        for (let score = 0; score < 5; score++) {
          for (let r = 0; r < 3; r++) {
            const goal =
              base[side]! * goalCurve[step]! * params.score_state_multipliers[score]! * redMultiplier[r]!;
            // One categorical draw per side and step whose marginals equal the rates; a total above 1
            // (never reached with football's rates) is scaled down, as src/engine/compile.ts does.
            const total = goal * (1 + shotsPerGoal) + other;
            const scale = total > 1 ? 1 / total : 1;
            const at = stepTableIndex(side, step, score, r);
            out.goal[at] = goal * scale;
            out.red[at] = redRate * scale;
          }
        }
      }
    }
    return out;
  };
  return {
    table,
    calibratedBase(ratedGoals, rounds = 6) {
      const base: [number, number] = [ratedGoals[0], ratedGoals[1]];
      for (let round = 0; round < rounds; round++) {
        const simulated = expectedGoalsUnder(table(base));
        for (let side = 0; side < 2; side++) {
          if (simulated[side]! > 0) base[side] = base[side]! * (ratedGoals[side]! / simulated[side]!);
        }
      }
      return base;
    },
  };
}

export function stepTableFromParams(
  params: ModelParams,
  ratedGoals: readonly [number, number],
): StepProbabilityTable {
  const model = makeStepRateModel(params);
  return model.table(model.calibratedBase(ratedGoals));
}

/**
 * The calibration of base rates on a grid of rated goals, interpolated bilinearly in log space:
 * fitting evaluates thousands of matches per parameter trial, and the factor base/rated is smooth.
 */
export function calibrationGrid(
  model: StepRateModel,
  points = 6,
): (rated: readonly [number, number]) => [number, number] {
  const low = Math.log(0.2);
  const high = Math.log(4.5);
  const at = (i: number) => Math.exp(low + ((high - low) * i) / (points - 1));
  const factors: [number, number][] = [];
  for (let i = 0; i < points; i++) {
    for (let j = 0; j < points; j++) {
      const rated: [number, number] = [at(i), at(j)];
      const base = model.calibratedBase(rated, 4);
      factors.push([base[0] / rated[0], base[1] / rated[1]]);
    }
  }
  return (rated) => {
    const x = clampUnit((Math.log(rated[0]) - low) / (high - low)) * (points - 1);
    const y = clampUnit((Math.log(rated[1]) - low) / (high - low)) * (points - 1);
    const i = Math.min(points - 2, Math.floor(x));
    const j = Math.min(points - 2, Math.floor(y));
    const fx = x - i;
    const fy = y - j;
    const result: [number, number] = [0, 0];
    for (let side = 0; side < 2; side++) {
      const f00 = factors[i * points + j]![side]!;
      const f01 = factors[i * points + j + 1]![side]!;
      const f10 = factors[(i + 1) * points + j]![side]!;
      const f11 = factors[(i + 1) * points + j + 1]![side]!;
      const factor = (1 - fx) * ((1 - fy) * f00 + fy * f01) + fx * ((1 - fy) * f10 + fy * f11);
      result[side] = rated[side]! * factor;
    }
    return result;
  };
}

function clampUnit(x: number): number {
  return Math.max(0, Math.min(1, x));
}
