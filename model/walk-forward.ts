// Walk-forward team ratings: for every match of the held-out seasons, the ratings as they stood before
// its day, fitted only on earlier matches. Two rating models side by side:
// - the model's own: Dixon-Coles with time decay, a normal prior pulling thin evidence to the league
//   average, and a goal signal that blends goals with shots on target (a shot on target is worth the
//   league's goals per shot on target), which carries more information per match than goals alone;
// - the baseline: plain Dixon-Coles, goals only, same decay, no prior.
import type { LeagueMatch } from './league-results.js';
import {
  expectedGoals,
  fitTeamRatings,
  type RatedMatch,
  type RatingFit,
  refitGoalLevel,
} from './team-ratings.js';

export interface RatingConfig {
  /** Weight of past matches: exp(−decay · days); 0.002 per day halves a match's weight in about a year. */
  decayPerDay: number;
  /** Matches older than this many days are left out (their weight is below 5% at 0.002 per day). */
  windowDays: number;
  /** Standard deviation of the normal prior on attack and defence; Infinity for none. */
  priorSd: number;
  /** Share of the goal signal taken from shots on target (0 = goals only). */
  shotWeight: number;
  /** Fit Dixon-Coles' ρ. */
  fitRho: boolean;
}

export const MODEL_RATINGS: RatingConfig = {
  decayPerDay: 0.002,
  windowDays: 1460,
  priorSd: 0.5,
  shotWeight: 0.3,
  fitRho: true,
};

const BASELINE_RATINGS: RatingConfig = {
  decayPerDay: 0.002,
  windowDays: 1460,
  priorSd: Number.POSITIVE_INFINITY,
  shotWeight: 0,
  fitRho: true,
};

/** Goals per shot on target by competition, from matches that carry the statistics. */
export function goalsPerShotOnTarget(matches: readonly LeagueMatch[]): Map<string, number> {
  const sums = new Map<string, { goals: number; onTarget: number }>();
  for (const m of matches) {
    if (!m.stats) continue;
    const sum = sums.get(m.competition) ?? { goals: 0, onTarget: 0 };
    sum.goals += m.homeGoals + m.awayGoals;
    sum.onTarget += m.stats.home.shotsOnTarget + m.stats.away.shotsOnTarget;
    sums.set(m.competition, sum);
  }
  return new Map(
    [...sums].map(([competition, s]) => [competition, s.onTarget > 0 ? s.goals / s.onTarget : 0]),
  );
}

/** The goal signal each match contributes to the ratings under a configuration. */
export function ratingSignal(
  matches: readonly LeagueMatch[],
  config: RatingConfig,
  conversion: ReadonlyMap<string, number>,
): RatedMatch[] {
  return matches.map((m) => {
    const perShot = conversion.get(m.competition) ?? 0;
    const blend = m.stats && config.shotWeight > 0 && perShot > 0 ? config.shotWeight : 0;
    return {
      day: m.day,
      home: m.home,
      away: m.away,
      homeGoals: m.homeGoals,
      awayGoals: m.awayGoals,
      homeScore: (1 - blend) * m.homeGoals + blend * perShot * (m.stats?.home.shotsOnTarget ?? 0),
      awayScore: (1 - blend) * m.awayGoals + blend * perShot * (m.stats?.away.shotsOnTarget ?? 0),
    };
  });
}

/** Ratings of one competition fitted on the matches before `asOf`. */
export function fitCompetitionRatings(
  signal: readonly RatedMatch[],
  config: RatingConfig,
  asOf: number,
  start?: RatingFit,
): RatingFit {
  const recent = signal.filter((m) => m.day < asOf && m.day >= asOf - config.windowDays);
  const fit = fitTeamRatings(recent, {
    asOf,
    decayPerDay: config.decayPerDay,
    prior: { sd: config.priorSd },
    fitRho: config.fitRho,
    ...(start ? { start } : {}),
  });
  // A blended signal sets the ratings; the goal level and home advantage come from goals alone.
  return config.shotWeight > 0 ? refitGoalLevel(recent, fit, { asOf, decayPerDay: config.decayPerDay }) : fit;
}

export interface RatedForecast {
  lambdaHome: number;
  lambdaAway: number;
  rho: number;
}

export interface WalkForwardMatch {
  match: LeagueMatch;
  model: RatedForecast;
  baseline: RatedForecast;
}

export interface WalkForwardOptions {
  heldOutSeasons: readonly number[];
  /** Refit when this many days have passed since the last fit (ratings stay fitted on earlier days only). */
  refitEveryDays?: number;
  model?: RatingConfig;
  baseline?: RatingConfig;
}

/** Pre-match rated goals of every held-out match under both rating models. */
export function walkForward(
  matches: readonly LeagueMatch[],
  options: WalkForwardOptions,
): WalkForwardMatch[] {
  const heldOut = new Set(options.heldOutSeasons);
  const firstHeldOut = Math.min(...options.heldOutSeasons);
  const refitEvery = options.refitEveryDays ?? 3;
  const modelConfig = options.model ?? MODEL_RATINGS;
  const baselineConfig = options.baseline ?? BASELINE_RATINGS;
  // Goals per shot on target from seasons before the held-out ones only.
  const conversion = goalsPerShotOnTarget(matches.filter((m) => m.season < firstHeldOut));
  const out: WalkForwardMatch[] = [];
  const competitions = [...new Set(matches.map((m) => m.competition))].sort();
  for (const competition of competitions) {
    const own = matches.filter((m) => m.competition === competition);
    const modelSignal = ratingSignal(own, modelConfig, conversion);
    const baselineSignal = ratingSignal(own, baselineConfig, conversion);
    let modelFit: RatingFit | undefined;
    let baselineFit: RatingFit | undefined;
    let fittedOn = Number.NEGATIVE_INFINITY;
    for (const match of own) {
      if (!heldOut.has(match.season)) continue;
      if (!modelFit || !baselineFit || match.day - fittedOn >= refitEvery) {
        modelFit = fitCompetitionRatings(modelSignal, modelConfig, match.day, modelFit);
        baselineFit = fitCompetitionRatings(baselineSignal, baselineConfig, match.day, baselineFit);
        fittedOn = match.day;
      }
      const m = expectedGoals(modelFit, match.home, match.away);
      const b = expectedGoals(baselineFit, match.home, match.away);
      out.push({
        match,
        model: { lambdaHome: m.home, lambdaAway: m.away, rho: modelFit.rho },
        baseline: { lambdaHome: b.home, lambdaAway: b.away, rho: baselineFit.rho },
      });
    }
  }
  return out.sort(
    (a, b) => a.match.day - b.match.day || a.match.competition.localeCompare(b.match.competition),
  );
}
