// The prior for clubs new to a competition (docs/model.md, "Team ratings"): promoted clubs, and clubs
// returning after years away, start from where newcomers to that league have actually ended up rather
// than from the league average. Learned from history: for every past season, the ratings fitted on
// that season's matches alone; the newcomers' mean attack and defence, relative to the season's mean,
// averaged over the seasons. A returning club's older matches still count through the time decay, so
// its ratings move from the newcomer prior towards what its own (decayed) record says.
import type { LeagueMatch } from './league-results.js';
import { newcomerTest } from './subgroups.js';
import { fitTeamRatings, type TeamRating } from './team-ratings.js';

/** Seasons (most recent before the cut-off) the newcomer prior is learned from. */
const PRIOR_SEASONS = 12;
/** Shrinks each season's fit a little, as the walk-forward fit does (same scale). */
const SEASON_FIT_PRIOR_SD = 0.5;

/** The mean rating newcomers to a competition ended up with (its prior mean), and its evidence. */
export interface NewcomerPrior extends TeamRating {
  /** Newcomer seasons (club × season) it was learned from. */
  clubs: number;
}

/** The newcomer prior of each competition, learned from the seasons before `untilSeason`. */
export function learnNewcomerPriors(
  matches: readonly LeagueMatch[],
  untilSeason: number,
): Map<string, NewcomerPrior> {
  const isNew = newcomerTest(matches);
  const out = new Map<string, NewcomerPrior>();
  const competitions = [...new Set(matches.map((m) => m.competition))].sort();
  for (const competition of competitions) {
    const own = matches.filter((m) => m.competition === competition && m.season < untilSeason);
    const seasons = [...new Set(own.map((m) => m.season))].sort((a, b) => a - b).slice(-PRIOR_SEASONS);
    let attack = 0;
    let defence = 0;
    let clubs = 0;
    for (const season of seasons) {
      const played = own.filter((m) => m.season === season);
      const newcomers = new Set(
        played.flatMap((m) => [m.home, m.away]).filter((team) => isNew(played[0]!, team)),
      );
      if (newcomers.size === 0) continue;
      const fit = fitTeamRatings(
        played.map((m) => ({ ...m, homeScore: m.homeGoals, awayScore: m.awayGoals })),
        {
          asOf: played[played.length - 1]!.day + 1,
          decayPerDay: 0,
          prior: { sd: SEASON_FIT_PRIOR_SD },
          fitRho: false,
        },
      );
      const mean = meanRating([...fit.teams.values()]);
      for (const team of newcomers) {
        const r = fit.teams.get(team)!;
        attack += r.attack - mean.attack;
        defence += r.defence - mean.defence;
        clubs++;
      }
    }
    if (clubs > 0) out.set(competition, { attack: attack / clubs, defence: defence / clubs, clubs });
  }
  return out;
}

function meanRating(ratings: readonly TeamRating[]): TeamRating {
  const n = Math.max(1, ratings.length);
  return {
    attack: ratings.reduce((s, r) => s + r.attack, 0) / n,
    defence: ratings.reduce((s, r) => s + r.defence, 0) / n,
  };
}
