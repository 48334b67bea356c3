// A second family of team ratings beside the Dixon-Coles fit (walk-forward.ts), for an ensemble: ratings
// updated match by match from goal differences only, read as an expected goal difference (supremacy)
// and blended with the Dixon-Coles supremacy while the Dixon-Coles total of goals is kept.
// Two families (docs/model.md, "Settings tried and rejected", has the figures):
// - goal-difference Elo (as the World Football Elo ratings): one rating per club, the update scaled by the
//   margin of victory;
// - pi-ratings (Constantinou and Fenton 2013): a home and an away rating per club, each the expected goal
//   difference on a log scale, updated by the error of the predicted goal difference.
// Both are walk-forward by construction: a match is predicted from the matches of earlier days only.
import type { LeagueMatch } from './league-results.js';

export type SecondRatingFamily =
  | { kind: 'elo'; k: number; homeAdvantage: number }
  | { kind: 'pi'; learningRate: number; crossRate: number };

export const ELO: SecondRatingFamily = { kind: 'elo', k: 20, homeAdvantage: 60 };
export const PI_RATINGS: SecondRatingFamily = { kind: 'pi', learningRate: 0.035, crossRate: 0.7 };

/** Pi-ratings' scale: a rating r means an expected goal difference of 10^(|r|/3) − 1. */
const PI_SCALE = 3;

interface ClubRating {
  elo: number;
  piHome: number;
  piAway: number;
}

/**
 * The family's raw predictor of every match (Elo: rating difference with home advantage; pi-ratings: the
 * predicted goal difference), from the ratings as they stood before the match's day. Each competition is
 * rated on its own; a club new to it starts at the mean rating of the clubs that left it the season
 * before (the relegated clubs it replaces), or `newcomerStart` of the way from there to the league's
 * mean (0 kept: tried 0–1 on 2014/15–2017/18, docs/model.md).
 */
export function secondRatingPredictors(
  matches: readonly LeagueMatch[],
  family: SecondRatingFamily,
  newcomerStart = 0,
): Map<LeagueMatch, number> {
  const out = new Map<LeagueMatch, number>();
  const competitions = [...new Set(matches.map((m) => m.competition))].sort();
  for (const competition of competitions) {
    const own = matches.filter((m) => m.competition === competition).sort((a, b) => a.day - b.day);
    const ratings = new Map<string, ClubRating>();
    const lastSeasonOf = new Map<string, number>();
    let season = Number.NaN;
    let day = Number.NaN;
    let pending: LeagueMatch[] = [];
    for (const m of own) {
      if (m.day !== day) {
        for (const p of pending) update(ratings, p, family);
        pending = [];
        day = m.day;
      }
      if (m.season !== season) {
        startSeason(ratings, lastSeasonOf, own, m.season, newcomerStart);
        season = m.season;
      }
      out.set(m, predictor(ratings, m, family));
      pending.push(m);
      lastSeasonOf.set(m.home, m.season);
      lastSeasonOf.set(m.away, m.season);
    }
  }
  return out;
}

/** Newcomers of `season` start at the mean rating of the clubs that left after the season before. */
function startSeason(
  ratings: Map<string, ClubRating>,
  lastSeasonOf: ReadonlyMap<string, number>,
  own: readonly LeagueMatch[],
  season: number,
  towardsLeague: number,
): void {
  const clubs = new Set(own.filter((m) => m.season === season).flatMap((m) => [m.home, m.away]));
  const left = [...lastSeasonOf].filter(([club, s]) => s === season - 1 && !clubs.has(club));
  const everyone = [...ratings.values()];
  const pool = left.length > 0 ? left.map(([c]) => ratings.get(c)!) : everyone;
  const mean = (clubs: readonly ClubRating[], pick: (r: ClubRating) => number, empty: number) =>
    clubs.length === 0 ? empty : clubs.reduce((s, r) => s + pick(r), 0) / clubs.length;
  const between = (pick: (r: ClubRating) => number, empty: number) =>
    (1 - towardsLeague) * mean(pool, pick, empty) + towardsLeague * mean(everyone, pick, empty);
  const start: ClubRating = {
    elo: between((r) => r.elo, 1500),
    piHome: between((r) => r.piHome, 0),
    piAway: between((r) => r.piAway, 0),
  };
  for (const club of clubs) {
    if (lastSeasonOf.get(club) !== season - 1 || !ratings.has(club)) ratings.set(club, { ...start });
  }
}

function rating(ratings: Map<string, ClubRating>, club: string): ClubRating {
  let r = ratings.get(club);
  if (!r) {
    r = { elo: 1500, piHome: 0, piAway: 0 };
    ratings.set(club, r);
  }
  return r;
}

function piGoals(r: number): number {
  return Math.sign(r) * (10 ** (Math.abs(r) / PI_SCALE) - 1);
}

function predictor(ratings: Map<string, ClubRating>, m: LeagueMatch, family: SecondRatingFamily): number {
  const home = rating(ratings, m.home);
  const away = rating(ratings, m.away);
  return family.kind === 'elo'
    ? home.elo - away.elo + family.homeAdvantage
    : piGoals(home.piHome) - piGoals(away.piAway);
}

function update(ratings: Map<string, ClubRating>, m: LeagueMatch, family: SecondRatingFamily): void {
  const home = rating(ratings, m.home);
  const away = rating(ratings, m.away);
  const difference = m.homeGoals - m.awayGoals;
  if (family.kind === 'elo') {
    const expected = 1 / (1 + 10 ** (-(home.elo - away.elo + family.homeAdvantage) / 400));
    const result = difference > 0 ? 1 : difference === 0 ? 0.5 : 0;
    const margin = Math.abs(difference);
    const weight = margin <= 1 ? 1 : margin === 2 ? 1.5 : (11 + margin) / 8;
    const change = family.k * weight * (result - expected);
    home.elo += change;
    away.elo -= change;
    return;
  }
  const error = difference - (piGoals(home.piHome) - piGoals(away.piAway));
  const step = Math.sign(error) * PI_SCALE * Math.log10(1 + Math.abs(error)) * family.learningRate;
  home.piHome += step;
  home.piAway += family.crossRate * step;
  away.piAway -= step;
  away.piHome -= family.crossRate * step;
}

/**
 * Each match's expected goal difference from the family's predictor: a least-squares line (goal
 * difference on predictor) fitted on the competition's matches of the `seasons` seasons before the
 * match's season, so the scale is learned walk-forward as well.
 */
export function calibratedSupremacy(
  matches: readonly LeagueMatch[],
  predictors: ReadonlyMap<LeagueMatch, number>,
  seasons = 4,
): Map<LeagueMatch, number> {
  const lines = new Map<string, { intercept: number; slope: number }>();
  const line = (competition: string, season: number) => {
    const key = `${competition} ${season}`;
    let fitted = lines.get(key);
    if (!fitted) {
      const past = matches.filter(
        (m) => m.competition === competition && m.season < season && m.season >= season - seasons,
      );
      fitted = leastSquares(
        past.map((m) => predictors.get(m)!),
        past.map((m) => m.homeGoals - m.awayGoals),
      );
      lines.set(key, fitted);
    }
    return fitted;
  };
  const out = new Map<LeagueMatch, number>();
  for (const m of matches) {
    const { intercept, slope } = line(m.competition, m.season);
    out.set(m, intercept + slope * predictors.get(m)!);
  }
  return out;
}

function leastSquares(xs: readonly number[], ys: readonly number[]): { intercept: number; slope: number } {
  const n = xs.length;
  if (n < 2) return { intercept: 0.3, slope: 0 };
  const mx = xs.reduce((s, x) => s + x, 0) / n;
  const my = ys.reduce((s, y) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  return { intercept: my - slope * mx, slope };
}

/**
 * The ensemble's rated goals: the Dixon-Coles total kept, its supremacy (home − away expected goals)
 * moved `weight` of the way towards the second family's; each side keeps at least 0.05 goals.
 */
export function blendedForecast<T extends { lambdaHome: number; lambdaAway: number }>(
  forecast: T,
  supremacy: number,
  weight: number,
): T {
  const total = forecast.lambdaHome + forecast.lambdaAway;
  const blended = (1 - weight) * (forecast.lambdaHome - forecast.lambdaAway) + weight * supremacy;
  const home = Math.min(total - 0.05, Math.max(0.05, (total + blended) / 2));
  return { ...forecast, lambdaHome: home, lambdaAway: total - home };
}
