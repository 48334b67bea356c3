// `matchsim model fit`: the global constants of the match model from the club and international data.
// What comes from where (docs/model.md has the table):
// - per-competition intercept, home advantage and rating spread: Dixon-Coles ratings (walk-forward.ts);
// - goal band weights: international goal minutes for the shape within each half, the club
//   half-time scores for the split between halves;
// - score-state and red-card multipliers: likelihood of club half-time and full-time scores under the
//   exact minute model (match-dynamics.ts);
// - shots, yellow cards: club statistics columns; straight red cards: the club red-card rate less the
//   second yellows the engine itself produces from the yellow-card rate (measured by running it);
// - added time, substitutions, assists, lineup elasticity, card timing: not in the data; kept.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createCpuEngine } from '../fallback/cpu-engine.js';
import {
  defaultModelParams,
  type ModelParams,
  modelParamsSchema,
} from '../src/engine-contract/model-params.js';
import { ENGINE_STREAM } from '../src/engine-contract/rng.js';
import { engineForecast } from './engine-forecast.js';
import { bandWeightsFromMinutes, loadGoalMinutes, withFirstHalfShare } from './international-goals.js';
import type { LeagueProfile } from './league-profile.js';
import { type LeagueMatch, loadLeagueMatches } from './league-results.js';
import { type DynamicsFit, type DynamicsSample, fitMatchDynamics } from './match-dynamics.js';
import { expectedGoalsUnder, SECOND_HALF_START, STEPS, stepTableIndex } from './minute-model.js';
import { makeStepRateModel } from './step-rates.js';
import { expectedGoals, fitTeamRatings } from './team-ratings.js';
import { fitCompetitionRatings, goalsPerShotOnTarget, MODEL_RATINGS, ratingSignal } from './walk-forward.js';

export interface FitOptions {
  dataDir: string;
  /** Use seasons starting before this year only (the backtest fits on the seasons before its held-out ones). */
  untilSeason?: number;
  competitions?: readonly string[];
  /** Starting values and the constants the data cannot inform. */
  start?: ModelParams;
  /** Matches without a red card used for the score-state likelihood (a deterministic subsample). */
  scoreStateMatches?: number;
  /** Matches with one red card used for the red-card likelihood. */
  redCardMatches?: number;
  /** Likelihood evaluations per optimisation (each is a pass over the sampled matches). */
  maxEvaluations?: number;
  /** Engine draws for measuring second-yellow red cards; 0 skips that step (keeps the start's reds). */
  engineDraws?: number;
  /** Seasons (most recent) for the rate summaries: cards, shots, first-half share. */
  recentSeasons?: number;
  onProgress?: (message: string) => void;
}

/** A competition's fitted scales: what model-params.json stores as its league profile (league-profile.ts). */
export type CompetitionSummary = LeagueProfile;

/** A competition's own card and shot rates (its league profile for the engine, docs/model.md). */
export interface CompetitionRates {
  yellow_home: number;
  yellow_away: number;
  straight_red_home: number;
  straight_red_away: number;
  booked_player_factor: number;
  shot_conversion: number;
  shot_on_target_share: number;
  /** Observed, for the report: all red cards per match and shots per match. */
  red_cards_per_match: number;
  shots_per_match: number;
}

/** Seasons (most recent) a league's card and shot rates come from: they drift, so only the latest. */
const PROFILE_SEASONS = 3;

export interface FitReport {
  seasons: { from: number; to: number };
  matches: number;
  competitions: Record<string, CompetitionSummary>;
  /** Current ratings per competition (teams of its latest season), for inspection and demo data. */
  ratings: Record<string, Record<string, { attack: number; defence: number }>>;
  rates: {
    first_half_goal_share: number;
    goals_per_match: number;
    yellow_per_match: { home: number; away: number };
    red_per_match: { home: number; away: number };
    engine_second_yellow_reds_per_match: { home: number; away: number } | null;
    shots_per_match: number;
    on_target_share: number;
    conversion: number;
  };
  international_goal_minutes: { goals: number; band_weights: number[] };
  dynamics: DynamicsFit;
}

export interface FitResult {
  params: ModelParams;
  report: FitReport;
}

export async function fitModel(options: FitOptions): Promise<FitResult> {
  const log = options.onProgress ?? (() => {});
  const start = options.start ?? defaultModelParams;
  const { all, recent, lastSeason } = fitMatches(options);
  log(`fit: ${all.length} matches, seasons ${Math.min(...all.map((m) => m.season))}-${lastSeason}`);

  const { competitions, ratings } = competitionSummaries(all);
  const rates = clubRates(recent);

  const minutes = loadGoalMinutes(options.dataDir, { since: '2000' });
  const internationalWeights = bandWeightsFromMinutes(minutes);
  const goalBandWeights = withFirstHalfShare(internationalWeights, rates.firstHalfShare).map(round4);
  let params = withClubRates(start, goalBandWeights, rates);

  let secondYellows: { home: number; away: number } | null = null;
  const engineDraws = options.engineDraws ?? 100_000;
  if (engineDraws > 0) {
    log(`fit: measuring the engine's second-yellow red cards (${engineDraws} draws)`);
    secondYellows = await engineSecondYellowReds(params, rates, engineDraws);
    params = withStraightReds(params, rates, secondYellows);
  }

  log('fit: score-state and red-card effects (likelihood of half-time and full-time scores)');
  const samples = dynamicsSamples(all, options.scoreStateMatches ?? 8000, options.redCardMatches ?? 4000);
  const dynamics = fitMatchDynamics(
    params,
    samples,
    options.maxEvaluations === undefined ? {} : { maxEvaluations: options.maxEvaluations },
  );
  const profiles = competitionRates(
    all,
    { rates, bookedPlayerFactor: params.cards.booked_player_factor },
    secondYellows ?? startSecondYellows(start, rates),
  );
  params = withDynamics(params, dynamics, mergeSummaries(competitions, profiles), rates);

  return {
    params,
    report: {
      seasons: { from: Math.min(...all.map((m) => m.season)), to: lastSeason },
      matches: all.length,
      competitions,
      ratings,
      rates: {
        first_half_goal_share: rates.firstHalfShare,
        goals_per_match: rates.goalsPerMatch,
        yellow_per_match: rates.yellow,
        red_per_match: rates.red,
        engine_second_yellow_reds_per_match: secondYellows,
        shots_per_match: rates.shotsPerMatch,
        on_target_share: rates.onTargetShare,
        conversion: rates.conversion,
      },
      international_goal_minutes: {
        goals: minutes.reduce((a, b) => a + b, 0),
        band_weights: internationalWeights,
      },
      dynamics,
    },
  };
}

/** The league matches the fit uses (seasons before `untilSeason`) and the recent ones for the rates. */
function fitMatches(options: FitOptions): { all: LeagueMatch[]; recent: LeagueMatch[]; lastSeason: number } {
  const all = loadLeagueMatches(options.dataDir, options.competitions).filter(
    (m) => options.untilSeason === undefined || m.season < options.untilSeason,
  );
  if (all.length === 0) throw new Error('no league matches to fit on');
  const lastSeason = Math.max(...all.map((m) => m.season));
  const recentFrom = lastSeason - (options.recentSeasons ?? 10) + 1;
  const recent = all.filter((m) => m.season >= recentFrom);
  return { all, recent, lastSeason };
}

/** The start's constants with the goal band weights, shots and yellow cards of the club data. */
function withClubRates(start: ModelParams, goalBandWeights: number[], rates: ClubRates): ModelParams {
  return {
    ...start,
    goal_band_weights: goalBandWeights,
    shots: { conversion: round4(rates.conversion), on_target_share: round4(rates.onTargetShare) },
    cards: {
      ...start.cards,
      yellow_per_match: { home: round4(rates.yellow.home), away: round4(rates.yellow.away) },
    },
  };
}

/** Straight reds: the observed red-card rate less the engine's own second yellows. */
function withStraightReds(
  params: ModelParams,
  rates: ClubRates,
  secondYellows: { home: number; away: number },
): ModelParams {
  return {
    ...params,
    cards: {
      ...params.cards,
      straight_red_per_match: {
        home: round4(Math.max(0.005, rates.red.home - secondYellows.home)),
        away: round4(Math.max(0.005, rates.red.away - secondYellows.away)),
      },
    },
  };
}

/** The fitted dynamics and league profiles, the halves rescaled, and the version of the result. */
function withDynamics(
  params: ModelParams,
  dynamics: DynamicsFit,
  competitions: Record<string, Record<string, number>>,
  rates: ClubRates,
): ModelParams {
  let fitted: ModelParams = {
    ...params,
    score_state_multipliers: dynamics.scoreStateMultipliers.map(round4),
    red_card_multipliers: {
      side_down: round4(dynamics.redCardMultipliers.side_down),
      side_up: round4(dynamics.redCardMultipliers.side_up),
    },
    league_profile: Object.fromEntries(
      Object.entries(competitions).map(([name, summary]) => [
        name,
        Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, round4(v)])),
      ]),
    ),
  };
  // The score-state effects move goals towards the second half (trailing sides push late); rescale the
  // halves so the simulated first-half share, not the input curve's, matches the club data.
  fitted = {
    ...fitted,
    goal_band_weights: matchFirstHalfShare(fitted, rates.firstHalfShare, rates.goalsPerMatch),
  };
  return versioned(fitted);
}

/**
 * The parameters with the engine's current random stream and the version they make: a fit versions its
 * constants with the stream the engines draw (src/engine-contract/rng.ts ENGINE_STREAM).
 */
export function versioned(params: ModelParams): ModelParams {
  // The hash is of the content in the order the schema gives it, the order model-params.json is written in.
  const parsed = modelParamsSchema.parse({ ...params, engine_stream: ENGINE_STREAM });
  const { model_version: _old, ...content } = parsed;
  return { ...parsed, model_version: modelVersionOf(content) };
}

/**
 * `minute-` and the first 10 hex digits of a hash of the constants and the stream (`engine_stream`, part
 * of the content): the same fit on the same stream gives the same version.
 */
export function modelVersionOf(content: unknown): string {
  return `minute-${createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 10)}`;
}

/** Writes the parameters as the shipped JSON (src/engine-contract/model-params.json by the CLI's default). */
export function writeModelParams(path: string, params: ModelParams): void {
  writeFileSync(path, `${JSON.stringify(modelParamsSchema.parse(params), null, 2)}\n`);
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

function competitionSummaries(all: readonly LeagueMatch[]): {
  competitions: Record<string, CompetitionSummary>;
  ratings: Record<string, Record<string, { attack: number; defence: number }>>;
} {
  const conversion = goalsPerShotOnTarget(all);
  const competitions: Record<string, CompetitionSummary> = {};
  const ratings: Record<string, Record<string, { attack: number; defence: number }>> = {};
  for (const name of [...new Set(all.map((m) => m.competition))].sort()) {
    const own = all.filter((m) => m.competition === name);
    const lastDay = Math.max(...own.map((m) => m.day));
    const lastSeason = Math.max(...own.map((m) => m.season));
    const fit = fitCompetitionRatings(
      ratingSignal(own, MODEL_RATINGS, conversion),
      MODEL_RATINGS,
      lastDay + 1,
    );
    const current = [...new Set(own.filter((m) => m.season === lastSeason).map((m) => m.home))].sort();
    const attack = current.map((t) => fit.teams.get(t)?.attack ?? 0);
    const defence = current.map((t) => fit.teams.get(t)?.defence ?? 0);
    const latest = own.filter((m) => m.season === lastSeason);
    const goals = (pick: (m: LeagueMatch) => number) =>
      latest.reduce((s, m) => s + pick(m), 0) / latest.length;
    competitions[name] = {
      matches: own.length,
      teams: current.length,
      intercept: fit.intercept,
      home_advantage: fit.homeAdvantage,
      rho: fit.rho,
      attack_mean: mean(attack),
      attack_sd: sd(attack),
      defence_mean: mean(defence),
      defence_sd: sd(defence),
      attack_defence_correlation: correlation(attack, defence),
      goals_per_match: goals((m) => m.homeGoals + m.awayGoals),
      home_goals_per_match: goals((m) => m.homeGoals),
      away_goals_per_match: goals((m) => m.awayGoals),
    };
    ratings[name] = Object.fromEntries(
      current.map((t, i) => [t, { attack: attack[i]!, defence: defence[i]! }]),
    );
  }
  return { competitions, ratings };
}

/**
 * Each competition's card and shot rates over its latest seasons. Red cards keep the global split
 * between straight reds and second yellows: the engine's second yellows grow with the square of the
 * yellow-card rate (a second yellow needs two) and in proportion to the booked-player factor, so the
 * league's factor is the global one scaled until its second yellows are the global share of its reds.
 */
function competitionRates(
  all: readonly LeagueMatch[],
  global: { rates: Pick<ClubRates, 'yellow' | 'red'>; bookedPlayerFactor: number },
  secondYellows: { home: number; away: number },
): Record<string, CompetitionRates> {
  const out: Record<string, CompetitionRates> = {};
  const g = global.rates;
  const secondYellowShare = (secondYellows.home + secondYellows.away) / (g.red.home + g.red.away);
  for (const name of [...new Set(all.map((m) => m.competition))].sort()) {
    const own = all.filter((m) => m.competition === name && m.stats);
    const last = Math.max(...own.map((m) => m.season));
    const rates = clubRates(own.filter((m) => m.season > last - PROFILE_SEASONS));
    // Second yellows the global factor would make in this league, and the factor that gives its share.
    const atGlobalFactor = (['home', 'away'] as const).reduce(
      (s, side) => s + secondYellows[side] * (rates.yellow[side] / g.yellow[side]) ** 2,
      0,
    );
    const wanted = secondYellowShare * (rates.red.home + rates.red.away);
    const factor = Math.min(1, Math.max(0.05, (global.bookedPlayerFactor * wanted) / atGlobalFactor));
    const straight = (side: 'home' | 'away') => Math.max(0.005, rates.red[side] * (1 - secondYellowShare));
    out[name] = {
      yellow_home: rates.yellow.home,
      yellow_away: rates.yellow.away,
      straight_red_home: straight('home'),
      straight_red_away: straight('away'),
      booked_player_factor: factor,
      shot_conversion: rates.conversion,
      shot_on_target_share: rates.onTargetShare,
      red_cards_per_match: rates.red.home + rates.red.away,
      shots_per_match: rates.shotsPerMatch,
    };
  }
  return out;
}

/**
 * The constants with the league profiles (card and shot rates) a fit made just before `season` would
 * give: each league's rates over the three seasons before it, so a backtest follows the drift of shots
 * and cards without looking at the season it reports. The global constants stay as given; they were
 * fitted on the seasons before `constantsUntil` (their observed red-card rate, over the same ten recent
 * seasons as `fitModel` uses, or `fittedRed` where the caller knows it, splits each league's reds into
 * straight reds and second yellows).
 */
export function withProfilesBefore(
  params: ModelParams,
  matches: readonly LeagueMatch[],
  season: number,
  constantsUntil: number,
  fittedRed?: { home: number; away: number },
): ModelParams {
  const before = matches.filter((m) => m.season < season);
  const red = fittedRed ?? observedRedBefore(matches, constantsUntil);
  const straight = params.cards.straight_red_per_match;
  const secondYellows = {
    home: Math.max(0, red.home - straight.home),
    away: Math.max(0, red.away - straight.away),
  };
  const rates = competitionRates(
    before,
    {
      rates: { yellow: params.cards.yellow_per_match, red },
      bookedPlayerFactor: params.cards.booked_player_factor,
    },
    secondYellows,
  );
  const profiles = { ...(params.league_profile ?? {}) };
  for (const [name, own] of Object.entries(rates)) {
    profiles[name] = {
      ...(profiles[name] ?? {}),
      ...Object.fromEntries(Object.entries(own).map(([k, v]) => [k, round4(v)])),
    };
  }
  return { ...params, league_profile: profiles };
}

/** Red cards per side over the ten seasons before `constantsUntil`, as `fitModel` measures them. */
function observedRedBefore(
  matches: readonly LeagueMatch[],
  constantsUntil: number,
): { home: number; away: number } {
  const fitted = matches.filter((m) => m.season < constantsUntil);
  const lastFitted = Math.max(...fitted.map((m) => m.season));
  return clubRates(fitted.filter((m) => m.season > lastFitted - 10)).red;
}

/** Without an engine measurement: the second yellows the start's constants imply (observed − straight). */
function startSecondYellows(start: ModelParams, rates: ClubRates): { home: number; away: number } {
  return {
    home: Math.max(0, rates.red.home - start.cards.straight_red_per_match.home),
    away: Math.max(0, rates.red.away - start.cards.straight_red_per_match.away),
  };
}

function mergeSummaries(
  competitions: Record<string, CompetitionSummary>,
  profiles: Record<string, CompetitionRates>,
): Record<string, Record<string, number>> {
  return Object.fromEntries(
    Object.entries(competitions).map(([name, summary]) => [name, { ...summary, ...profiles[name] }]),
  );
}

interface ClubRates {
  firstHalfShare: number;
  goalsPerMatch: number;
  yellow: { home: number; away: number };
  red: { home: number; away: number };
  shotsPerMatch: number;
  onTargetShare: number;
  conversion: number;
}

function clubRates(matches: readonly LeagueMatch[]): ClubRates {
  let htGoals = 0;
  let htFtGoals = 0;
  let goals = 0;
  for (const m of matches) {
    goals += m.homeGoals + m.awayGoals;
    if (!m.halfTime) continue;
    htGoals += m.halfTime.home + m.halfTime.away;
    htFtGoals += m.homeGoals + m.awayGoals;
  }
  const withStats = matches.filter((m) => m.stats);
  const sum = (pick: (m: LeagueMatch) => number) => withStats.reduce((s, m) => s + pick(m), 0);
  const n = withStats.length;
  const shots = sum((m) => m.stats!.home.shots + m.stats!.away.shots);
  const statGoals = sum((m) => m.homeGoals + m.awayGoals);
  return {
    firstHalfShare: htGoals / htFtGoals,
    goalsPerMatch: goals / matches.length,
    yellow: {
      home: sum((m) => m.stats!.home.yellowCards) / n,
      away: sum((m) => m.stats!.away.yellowCards) / n,
    },
    red: { home: sum((m) => m.stats!.home.redCards) / n, away: sum((m) => m.stats!.away.redCards) / n },
    shotsPerMatch: shots / n,
    onTargetShare: sum((m) => m.stats!.home.shotsOnTarget + m.stats!.away.shotsOnTarget) / shots,
    conversion: statGoals / shots,
  };
}

/**
 * The engine turns a second yellow into a red card by itself; the straight-red rate is what is left of
 * the observed red-card rate. Measured on the reference fixture at the league's average rated goals.
 */
async function engineSecondYellowReds(
  params: ModelParams,
  rates: ClubRates,
  draws: number,
): Promise<{ home: number; away: number }> {
  const probe: ModelParams = {
    ...params,
    cards: { ...params.cards, straight_red_per_match: { home: 0, away: 0 } },
  };
  const engine = createCpuEngine();
  try {
    const home = rates.goalsPerMatch * 0.565;
    const forecast = await engineForecast(
      engine,
      probe,
      { home, away: rates.goalsPerMatch - home },
      { draws, seed: 20_261_121 },
    );
    return { home: forecast.home.redCards, away: forecast.away.redCards };
  } finally {
    await engine.close();
  }
}

/**
 * Matches for the dynamics likelihood, with rated goals from in-sample ratings of their own season
 * (goals only, prior sd 0.5): the dynamics are about what happens within matches, not about forecasting,
 * so the best available estimate of each side's strength is the right input.
 */
function dynamicsSamples(
  matches: readonly LeagueMatch[],
  scoreStateMatches: number,
  redCardMatches: number,
): DynamicsSample[] {
  const seasons = new Map<string, LeagueMatch[]>();
  for (const m of matches) {
    if (!m.halfTime || !m.stats) continue;
    const key = `${m.competition} ${m.season}`;
    seasons.set(key, [...(seasons.get(key) ?? []), m]);
  }
  const plain: DynamicsSample[] = [];
  const carded: DynamicsSample[] = [];
  for (const key of [...seasons.keys()].sort()) {
    const own = seasons.get(key)!;
    const lastDay = Math.max(...own.map((m) => m.day));
    const fit = fitTeamRatings(
      own.map((m) => ({ ...m, homeScore: m.homeGoals, awayScore: m.awayGoals })),
      { asOf: lastDay + 1, decayPerDay: 0, prior: { sd: 0.5 }, fitRho: false },
    );
    for (const m of own) {
      const reds = [m.stats!.home.redCards, m.stats!.away.redCards] as const;
      if (reds[0] + reds[1] > 1) continue;
      const xg = expectedGoals(fit, m.home, m.away);
      const sample: DynamicsSample = {
        rated: [xg.home, xg.away],
        halfTime: m.halfTime,
        fullTime: { home: m.homeGoals, away: m.awayGoals },
        redCard: reds[0] === 1 ? 'home' : reds[1] === 1 ? 'away' : 'none',
      };
      (sample.redCard === 'none' ? plain : carded).push(sample);
    }
  }
  return [...evenlySpaced(plain, scoreStateMatches), ...evenlySpaced(carded, redCardMatches)];
}

function evenlySpaced<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items];
  return Array.from({ length: count }, (_, i) => items[Math.floor((i * items.length) / count)]!);
}

function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

function sd(xs: readonly number[]): number {
  const m = mean(xs);
  return xs.length > 1 ? Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1)) : 0;
}

function correlation(xs: readonly number[], ys: readonly number[]): number {
  const mx = mean(xs);
  const my = mean(ys);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  xs.forEach((x, i) => {
    const y = ys[i]!;
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  });
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : 0;
}

/** First-half share of the expected goals the model simulates, for an average fixture. */
function simulatedFirstHalfShare(params: ModelParams, goalsPerMatch: number): number {
  const model = makeStepRateModel(params);
  const home = goalsPerMatch * 0.565;
  const table = model.table(model.calibratedBase([home, goalsPerMatch - home]));
  const total = expectedGoalsUnder(table);
  for (let side = 0; side < 2; side++) {
    for (let step = SECOND_HALF_START; step < STEPS; step++) {
      for (let cell = 0; cell < 15; cell++) table.goal[stepTableIndex(side, step, 0, 0) + cell] = 0;
    }
  }
  const firstHalf = expectedGoalsUnder(table);
  return (firstHalf[0] + firstHalf[1]) / (total[0] + total[1]);
}

function matchFirstHalfShare(params: ModelParams, target: number, goalsPerMatch: number): number[] {
  let weights = params.goal_band_weights;
  for (let round = 0; round < 3; round++) {
    const simulated = simulatedFirstHalfShare({ ...params, goal_band_weights: weights }, goalsPerMatch);
    weights = weights.map((w, band) =>
      band < 3 ? (w * target) / simulated : (w * (1 - target)) / (1 - simulated),
    );
  }
  const mean = weights.reduce((a, b) => a + b, 0) / weights.length;
  return weights.map((w) => round4(w / mean));
}
