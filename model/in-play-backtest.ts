// The in-play backtest (docs/model.md "In play", issue 52 item 4): from the half-time score of every
// held-out league match (the results files carry it), the model's forecast of the final result from that
// state (the engine's per-step probabilities pushed through the second half by minute-model.ts, the
// analytic twin of an in-play run from minute 46), beside a plain baseline (independent Poisson goals for
// the half left at the pre-match rated goals, half of each) and beside the pre-match forecast of the same
// matches: ranked probability score, log loss and calibration error of the final 1X2. The ratings are
// the walk-forward ones of model/backtest.ts (each match rated on matches before its day only), the
// constants fitted on the seasons before the first held-out one, as there.

import {
  type Outcome,
  outcomeOf,
  rankedProbabilityScore,
  type ThreeWay,
  threeWayScores,
} from './forecast-scores.js';
import { type HeldOutOptions, prepareHeldOut } from './held-out.js';
import { SECOND_HALF_START, scoreDistribution, scoreDistributionFrom } from './minute-model.js';
import { walkForward } from './walk-forward.js';

const MAX_GOALS = 10;

/** The held-out seasons and model of prepareHeldOut (held-out.ts), as the pre-match backtest takes them. */
export interface InPlayBacktestOptions extends HeldOutOptions {
  onProgress?: (message: string) => void;
}

export interface InPlayMetrics {
  rps_1x2: number;
  log_loss_1x2: number;
  ece_1x2: number;
  /** The mean forecast draw probability, beside the observed draw rate. */
  mean_draw: number;
}

export interface InPlayBacktestResult {
  held_out_seasons: number[];
  competitions: string[];
  /** Minute band of the states scored: the half-time score, the state at the start of minute 46. */
  minute_band: 'half_time';
  matches: number;
  observed_draw_rate: number;
  model_from_half_time: InPlayMetrics;
  poisson_baseline_from_half_time: InPlayMetrics;
  pre_match_model: InPlayMetrics;
  /** By half-time goal difference (home minus away, clamped to ±2): matches and each forecaster's RPS. */
  by_half_time_margin: Record<
    string,
    { matches: number; model: number; baseline: number; pre_match: number }
  >;
}

function threeWayOf(grid: Float64Array, size: number): ThreeWay {
  const out = { home: 0, draw: 0, away: 0 };
  for (let h = 0; h < size; h++) {
    for (let a = 0; a < size; a++) {
      const p = grid[h * size + a]!;
      if (h > a) out.home += p;
      else if (h === a) out.draw += p;
      else out.away += p;
    }
  }
  const total = out.home + out.draw + out.away;
  return { home: out.home / total, draw: out.draw / total, away: out.away / total };
}

function poissonPmf(lambda: number, max: number): number[] {
  const pmf: number[] = [];
  let p = Math.exp(-lambda);
  for (let k = 0; k <= max; k++) {
    pmf.push(p);
    p *= lambda / (k + 1);
  }
  return pmf;
}

/** Independent Poisson goals for the time left, added to the state's score. */
export function poissonFromState(
  score: { home: number; away: number },
  lambdaHome: number,
  lambdaAway: number,
): ThreeWay {
  const home = poissonPmf(lambdaHome, 15);
  const away = poissonPmf(lambdaAway, 15);
  const out = { home: 0, draw: 0, away: 0 };
  for (let h = 0; h <= 15; h++) {
    for (let a = 0; a <= 15; a++) {
      const p = home[h]! * away[a]!;
      const diff = score.home + h - (score.away + a);
      if (diff > 0) out.home += p;
      else if (diff === 0) out.draw += p;
      else out.away += p;
    }
  }
  const total = out.home + out.draw + out.away;
  return { home: out.home / total, draw: out.draw / total, away: out.away / total };
}

function metricsOf(forecasts: readonly ThreeWay[], outcomes: readonly Outcome[]): InPlayMetrics {
  const draw = forecasts.reduce((sum, f) => sum + f.draw, 0);
  return { ...threeWayScores(forecasts, outcomes), mean_draw: draw / Math.max(1, forecasts.length) };
}

export async function backtestInPlay(options: InPlayBacktestOptions): Promise<InPlayBacktestResult> {
  const log = options.onProgress ?? (() => {});
  const { heldOutSeasons, matches, competitions, stepModels } = await prepareHeldOut(
    options,
    'in-play backtest',
    log,
  );
  log(`in-play backtest: walk-forward ratings over seasons ${heldOutSeasons.join(', ')}`);
  const rated = walkForward(matches, { heldOutSeasons }).filter(({ match }) => match.halfTime !== null);
  log(`in-play backtest: ${rated.length} held-out matches with a half-time score`);
  const model: ThreeWay[] = [];
  const baseline: ThreeWay[] = [];
  const preMatch: ThreeWay[] = [];
  const outcomes: Outcome[] = [];
  const margins: string[] = [];
  for (const { match, model: m } of rated) {
    const stepModel = stepModels.get(`${match.competition} ${match.season}`)!;
    const table = stepModel.table(stepModel.calibratedBase([m.lambdaHome, m.lambdaAway], 5));
    const ht = match.halfTime!;
    preMatch.push(threeWayOf(scoreDistribution(table, { maxGoals: MAX_GOALS }).fullTime, MAX_GOALS + 1));
    model.push(
      threeWayOf(
        scoreDistributionFrom(
          table,
          { home: ht.home, away: ht.away, menAdvantage: 0 },
          SECOND_HALF_START,
          MAX_GOALS,
        ),
        MAX_GOALS + 1,
      ),
    );
    baseline.push(poissonFromState(ht, m.lambdaHome / 2, m.lambdaAway / 2));
    outcomes.push(outcomeOf(match.homeGoals, match.awayGoals));
    margins.push(String(Math.max(-2, Math.min(2, ht.home - ht.away))));
  }
  const byMargin: InPlayBacktestResult['by_half_time_margin'] = {};
  for (const margin of ['-2', '-1', '0', '1', '2']) {
    const at = margins.flatMap((value, i) => (value === margin ? [i] : []));
    const rps = (forecasts: readonly ThreeWay[]) =>
      at.reduce((sum, i) => sum + rankedProbabilityScore(forecasts[i]!, outcomes[i]!), 0) /
      Math.max(1, at.length);
    byMargin[margin] = {
      matches: at.length,
      model: rps(model),
      baseline: rps(baseline),
      pre_match: rps(preMatch),
    };
  }
  return {
    held_out_seasons: heldOutSeasons,
    competitions,
    minute_band: 'half_time',
    matches: rated.length,
    observed_draw_rate: outcomes.filter((o) => o === 'draw').length / Math.max(1, outcomes.length),
    model_from_half_time: metricsOf(model, outcomes),
    poisson_baseline_from_half_time: metricsOf(baseline, outcomes),
    pre_match_model: metricsOf(preMatch, outcomes),
    by_half_time_margin: byMargin,
  };
}
