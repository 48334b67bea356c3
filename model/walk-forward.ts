// Walk-forward team ratings: for every match of the held-out seasons, the ratings as they stood before
// its day, fitted only on earlier matches. Two rating models side by side:
// - the model's own: Dixon-Coles with time decay, a normal prior pulling thin evidence to the league
//   average, and a goal signal that blends goals with shots on target (a shot on target is worth the
//   league's goals per shot on target), which carries more information per match than goals alone;
//   its rated total of goals is shrunk towards the league's (goal-totals.ts) and its rated supremacy
//   blended with a second rating family's (pi-ratings, second-ratings.ts);
// - the baseline: plain Dixon-Coles, goals only, same decay, no prior.
import { shrunkTotal, totalsCentre } from './goal-totals.js';
import type { LeagueMatch } from './league-results.js';
import { learnNewcomerPriors } from './newcomer-prior.js';
import {
  blendedForecast,
  calibratedSupremacy,
  PI_RATINGS,
  type SecondRatingFamily,
  secondRatingPredictors,
} from './second-ratings.js';
import { newcomerTest } from './subgroups.js';
import {
  expectedGoals,
  fitTeamRatings,
  type RatedMatch,
  type RatingFit,
  refitGoalLevel,
  type TeamRating,
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
  /** Clubs new to the competition start from the league's learned newcomer prior (newcomer-prior.ts). */
  newcomerPrior: boolean;
  /** Decay per competition where it differs from `decayPerDay` (tuned by walk-forward). */
  decayByCompetition?: Readonly<Record<string, number>>;
  /**
   * Ensemble with a second rating family (second-ratings.ts): the rated supremacy moved `weight` of the
   * way towards the family's, the total of goals kept. Only the walk-forward forecasts use it.
   */
  ensemble?: { family: SecondRatingFamily; weight: number };
  /**
   * Each club's goals-at-either-end rating (attack − defence) pulled to `1 − totalShrink` of its distance
   * from the season's clubs' mean, the mean total kept (goal-totals.ts); 1 or absent: no shrink. Only the
   * walk-forward forecasts use it, before the ensemble (which keeps the total).
   */
  totalShrink?: number;
}

export const MODEL_RATINGS: RatingConfig = {
  decayPerDay: 0.002,
  windowDays: 1460,
  priorSd: 0.5,
  shotWeight: 0.3,
  fitRho: true,
  newcomerPrior: true,
  ensemble: { family: PI_RATINGS, weight: 0.3 },
  totalShrink: 0.7,
};

const BASELINE_RATINGS: RatingConfig = {
  decayPerDay: 0.002,
  windowDays: 1460,
  priorSd: Number.POSITIVE_INFINITY,
  shotWeight: 0,
  fitRho: true,
  newcomerPrior: false,
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
  meanFor?: (team: string) => TeamRating,
): RatingFit {
  const recent = signal.filter((m) => m.day < asOf && m.day >= asOf - config.windowDays);
  const fit = fitTeamRatings(recent, {
    asOf,
    decayPerDay: config.decayPerDay,
    prior: { sd: config.priorSd, ...(meanFor ? { meanFor } : {}) },
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
  /**
   * The model's rated goals before the ensemble blend (totals shrink applied): what ratings per club can
   * carry, and what `matchsim ratings` publishes (club-ratings.ts).
   */
  rated: RatedForecast;
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
  const modelConfig = options.model ?? MODEL_RATINGS;
  const baselineConfig = options.baseline ?? BASELINE_RATINGS;
  const context: CompetitionContext = {
    ...ratingContext(matches, options.heldOutSeasons, modelConfig),
    refitEvery: options.refitEveryDays ?? 3,
    secondSupremacy: modelConfig.ensemble
      ? calibratedSupremacy(matches, secondRatingPredictors(matches, modelConfig.ensemble.family))
      : new Map(),
  };
  const out: WalkForwardMatch[] = [];
  const competitions = [...new Set(matches.map((m) => m.competition))].sort();
  for (const competition of competitions) {
    const own = matches.filter((m) => m.competition === competition);
    out.push(
      ...walkForwardCompetition(
        own,
        forCompetition(modelConfig, competition),
        forCompetition(baselineConfig, competition),
        context,
      ),
    );
  }
  return out.sort(
    (a, b) => a.match.day - b.match.day || a.match.competition.localeCompare(b.match.competition),
  );
}

/** What the model's ratings rest on besides a competition's own matches. */
export interface RatingContext {
  heldOut: ReadonlySet<number>;
  /** Goals per shot on target by competition (the shots-on-target signal's worth in goals). */
  conversion: ReadonlyMap<string, number>;
  newcomerPriors: ReadonlyMap<string, TeamRating>;
  isNew: (match: Pick<LeagueMatch, 'competition' | 'season'>, team: string) => boolean;
}

/**
 * The context of a walk-forward over `heldOutSeasons`: goals per shot on target and the newcomer priors
 * from the seasons before the first of them only.
 */
export function ratingContext(
  matches: readonly LeagueMatch[],
  heldOutSeasons: readonly number[],
  modelConfig: RatingConfig,
): RatingContext {
  const firstHeldOut = Math.min(...heldOutSeasons);
  const before = matches.filter((m) => m.season < firstHeldOut);
  return {
    heldOut: new Set(heldOutSeasons),
    conversion: goalsPerShotOnTarget(before),
    newcomerPriors: modelConfig.newcomerPrior ? learnNewcomerPriors(before, firstHeldOut) : new Map(),
    isNew: newcomerTest(matches),
  };
}

interface CompetitionContext extends RatingContext {
  refitEvery: number;
  /** The second rating family's expected goal difference of every match (empty without an ensemble). */
  secondSupremacy: ReadonlyMap<LeagueMatch, number>;
}

const LEAGUE_AVERAGE: TeamRating = { attack: 0, defence: 0 };

/**
 * The prior mean of each club's ratings in a season of a competition: the newcomer prior for a club new
 * to it (who is new depends on the season being forecast; its fixture list is known before it starts),
 * else the league average.
 */
export function priorMeans(
  context: RatingContext,
  competition: string,
  season: number,
): (team: string) => TeamRating {
  const newcomer = context.newcomerPriors.get(competition) ?? LEAGUE_AVERAGE;
  return (team) => (context.isNew({ competition, season }, team) ? newcomer : LEAGUE_AVERAGE);
}

/**
 * The model's fit of one competition on the matches before `day`, and the centre its totals shrink
 * pulls towards over the season's clubs (goal-totals.ts; 0 without a shrink).
 */
export function modelRatingsBefore(
  signal: readonly RatedMatch[],
  config: RatingConfig,
  day: number,
  seasonClubs: readonly string[],
  meanFor: (team: string) => TeamRating,
  start?: RatingFit,
): { fit: RatingFit; centre: number } {
  const fit = fitCompetitionRatings(signal, config, day, start, meanFor);
  const shrink = config.totalShrink ?? 1;
  return { fit, centre: shrink === 1 ? 0 : totalsCentre(fit, seasonClubs, shrink, meanFor) };
}

/** A configuration with its competition's own decay, where it has one. */
export function forCompetition(config: RatingConfig, competition: string): RatingConfig {
  const decay = config.decayByCompetition?.[competition];
  return decay === undefined ? config : { ...config, decayPerDay: decay };
}

/** The walk-forward of one competition's held-out matches (all `own` matches are its history). */
function walkForwardCompetition(
  own: readonly LeagueMatch[],
  modelConfig: RatingConfig,
  baselineConfig: RatingConfig,
  context: CompetitionContext,
): WalkForwardMatch[] {
  const modelSignal = ratingSignal(own, modelConfig, context.conversion);
  const baselineSignal = ratingSignal(own, baselineConfig, context.conversion);
  const clubs = clubsBySeason(own);
  const shrink = modelConfig.totalShrink ?? 1;
  let modelFit: RatingFit | undefined;
  let baselineFit: RatingFit | undefined;
  let centre = 0;
  let fittedOn = Number.NEGATIVE_INFINITY;
  let fittedSeason = Number.NaN;
  const out: WalkForwardMatch[] = [];
  for (const match of own) {
    if (!context.heldOut.has(match.season)) continue;
    const meanFor = priorMeans(context, match.competition, match.season);
    const stale = match.day - fittedOn >= context.refitEvery || match.season !== fittedSeason;
    if (!modelFit || !baselineFit || stale) {
      const seasonClubs = clubs.get(match.season)!;
      ({ fit: modelFit, centre } = modelRatingsBefore(
        modelSignal,
        modelConfig,
        match.day,
        seasonClubs,
        meanFor,
        modelFit,
      ));
      baselineFit = fitCompetitionRatings(baselineSignal, baselineConfig, match.day, baselineFit);
      fittedOn = match.day;
      fittedSeason = match.season;
    }
    const m = expectedGoals(modelFit, match.home, match.away, meanFor);
    const b = expectedGoals(baselineFit, match.home, match.away);
    const fitted = { lambdaHome: m.home, lambdaAway: m.away, rho: modelFit.rho };
    const rated = shrink === 1 ? fitted : shrunkTotal(fitted, centre, shrink);
    const ensemble = modelConfig.ensemble;
    out.push({
      match,
      model: ensemble ? blendedForecast(rated, context.secondSupremacy.get(match)!, ensemble.weight) : rated,
      rated,
      baseline: { lambdaHome: b.home, lambdaAway: b.away, rho: baselineFit.rho },
    });
  }
  return out;
}

/** The clubs of each season (its fixture list, known before the season starts). */
export function clubsBySeason(own: readonly LeagueMatch[]): Map<number, string[]> {
  const sets = new Map<number, Set<string>>();
  for (const m of own) {
    const set = sets.get(m.season) ?? new Set<string>();
    set.add(m.home);
    set.add(m.away);
    sets.set(m.season, set);
  }
  return new Map([...sets].map(([season, set]) => [season, [...set].sort()]));
}
