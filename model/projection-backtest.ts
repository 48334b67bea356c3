// The season projections' walk-forward backtest and the fit of their strength perturbation (docs/model.md,
// "Season projections"). Each league season of ../shared/data is projected from its state after rounds
// 10, 20 and 30 with the ratings as of that day only (`clubRatingsAsOf`, what `matchsim ratings` gives a
// feed), and scored against the final table: Brier scores of the title, top four and relegation, and the
// ranked probability score over final places. Beside it, two baselines: the same simulation without the
// strength perturbation, and the table as it stood. The perturbation's sd is chosen on seasons before the
// held-out ones, by the mean RPS over places. `matchsim projection backtest` runs it and writes
// src/projections/projection-model.json.
import { defaultZones } from '../src/fixtures/competition-rules.js';
import type { ProjectionModel } from '../src/projections/projection-model.js';
import {
  type PlayedFixture,
  type RemainingFixture,
  type SeasonInput,
  type SeasonRules,
  simulateSeasons,
} from '../src/projections/season-sampler.js';
import { clubRatingsAsOf } from './club-ratings.js';
import type { LeagueMatch } from './league-results.js';

export const BACKTEST_ROUNDS = [10, 20, 30] as const;
/** Sds tried on the fit seasons (log goal scale). */
export const STRENGTH_SD_GRID = [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3];

/** Head to head before goal difference in La Liga and Serie A; the others as the defaults. */
export function leagueRules(league: string): SeasonRules {
  const headToHeadFirst = league === 'la-liga' || league === 'serie-a';
  return {
    win: 3,
    draw: 1,
    tieBreakers: headToHeadFirst
      ? ['head_to_head', 'goal_difference', 'goals_for']
      : ['goal_difference', 'goals_for', 'head_to_head'],
  };
}

/** One league season as of one round: the sampler's input (without its sd) and the final places. */
export interface SeasonCase {
  league: string;
  season: number;
  round: number;
  input: Omit<SeasonInput, 'strengthSd'>;
  /** finalPlace[club]: 0 = champion. */
  finalPlace: number[];
  /** The table as it stood: each club's place after the round. */
  currentPlace: number[];
}

/** The places a table of played fixtures gives (lots for clubs level on everything, seeded). */
function placesOf(input: Omit<SeasonInput, 'strengthSd'>, played: readonly PlayedFixture[]): number[] {
  const tally = simulateSeasons({ ...input, played, remaining: [], strengthSd: 0 }, 1, 'table');
  const places = new Array<number>(input.clubs).fill(0);
  for (let c = 0; c < input.clubs; c++) {
    for (let p = 0; p < input.clubs; p++) if (tally.positions[c * input.clubs + p]) places[c] = p;
  }
  return places;
}

/** The season's state after `round` rounds (the first round × clubs/2 matches by date) and its outcome. */
export function seasonCase(
  all: readonly LeagueMatch[],
  league: string,
  season: number,
  round: number,
): SeasonCase | null {
  const matches = all
    .filter((m) => m.competition === league && m.season === season)
    .sort((a, b) => a.day - b.day);
  const names = [...new Set(matches.flatMap((m) => [m.home, m.away]))].sort();
  const clubs = names.length;
  if (matches.length !== clubs * (clubs - 1)) return null;
  const cut = matches[(round * clubs) / 2];
  if (!cut) return null;
  const ratings = clubRatingsAsOf(
    all.filter((m) => m.competition === league),
    cut.date,
  ).competitions[0]!;
  const rating = new Map(ratings.clubs.map((club) => [club.name, club]));
  const index = new Map(names.map((name, i) => [name, i]));
  const toPlayed = (m: LeagueMatch): PlayedFixture => ({
    home: index.get(m.home)!,
    away: index.get(m.away)!,
    homeGoals: m.homeGoals,
    awayGoals: m.awayGoals,
  });
  const played = matches.filter((m) => m.day < cut.day).map(toPlayed);
  const remaining = matches
    .filter((m) => m.day >= cut.day)
    .map((m): RemainingFixture => {
      const home = rating.get(m.home)!;
      const away = rating.get(m.away)!;
      return {
        home: index.get(m.home)!,
        away: index.get(m.away)!,
        homeExpectedGoals: Math.exp(ratings.intercept + ratings.home_advantage + home.attack - away.defence),
        awayExpectedGoals: Math.exp(ratings.intercept + away.attack - home.defence),
      };
    });
  const input = { clubs, played, remaining, rules: leagueRules(league) };
  return {
    league,
    season,
    round,
    input,
    finalPlace: placesOf(input, matches.map(toPlayed)),
    currentPlace: placesOf(input, played),
  };
}

export interface ProjectionScores {
  title: number;
  top_four: number;
  relegation: number;
  rps_places: number;
}

/** Scores of one projection: positions[club][place] probabilities against the final places. */
export function scoreProjection(positions: number[][], finalPlace: number[]): ProjectionScores {
  const n = finalPlace.length;
  const relegation = defaultZones(n).find((zone) => zone.name === 'relegation')!;
  const zoneBrier = (from: number, to: number) => {
    let sum = 0;
    positions.forEach((row, c) => {
      const p = row.slice(from - 1, to).reduce((a, b) => a + b, 0);
      const happened = finalPlace[c]! >= from - 1 && finalPlace[c]! <= to - 1 ? 1 : 0;
      sum += (p - happened) ** 2;
    });
    return sum / n;
  };
  let rps = 0;
  positions.forEach((row, c) => {
    let predicted = 0;
    let sum = 0;
    for (let k = 0; k < n - 1; k++) {
      predicted += row[k]!;
      const observed = finalPlace[c]! <= k ? 1 : 0;
      sum += (predicted - observed) ** 2;
    }
    rps += sum / (n - 1);
  });
  return {
    title: zoneBrier(1, 1),
    top_four: zoneBrier(1, 4),
    relegation: zoneBrier(relegation.from, relegation.to),
    rps_places: rps / n,
  };
}

/** The simulated places of a case with sd `strengthSd`, as probabilities per club. */
export function projectCase(c: SeasonCase, strengthSd: number, seasons: number): number[][] {
  const tally = simulateSeasons({ ...c.input, strengthSd }, seasons, `${c.league}-${c.season}-${c.round}`);
  const n = c.input.clubs;
  return Array.from({ length: n }, (_, club) =>
    Array.from({ length: n }, (_, place) => tally.positions[club * n + place]! / seasons),
  );
}

/** Certainty in the table as it stood. */
function tableAsItStood(c: SeasonCase): number[][] {
  const n = c.input.clubs;
  return c.currentPlace.map((place) => Array.from({ length: n }, (_, p) => (p === place ? 1 : 0)));
}

function meanScores(scores: ProjectionScores[]): Record<string, number> {
  const keys = ['title', 'top_four', 'relegation', 'rps_places'] as const;
  return Object.fromEntries(
    keys.map((key) => [key, Number((scores.reduce((sum, s) => sum + s[key], 0) / scores.length).toFixed(5))]),
  );
}

export interface ProjectionBacktestOptions {
  matches: readonly LeagueMatch[];
  leagues: readonly string[];
  fitSeasons: readonly number[];
  heldOutSeasons: readonly number[];
  /** Seasons simulated per projection (fit: a fifth of it). */
  seasons: number;
  log?: (line: string) => void;
}

function cases(options: ProjectionBacktestOptions, seasons: readonly number[]): SeasonCase[] {
  const out: SeasonCase[] = [];
  for (const league of options.leagues) {
    for (const season of seasons) {
      for (const round of BACKTEST_ROUNDS) {
        const found = seasonCase(options.matches, league, season, round);
        if (found) out.push(found);
      }
    }
    options.log?.(`${league}: ${out.length} projections so far`);
  }
  return out;
}

/** The sd with the lowest mean RPS over places on the fit seasons, and each sd's RPS. */
export function fitStrengthSd(
  fitCases: SeasonCase[],
  seasons: number,
): { sd: number; rps: Record<string, number> } {
  const rps: Record<string, number> = {};
  let best = { sd: 0, rps: Number.POSITIVE_INFINITY };
  for (const sd of STRENGTH_SD_GRID) {
    const mean =
      fitCases.reduce(
        (sum, c) => sum + scoreProjection(projectCase(c, sd, seasons), c.finalPlace).rps_places,
        0,
      ) / fitCases.length;
    rps[String(sd)] = Number(mean.toFixed(5));
    if (mean < best.rps) best = { sd, rps: mean };
  }
  return { sd: best.sd, rps };
}

export function backtestProjections(options: ProjectionBacktestOptions): {
  model: ProjectionModel;
  fit: { sd: number; rps: Record<string, number> };
} {
  const fitCases = cases(options, options.fitSeasons);
  const fit = fitStrengthSd(fitCases, Math.max(1000, Math.round(options.seasons / 5)));
  options.log?.(
    `strength sd ${fit.sd} (mean RPS over places on the fit seasons: ${JSON.stringify(fit.rps)})`,
  );
  const heldOut = cases(options, options.heldOutSeasons);
  const rounds: ProjectionModel['backtest']['rounds'] = {};
  for (const round of BACKTEST_ROUNDS) {
    const these = heldOut.filter((c) => c.round === round);
    rounds[String(round)] = {
      projections: these.length,
      model: meanScores(
        these.map((c) => scoreProjection(projectCase(c, fit.sd, options.seasons), c.finalPlace)),
      ),
      without_uncertainty: meanScores(
        these.map((c) => scoreProjection(projectCase(c, 0, options.seasons), c.finalPlace)),
      ),
      table_as_it_stood: meanScores(these.map((c) => scoreProjection(tableAsItStood(c), c.finalPlace))),
    };
  }
  return {
    model: {
      version: 'season-1',
      sampler: 'goals_only_poisson',
      strength_sd: fit.sd,
      fitted_on: [...options.fitSeasons],
      backtest: {
        held_out_seasons: [...options.heldOutSeasons],
        leagues: [...options.leagues],
        seasons_simulated: options.seasons,
        rounds,
      },
    },
    fit,
  };
}
