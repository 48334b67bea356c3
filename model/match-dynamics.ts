// Score-state and red-card effects fitted by maximum likelihood on club results: each match's
// half-time and full-time scores under the exact minute model (minute-model.ts), with the teams'
// rated goals as fixed inputs. Because the engine rescales base rates so expected goals equal the
// ratings, these effects only reshape the score distribution (who scores when, given the state); the
// data that identifies them is how second halves go after each half-time state, and how the results of
// matches with a red card differ from their rated expectation.
import type { ModelParams } from '../src/engine-contract/model-params.js';
import { observedScoreLikelihood, type RedCardCondition } from './minute-model.js';
import { nelderMead } from './nelder-mead.js';
import { calibrationGrid, makeStepRateModel } from './step-rates.js';

export interface DynamicsSample {
  rated: [number, number];
  halfTime: { home: number; away: number } | null;
  fullTime: { home: number; away: number };
  redCard: RedCardCondition;
}

/** Log-likelihood of the samples under the parameters (calibrated base rates, as the engine uses). */
function dynamicsLogLikelihood(params: ModelParams, samples: readonly DynamicsSample[]): number {
  const model = makeStepRateModel(params);
  const baseFor = calibrationGrid(model);
  let total = 0;
  for (const sample of samples) {
    const table = model.table(baseFor(sample.rated));
    const p = observedScoreLikelihood(table, sample.halfTime, sample.fullTime, sample.redCard);
    total += Math.log(Math.max(p, 1e-300));
  }
  return total;
}

export interface DynamicsFit {
  scoreStateMultipliers: number[];
  redCardMultipliers: { side_down: number; side_up: number };
  /** Mean log-likelihood per match before and after, on the matches each part was fitted on. */
  scoreState: { matches: number; before: number; after: number };
  redCard: { matches: number; before: number; after: number };
}

/**
 * Fits the four score-state multipliers (level stays 1: the base rate carries the scale) on matches
 * without a red card, then the two red-card multipliers on matches with exactly one.
 */
export function fitMatchDynamics(
  params: ModelParams,
  samples: readonly DynamicsSample[],
  options: { maxEvaluations?: number } = {},
): DynamicsFit {
  const plain = samples.filter((s) => s.redCard === 'none' && s.halfTime !== null);
  const carded = samples.filter((s) => s.redCard !== 'none');
  const withScoreState = (x: number[]): ModelParams => ({
    ...params,
    score_state_multipliers: [Math.exp(x[0]!), Math.exp(x[1]!), 1, Math.exp(x[2]!), Math.exp(x[3]!)],
  });
  const startState = [0, 1, 3, 4].map((i) => Math.log(params.score_state_multipliers[i]!));
  const state = fitPart(params, plain, withScoreState, startState, {
    step: 0.1,
    maxEvaluations: options.maxEvaluations ?? 120,
  });

  const withRed = (x: number[]): ModelParams => ({
    ...state.params,
    red_card_multipliers: { side_down: Math.exp(x[0]!), side_up: Math.exp(x[1]!) },
  });
  const startRed = [
    Math.log(params.red_card_multipliers.side_down),
    Math.log(params.red_card_multipliers.side_up),
  ];
  const red = fitPart(state.params, carded, withRed, startRed, {
    step: 0.15,
    maxEvaluations: options.maxEvaluations ?? 80,
  });
  return {
    scoreStateMultipliers: red.params.score_state_multipliers,
    redCardMultipliers: red.params.red_card_multipliers,
    scoreState: state.fit,
    redCard: red.fit,
  };
}

/**
 * One part of the dynamics fitted by Nelder-Mead from `start` on `matches`: the constants `withX` makes of
 * the point found, and the mean log-likelihood per match before (at `from`) and after.
 */
function fitPart(
  from: ModelParams,
  matches: readonly DynamicsSample[],
  withX: (x: number[]) => ModelParams,
  start: number[],
  search: { step: number; maxEvaluations: number },
): { params: ModelParams; fit: { matches: number; before: number; after: number } } {
  const before = dynamicsLogLikelihood(from, matches);
  const found = nelderMead((x) => -dynamicsLogLikelihood(withX(x), matches), start, {
    ...search,
    tolerance: 1e-7,
  });
  const n = Math.max(1, matches.length);
  return {
    params: withX(found.x),
    fit: { matches: matches.length, before: before / n, after: -found.value / n },
  };
}
