// `matchsim model backtest`: walk-forward over held-out seasons. For every held-out match the ratings
// are fitted on earlier matches only (walk-forward.ts) and the global constants on the seasons before
// the held-out ones (unless the caller passes parameters). Three forecasters are scored on the same
// matches: the model, a plain Dixon-Coles baseline (goals only, Poisson with ρ) and base rates.
//
// The model's probabilities for every match come from the exact forward pass of the engine's minute
// model (minute-model.ts over step-rates.ts, which reproduces the engine's per-step probabilities);
// every `engineEvery`-th match is also simulated by the real engine (fallback/, worker threads) and
// scored beside the analytic figures on the same matches, which checks the two agree.
import { createCpuEngine } from '../fallback/cpu-engine.js';
import type { ModelParams } from '../src/engine-contract/model-params.js';
import { type EngineForecast, engineForecast } from './engine-forecast.js';
import {
  binaryLogLoss,
  expectedCalibrationError,
  type Outcome,
  outcomeOf,
  type ThreeWay,
  threeWayScores,
} from './forecast-scores.js';
import { type HeldOutOptions, prepareHeldOut, type StepRateModel } from './held-out.js';
import { competitionProfile } from './league-profile.js';
import type { LeagueMatch } from './league-results.js';
import { scoreDistribution } from './minute-model.js';
import { dixonColesGrid, type MarketProbabilities, marketsFromGrid } from './score-grid.js';
import { newcomerTest, SUBGROUPS, subgroupsOf } from './subgroups.js';
import { type WalkForwardMatch, walkForward } from './walk-forward.js';

/** What `calibrated` requires (docs/model.md explains each). */
export const CALIBRATION_THRESHOLDS = {
  /** Expected calibration error of each market, 10 equal-width bins. */
  ece: 0.02,
  /** |predicted − observed| draw rate. */
  drawRate: 0.015,
  /** |predicted − observed| share of goals scored in the first half. */
  firstHalfShare: 0.015,
  /** Largest |predicted − observed| cell of the half-time/full-time table. */
  htFtCell: 0.015,
  /** |predicted − observed| share of half-time leaders who go on to win. */
  halfTimeLeaderWins: 0.03,
} as const;

export interface BacktestOptions extends HeldOutOptions {
  /** Simulate every n-th held-out match with the real engine (0 = none). */
  engineEvery?: number;
  engineDraws?: number;
  /** Engine worker threads (default: one per core). */
  engineThreads?: number;
  /** Version string recorded with the result (default: the parameters' model_version). */
  modelVersion?: string;
  onProgress?: (message: string) => void;
}

export interface ForecastMetrics {
  matches: number;
  rps_1x2: number;
  log_loss_1x2: number;
  log_loss_over_under_2_5: number;
  log_loss_btts: number;
  ece_1x2: number;
  ece_over_under_2_5: number;
  ece_btts: number;
}

export interface RealismFigures {
  home_win: number;
  draw: number;
  away_win: number;
  goals_per_match: number;
  over_2_5: number;
  btts: number;
  nil_nil: number;
  first_half_goal_share: number;
  /** Keys "H/H" … "A/A": half-time result / full-time result. */
  ht_ft: Record<string, number>;
  half_time_leader: { wins: number; draws: number; loses: number };
}

export interface RealismCheck {
  name: string;
  observed: number;
  predicted: number;
  difference: number;
  threshold: number;
  pass: boolean;
}

export interface BacktestResult {
  model_version: string;
  status: 'qualified' | 'unqualified';
  calibrated: boolean;
  /**
   * Where the headline model probabilities came from: the real engine when it simulated every match
   * (`engineEvery: 1`), else the analytic forward pass of the engine's minute model.
   */
  probabilities: 'engine' | 'analytic';
  /** Where the global constants came from: fitted on the seasons before the held-out ones, or given. */
  constants: string;
  held_out_seasons: number[];
  competitions: string[];
  /** The model's scores on every held-out match. */
  metrics: ForecastMetrics;
  comparison: { model: ForecastMetrics; dixon_coles: ForecastMetrics; base_rates: ForecastMetrics };
  realism: { observed: RealismFigures; model: RealismFigures; checks: RealismCheck[] };
  engine_check: {
    matches: number;
    draws: number;
    engine: ForecastMetrics;
    analytic_same_matches: ForecastMetrics;
    dixon_coles_same_matches: ForecastMetrics;
    /** Largest |engine − analytic| of a 1X2 probability over the checked matches. */
    max_abs_difference_1x2: number;
    /** Box-score means per match: engine vs the matches' own statistics (where present). */
    box_score: { engine: Record<string, number>; observed: Record<string, number> };
  } | null;
  /** The same scores per competition and per subgroup (subgroups.ts), and the per-league realism table. */
  breakdown: Breakdown;
  thresholds: typeof CALIBRATION_THRESHOLDS;
  checks: { name: string; value: number; threshold: number; pass: boolean }[];
}

export interface GroupScores {
  model: ForecastMetrics;
  dixon_coles: ForecastMetrics;
  /** Model RPS − Dixon-Coles RPS (negative: the model is better). */
  rps_difference: number;
}

/** One box-score figure per match: the engine's mean against the matches' own statistics. */
export interface LeagueRealismRow {
  figure: string;
  engine: number;
  observed: number;
  /** Allowed |engine − observed|: 5% of the observed figure plus two standard errors of its mean. */
  tolerance: number;
  pass: boolean;
}

export interface Breakdown {
  by_competition: Record<string, GroupScores>;
  by_subgroup: Record<string, GroupScores & { matches: number }>;
  /** Per competition, over the engine-simulated matches that carry statistics. */
  realism_by_competition: Record<string, { matches: number; rows: LeagueRealismRow[] }>;
  /** Points of clubs new to their league (subgroups.ts): forecast against won, per club and season. */
  promoted_points: PromotedPoints;
}

export interface PromotedPoints {
  /** Newcomer club-seasons in the held-out matches. */
  club_seasons: number;
  /** Mean points per newcomer club-season: won, and expected by each forecaster (3 · win + draw). */
  actual: number;
  model: number;
  dixon_coles: number;
}

interface ScoredForecast {
  markets: MarketProbabilities;
  /** P(ht result, ft result), [ht * 3 + ft]; null where the forecaster has none. */
  htFt: Float64Array | null;
  /** Expected goals in the first half and the whole match. */
  firstHalfGoals: number;
  goals: number;
  nilNil: number;
}

export async function backtestModel(options: BacktestOptions): Promise<BacktestResult> {
  const log = options.onProgress ?? (() => {});
  const { heldOutSeasons, firstHeldOut, matches, competitions, params, bySeason, stepModels } =
    await prepareHeldOut(options, 'backtest', log);

  log(`backtest: walk-forward ratings over seasons ${heldOutSeasons.join(', ')}`);
  const rated = walkForward(matches, { heldOutSeasons });
  log(`backtest: ${rated.length} held-out matches; model probabilities`);
  const { model, baseline, base } = heldOutForecasts(rated, stepModels, baseRateTable(matches));
  const observed = rated.map((r) => r.match);

  let engineCheck: BacktestResult['engine_check'] = null;
  let simulated: SimulatedMatches = { matches: [], forecasts: [] };
  let headline = model;
  const every = options.engineEvery ?? 10;
  if (every > 0) {
    const checked = await checkWithEngine(options, bySeason, every, { rated, model, baseline }, log);
    engineCheck = checked.check;
    simulated = checked.simulated;
    if (checked.everyMatch) headline = checked.scored;
  }

  const modelMetrics = scoreForecasts(headline, observed);
  const comparison = {
    model: modelMetrics,
    dixon_coles: scoreForecasts(baseline, observed),
    base_rates: scoreForecasts(base, observed),
  };
  const observedRealism = realismObserved(observed);
  const modelRealism = realismPredicted(headline);
  const realismChecks = compareRealism(observedRealism, modelRealism);
  const checks = calibrationChecks(modelMetrics, realismChecks);
  const qualified = beatsBaselines(comparison);
  return {
    model_version: options.modelVersion ?? params.model_version,
    status: qualified ? 'qualified' : 'unqualified',
    calibrated: qualified && checks.every((c) => c.pass),
    probabilities: headline === model ? 'analytic' : 'engine',
    constants: `${options.params ? 'given by the caller' : `fitted on seasons before ${firstHeldOut}`}; league profiles (cards, shots) of each held-out season from the three seasons before it`,
    held_out_seasons: heldOutSeasons,
    competitions,
    metrics: modelMetrics,
    comparison,
    realism: { observed: observedRealism, model: modelRealism, checks: realismChecks },
    engine_check: engineCheck,
    breakdown: breakdown(matches, observed, { model: headline, baseline }, simulated),
    thresholds: CALIBRATION_THRESHOLDS,
    checks,
  };
}

/** The held-out matches with the model's and the Dixon-Coles baseline's forecasts, in the same order. */
interface HeldOutForecasts {
  rated: readonly WalkForwardMatch[];
  model: readonly ScoredForecast[];
  baseline: readonly ScoredForecast[];
}

/** The three forecasters' forecasts of every held-out match. */
function heldOutForecasts(
  rated: readonly WalkForwardMatch[],
  stepModels: ReadonlyMap<string, StepRateModel>,
  baseRates: (match: LeagueMatch) => ScoredForecast,
): { model: ScoredForecast[]; baseline: ScoredForecast[]; base: ScoredForecast[] } {
  const model: ScoredForecast[] = [];
  const baseline: ScoredForecast[] = [];
  const base: ScoredForecast[] = [];
  for (const { match, model: m, baseline: b } of rated) {
    model.push(
      analyticForecast(stepModels.get(`${match.competition} ${match.season}`)!, m.lambdaHome, m.lambdaAway),
    );
    baseline.push(dixonColesForecast(b.lambdaHome, b.lambdaAway, b.rho));
    base.push(baseRates(match));
  }
  return { model, baseline, base };
}

/**
 * Every `every`-th held-out match simulated by the real engine and scored beside the analytic and
 * Dixon-Coles forecasts of the same matches; `everyMatch` when that was all of them.
 */
async function checkWithEngine(
  options: BacktestOptions,
  bySeason: ReadonlyMap<number, ModelParams>,
  every: number,
  heldOut: HeldOutForecasts,
  log: (message: string) => void,
): Promise<{
  check: NonNullable<BacktestResult['engine_check']>;
  scored: ScoredForecast[];
  simulated: SimulatedMatches;
  everyMatch: boolean;
}> {
  const { rated, model, baseline } = heldOut;
  const draws = options.engineDraws ?? 20_000;
  const picked = rated.map((_, i) => i).filter((i) => i % every === 0);
  log(`backtest: simulating ${picked.length} matches with the engine (${draws} draws each)`);
  const forecasts = await simulateMatches(options, bySeason, rated, picked, draws, log);
  const engineScored = forecasts.map(engineScoredForecast);
  const pickedMatches = picked.map((i) => rated[i]!.match);
  let maxDiff = 0;
  picked.forEach((i, k) => {
    const a = model[i]!.markets;
    const e = engineScored[k]!.markets;
    maxDiff = Math.max(
      maxDiff,
      Math.abs(a.home - e.home),
      Math.abs(a.draw - e.draw),
      Math.abs(a.away - e.away),
    );
  });
  return {
    check: {
      matches: picked.length,
      draws,
      engine: scoreForecasts(engineScored, pickedMatches),
      analytic_same_matches: scoreForecasts(
        picked.map((i) => model[i]!),
        pickedMatches,
      ),
      dixon_coles_same_matches: scoreForecasts(
        picked.map((i) => baseline[i]!),
        pickedMatches,
      ),
      max_abs_difference_1x2: maxDiff,
      box_score: boxScores(forecasts, pickedMatches),
    },
    scored: engineScored,
    simulated: { matches: pickedMatches, forecasts },
    everyMatch: picked.length === rated.length,
  };
}

/** The engine's forecasts of the picked held-out matches, one after another on one CPU engine. */
async function simulateMatches(
  options: BacktestOptions,
  bySeason: ReadonlyMap<number, ModelParams>,
  rated: readonly WalkForwardMatch[],
  picked: readonly number[],
  draws: number,
  log: (message: string) => void,
): Promise<EngineForecast[]> {
  const engine = createCpuEngine(
    options.engineThreads === undefined ? {} : { threads: options.engineThreads },
  );
  const forecasts: EngineForecast[] = [];
  try {
    for (const [k, i] of picked.entries()) {
      if (k > 0 && k % 500 === 0) log(`backtest: ${k} of ${picked.length} matches simulated`);
      const r = rated[i]!;
      const params = bySeason.get(r.match.season)!;
      forecasts.push(
        await engineForecast(
          engine,
          params,
          { home: r.model.lambdaHome, away: r.model.lambdaAway },
          { draws, seed: 1 + i, profile: competitionProfile(r.match.competition, params) },
        ),
      );
    }
  } finally {
    await engine.close();
  }
  return forecasts;
}

/** The calibration checks: each market's calibration error and the realism checks. */
function calibrationChecks(
  modelMetrics: ForecastMetrics,
  realismChecks: readonly RealismCheck[],
): BacktestResult['checks'] {
  return [
    ...(['ece_1x2', 'ece_over_under_2_5', 'ece_btts'] as const).map((name) => ({
      name,
      value: modelMetrics[name],
      threshold: CALIBRATION_THRESHOLDS.ece,
      pass: modelMetrics[name] <= CALIBRATION_THRESHOLDS.ece,
    })),
    ...realismChecks.map((c) => ({
      name: c.name,
      value: c.difference,
      threshold: c.threshold,
      pass: c.pass,
    })),
  ];
}

/** Qualified: the model beats Dixon-Coles on RPS and base rates on RPS and every log loss. */
function beatsBaselines(comparison: BacktestResult['comparison']): boolean {
  const { model, dixon_coles, base_rates } = comparison;
  return (
    model.rps_1x2 < dixon_coles.rps_1x2 &&
    model.rps_1x2 < base_rates.rps_1x2 &&
    model.log_loss_1x2 < base_rates.log_loss_1x2 &&
    model.log_loss_over_under_2_5 < base_rates.log_loss_over_under_2_5 &&
    model.log_loss_btts < base_rates.log_loss_btts
  );
}

const MAX_GOALS = 10;

function analyticForecast(stepModel: StepRateModel, lambdaHome: number, lambdaAway: number): ScoredForecast {
  const table = stepModel.table(stepModel.calibratedBase([lambdaHome, lambdaAway], 5));
  const dist = scoreDistribution(table, { maxGoals: MAX_GOALS, withHtFt: true });
  return gridForecast(dist.fullTime, dist.halfTime, dist.htFt, MAX_GOALS + 1);
}

function engineScoredForecast(f: EngineForecast): ScoredForecast {
  return gridForecast(f.fullTime, f.halfTime, f.htFt, MAX_GOALS + 1);
}

function gridForecast(
  fullTime: Float64Array,
  halfTime: Float64Array,
  htFt: Float64Array,
  size: number,
): ScoredForecast {
  return {
    markets: marketsFromGrid(fullTime, size),
    htFt,
    firstHalfGoals: goalsIn(halfTime, size),
    goals: goalsIn(fullTime, size),
    nilNil: fullTime[0]!,
  };
}

function dixonColesForecast(lambdaHome: number, lambdaAway: number, rho: number): ScoredForecast {
  const grid = dixonColesGrid(lambdaHome, lambdaAway, rho);
  return {
    markets: marketsFromGrid(grid),
    htFt: null,
    firstHalfGoals: Number.NaN,
    goals: lambdaHome + lambdaAway,
    nilNil: grid[0]!,
  };
}

function goalsIn(grid: Float64Array, size: number): number {
  let total = 0;
  for (let h = 0; h < size; h++) for (let a = 0; a < size; a++) total += (h + a) * grid[h * size + a]!;
  return total;
}

/** Base rates: the competition's frequencies over the three seasons before the match's season. */
function baseRateTable(matches: readonly LeagueMatch[]): (match: LeagueMatch) => ScoredForecast {
  const cache = new Map<string, ScoredForecast>();
  return (match) => {
    const key = `${match.competition} ${match.season}`;
    let forecast = cache.get(key);
    if (!forecast) {
      const past = matches.filter(
        (m) => m.competition === match.competition && m.season < match.season && m.season >= match.season - 3,
      );
      const share = (test: (m: LeagueMatch) => boolean) => past.filter(test).length / past.length;
      forecast = {
        markets: {
          home: share((m) => m.homeGoals > m.awayGoals),
          draw: share((m) => m.homeGoals === m.awayGoals),
          away: share((m) => m.homeGoals < m.awayGoals),
          over25: share((m) => m.homeGoals + m.awayGoals > 2),
          btts: share((m) => m.homeGoals > 0 && m.awayGoals > 0),
        },
        htFt: null,
        firstHalfGoals: Number.NaN,
        goals: past.reduce((s, m) => s + m.homeGoals + m.awayGoals, 0) / past.length,
        nilNil: share((m) => m.homeGoals + m.awayGoals === 0),
      };
      cache.set(key, forecast);
    }
    return forecast;
  };
}

function scoreForecasts(
  forecasts: readonly ScoredForecast[],
  matches: readonly LeagueMatch[],
): ForecastMetrics {
  let llOver = 0;
  let llBtts = 0;
  const over: { probability: number; happened: boolean }[] = [];
  const btts: { probability: number; happened: boolean }[] = [];
  const threeWays: ThreeWay[] = [];
  const outcomes: Outcome[] = [];
  forecasts.forEach((f, i) => {
    const m = matches[i]!;
    threeWays.push({ home: f.markets.home, draw: f.markets.draw, away: f.markets.away });
    outcomes.push(outcomeOf(m.homeGoals, m.awayGoals));
    const wentOver = m.homeGoals + m.awayGoals > 2;
    const bothScored = m.homeGoals > 0 && m.awayGoals > 0;
    llOver += binaryLogLoss(f.markets.over25, wentOver);
    llBtts += binaryLogLoss(f.markets.btts, bothScored);
    over.push({ probability: f.markets.over25, happened: wentOver });
    btts.push({ probability: f.markets.btts, happened: bothScored });
  });
  const n = Math.max(1, forecasts.length);
  const oneXTwo = threeWayScores(threeWays, outcomes);
  return {
    matches: forecasts.length,
    rps_1x2: oneXTwo.rps_1x2,
    log_loss_1x2: oneXTwo.log_loss_1x2,
    log_loss_over_under_2_5: llOver / n,
    log_loss_btts: llBtts / n,
    ece_1x2: oneXTwo.ece_1x2,
    ece_over_under_2_5: expectedCalibrationError(over).ece,
    ece_btts: expectedCalibrationError(btts).ece,
  };
}

const RESULT_LETTERS = ['H', 'D', 'A'] as const;

function resultIndex(home: number, away: number): number {
  return home > away ? 0 : home === away ? 1 : 2;
}

function realismObserved(matches: readonly LeagueMatch[]): RealismFigures {
  const n = matches.length;
  const withHalfTime = matches.filter((m) => m.halfTime);
  const htFt = new Float64Array(9);
  let firstHalf = 0;
  let goalsWithHalfTime = 0;
  for (const m of withHalfTime) {
    const ht = m.halfTime!;
    htFt[resultIndex(ht.home, ht.away) * 3 + resultIndex(m.homeGoals, m.awayGoals)]! +=
      1 / withHalfTime.length;
    firstHalf += ht.home + ht.away;
    goalsWithHalfTime += m.homeGoals + m.awayGoals;
  }
  const share = (test: (m: LeagueMatch) => boolean) => matches.filter(test).length / n;
  return {
    home_win: share((m) => m.homeGoals > m.awayGoals),
    draw: share((m) => m.homeGoals === m.awayGoals),
    away_win: share((m) => m.homeGoals < m.awayGoals),
    goals_per_match: matches.reduce((s, m) => s + m.homeGoals + m.awayGoals, 0) / n,
    over_2_5: share((m) => m.homeGoals + m.awayGoals > 2),
    btts: share((m) => m.homeGoals > 0 && m.awayGoals > 0),
    nil_nil: share((m) => m.homeGoals + m.awayGoals === 0),
    first_half_goal_share: firstHalf / goalsWithHalfTime,
    ht_ft: htFtRecord(htFt),
    half_time_leader: leaderOutcomes(htFt),
  };
}

function realismPredicted(forecasts: readonly ScoredForecast[]): RealismFigures {
  const n = forecasts.length;
  const htFt = new Float64Array(9);
  let firstHalf = 0;
  let goals = 0;
  const mean = (pick: (f: ScoredForecast) => number) => forecasts.reduce((s, f) => s + pick(f), 0) / n;
  for (const f of forecasts) {
    f.htFt?.forEach((p, i) => {
      htFt[i]! += p / n;
    });
    firstHalf += f.firstHalfGoals;
    goals += f.goals;
  }
  return {
    home_win: mean((f) => f.markets.home),
    draw: mean((f) => f.markets.draw),
    away_win: mean((f) => f.markets.away),
    goals_per_match: goals / n,
    over_2_5: mean((f) => f.markets.over25),
    btts: mean((f) => f.markets.btts),
    nil_nil: mean((f) => f.nilNil),
    first_half_goal_share: firstHalf / goals,
    ht_ft: htFtRecord(htFt),
    half_time_leader: leaderOutcomes(htFt),
  };
}

function htFtRecord(htFt: Float64Array): Record<string, number> {
  const out: Record<string, number> = {};
  for (let ht = 0; ht < 3; ht++) {
    for (let ft = 0; ft < 3; ft++) out[`${RESULT_LETTERS[ht]}/${RESULT_LETTERS[ft]}`] = htFt[ht * 3 + ft]!;
  }
  return out;
}

/** Outcomes of the side leading at half-time: home leads (H/·) and away leads (A/·) pooled. */
function leaderOutcomes(htFt: Float64Array): { wins: number; draws: number; loses: number } {
  const led = htFt[0]! + htFt[1]! + htFt[2]! + htFt[6]! + htFt[7]! + htFt[8]!;
  return {
    wins: (htFt[0]! + htFt[8]!) / led,
    draws: (htFt[1]! + htFt[7]!) / led,
    loses: (htFt[2]! + htFt[6]!) / led,
  };
}

function compareRealism(observed: RealismFigures, predicted: RealismFigures): RealismCheck[] {
  const check = (name: string, o: number, p: number, threshold: number): RealismCheck => ({
    name,
    observed: o,
    predicted: p,
    difference: Math.abs(p - o),
    threshold,
    pass: Math.abs(p - o) <= threshold,
  });
  const cells = Object.keys(observed.ht_ft);
  const worstCell = cells.reduce(
    (worst, key) => {
      const d = Math.abs(predicted.ht_ft[key]! - observed.ht_ft[key]!);
      return d > worst.d ? { key, d } : worst;
    },
    { key: cells[0]!, d: -1 },
  );
  return [
    check('draw_rate', observed.draw, predicted.draw, CALIBRATION_THRESHOLDS.drawRate),
    check(
      'first_half_goal_share',
      observed.first_half_goal_share,
      predicted.first_half_goal_share,
      CALIBRATION_THRESHOLDS.firstHalfShare,
    ),
    check(
      `ht_ft_worst_cell_${worstCell.key}`,
      observed.ht_ft[worstCell.key]!,
      predicted.ht_ft[worstCell.key]!,
      CALIBRATION_THRESHOLDS.htFtCell,
    ),
    check(
      'half_time_leader_wins',
      observed.half_time_leader.wins,
      predicted.half_time_leader.wins,
      CALIBRATION_THRESHOLDS.halfTimeLeaderWins,
    ),
  ];
}

function boxScores(
  forecasts: readonly EngineForecast[],
  matches: readonly LeagueMatch[],
): { engine: Record<string, number>; observed: Record<string, number> } {
  const withStats = matches.map((m, i) => ({ m, f: forecasts[i]! })).filter(({ m }) => m.stats);
  const n = Math.max(1, withStats.length);
  const engine = { goals: 0, shots: 0, shots_on_target: 0, yellow_cards: 0, red_cards: 0 };
  const observed = { goals: 0, shots: 0, shots_on_target: 0, yellow_cards: 0, red_cards: 0 };
  for (const { m, f } of withStats) {
    const s = m.stats!;
    engine.goals += (f.home.goals + f.away.goals) / n;
    engine.shots += (f.home.shots + f.away.shots) / n;
    engine.shots_on_target += (f.home.shotsOnTarget + f.away.shotsOnTarget) / n;
    engine.yellow_cards += (f.home.yellowCards + f.away.yellowCards) / n;
    engine.red_cards += (f.home.redCards + f.away.redCards) / n;
    observed.goals += (m.homeGoals + m.awayGoals) / n;
    observed.shots += (s.home.shots + s.away.shots) / n;
    observed.shots_on_target += (s.home.shotsOnTarget + s.away.shotsOnTarget) / n;
    observed.yellow_cards += (s.home.yellowCards + s.away.yellowCards) / n;
    observed.red_cards += (s.home.redCards + s.away.redCards) / n;
  }
  return { engine, observed };
}

/** The matches the real engine simulated, with its forecasts, in the same order. */
interface SimulatedMatches {
  matches: readonly LeagueMatch[];
  forecasts: readonly EngineForecast[];
}

/** Scores per competition and per subgroup, and the per-league realism of the simulated matches. */
function breakdown(
  all: readonly LeagueMatch[],
  observed: readonly LeagueMatch[],
  forecasts: { model: readonly ScoredForecast[]; baseline: readonly ScoredForecast[] },
  simulated: SimulatedMatches,
): Breakdown {
  const groupsOf = subgroupsOf(all, observed);
  const scoresOf = (keep: (m: LeagueMatch) => boolean): GroupScores & { matches: number } => {
    const picked = observed.map((_m, i) => i).filter((i) => keep(observed[i]!));
    const matches = picked.map((i) => observed[i]!);
    const model = scoreForecasts(
      picked.map((i) => forecasts.model[i]!),
      matches,
    );
    const dixonColes = scoreForecasts(
      picked.map((i) => forecasts.baseline[i]!),
      matches,
    );
    return {
      matches: matches.length,
      model,
      dixon_coles: dixonColes,
      rps_difference: model.rps_1x2 - dixonColes.rps_1x2,
    };
  };
  const competitions = [...new Set(observed.map((m) => m.competition))].sort();
  const byCompetition: Breakdown['by_competition'] = {};
  const realism: Breakdown['realism_by_competition'] = {};
  for (const competition of competitions) {
    const { model, dixon_coles, rps_difference } = scoresOf((m) => m.competition === competition);
    byCompetition[competition] = { model, dixon_coles, rps_difference };
    const own = simulated.matches
      .map((_m, i) => i)
      .filter((i) => simulated.matches[i]!.competition === competition);
    realism[competition] = leagueRealism(
      own.map((i) => simulated.matches[i]!),
      own.map((i) => simulated.forecasts[i]!),
    );
  }
  const bySubgroup: Breakdown['by_subgroup'] = {};
  for (const group of SUBGROUPS)
    bySubgroup[group] = scoresOf((m) => groupsOf.get(m)?.includes(group) ?? false);
  return {
    by_competition: byCompetition,
    by_subgroup: bySubgroup,
    realism_by_competition: realism,
    promoted_points: promotedPoints(all, observed, forecasts),
  };
}

/** Points of every newcomer side in the held-out matches: won, and expected by the two forecasters. */
function promotedPoints(
  all: readonly LeagueMatch[],
  observed: readonly LeagueMatch[],
  forecasts: { model: readonly ScoredForecast[]; baseline: readonly ScoredForecast[] },
): PromotedPoints {
  const isNew = newcomerTest(all);
  const clubSeasons = new Set<string>();
  const totals = { actual: 0, model: 0, dixon_coles: 0 };
  const expected = (f: ScoredForecast, home: boolean) =>
    3 * (home ? f.markets.home : f.markets.away) + f.markets.draw;
  observed.forEach((m, i) => {
    for (const home of [true, false]) {
      const team = home ? m.home : m.away;
      if (!isNew(m, team)) continue;
      clubSeasons.add(`${m.competition} ${m.season} ${team}`);
      const own = home ? m.homeGoals : m.awayGoals;
      const other = home ? m.awayGoals : m.homeGoals;
      totals.actual += own > other ? 3 : own === other ? 1 : 0;
      totals.model += expected(forecasts.model[i]!, home);
      totals.dixon_coles += expected(forecasts.baseline[i]!, home);
    }
  });
  const n = Math.max(1, clubSeasons.size);
  return {
    club_seasons: clubSeasons.size,
    actual: totals.actual / n,
    model: totals.model / n,
    dixon_coles: totals.dixon_coles / n,
  };
}

/** Engine box-score means against the matches' own statistics (matches without statistics left out). */
function leagueRealism(
  matches: readonly LeagueMatch[],
  forecasts: readonly EngineForecast[],
): { matches: number; rows: LeagueRealismRow[] } {
  const withStats = matches.map((m, i) => ({ m, f: forecasts[i]! })).filter(({ m }) => m.stats);
  const figures: [string, (f: EngineForecast) => number, (m: LeagueMatch) => number][] = [
    ['goals', (f) => f.home.goals + f.away.goals, (m) => m.homeGoals + m.awayGoals],
    ['shots', (f) => f.home.shots + f.away.shots, (m) => m.stats!.home.shots + m.stats!.away.shots],
    [
      'shots_on_target',
      (f) => f.home.shotsOnTarget + f.away.shotsOnTarget,
      (m) => m.stats!.home.shotsOnTarget + m.stats!.away.shotsOnTarget,
    ],
    [
      'yellow_cards',
      (f) => f.home.yellowCards + f.away.yellowCards,
      (m) => m.stats!.home.yellowCards + m.stats!.away.yellowCards,
    ],
    [
      'red_cards',
      (f) => f.home.redCards + f.away.redCards,
      (m) => m.stats!.home.redCards + m.stats!.away.redCards,
    ],
  ];
  const n = withStats.length;
  const rows = figures.map(([figure, fromEngine, fromMatch]): LeagueRealismRow => {
    const engine = withStats.reduce((s, { f }) => s + fromEngine(f), 0) / Math.max(1, n);
    const values = withStats.map(({ m }) => fromMatch(m));
    const observed = values.reduce((s, v) => s + v, 0) / Math.max(1, n);
    const variance = values.reduce((s, v) => s + (v - observed) ** 2, 0) / Math.max(1, n - 1);
    const tolerance = 0.05 * observed + 2 * Math.sqrt(variance / Math.max(1, n));
    return { figure, engine, observed, tolerance, pass: n > 0 && Math.abs(engine - observed) <= tolerance };
  });
  return { matches: n, rows };
}
