// Subgroups of held-out matches and the newcomer prior: on a small hand-made league, then on real data.
import { describe, expect, it } from 'vitest';
import { type LeagueMatch, loadLeagueMatches } from '../../model/league-results.js';
import { learnNewcomerPriors } from '../../model/newcomer-prior.js';
import { newcomerTest, subgroupsOf } from '../../model/subgroups.js';
import { testDataDir } from '../helpers/football-data.js';

function match(
  season: number,
  day: number,
  home: string,
  away: string,
  goals: [number, number],
): LeagueMatch {
  return {
    competition: 'test-league',
    season,
    date: '',
    day,
    home,
    away,
    homeGoals: goals[0],
    awayGoals: goals[1],
    halfTime: null,
    stats: null,
  };
}

/** Season 1: A, B, C; season 2: C is relegated and N comes up; every side plays each other twice. */
function twoSeasons(): LeagueMatch[] {
  const out: LeagueMatch[] = [];
  const seasons: [number, string[]][] = [
    [1, ['A', 'B', 'C']],
    [2, ['A', 'B', 'N']],
  ];
  let day = 0;
  for (const [season, teams] of seasons) {
    for (let round = 0; round < 6; round++) {
      for (const home of teams) {
        for (const away of teams) {
          if (home !== away) out.push(match(season, day++, home, away, away === 'N' ? [3, 0] : [1, 1]));
        }
      }
    }
  }
  return out;
}

describe('subgroups', () => {
  it('marks the clubs absent the season before as newcomers, and nobody in the first season', () => {
    const matches = twoSeasons();
    const isNew = newcomerTest(matches);
    const second = matches.find((m) => m.season === 2)!;
    expect(isNew(second, 'N')).toBe(true);
    expect(isNew(second, 'A')).toBe(false);
    expect(isNew(matches[0]!, 'A')).toBe(false);
  });

  it('puts a newcomer’s matches in promoted, the others in established, early rounds in early_season', () => {
    const matches = twoSeasons();
    const second = matches.filter((m) => m.season === 2);
    const groups = subgroupsOf(matches, second);
    for (const m of second) {
      const g = groups.get(m)!;
      const hasNewcomer = m.home === 'N' || m.away === 'N';
      expect(g.includes('promoted')).toBe(hasNewcomer);
      expect(g.includes('established')).toBe(!hasNewcomer);
    }
    // The first match of the season: nobody has played yet; N has no recent matches at all.
    expect(groups.get(second[0]!)).toContain('early_season');
    expect(groups.get(second.at(-1)!)).not.toContain('early_season');
    const firstWithN = second.find((m) => m.home === 'N' || m.away === 'N')!;
    expect(groups.get(firstWithN)).toContain('few_matches');
  });
});

describe('learnNewcomerPriors', () => {
  it('learns that a newcomer who loses every match is weaker than the league', () => {
    const prior = learnNewcomerPriors(twoSeasons(), 3).get('test-league')!;
    expect(prior.clubs).toBe(1);
    expect(prior.attack).toBeLessThan(-0.2);
    expect(prior.defence).toBeLessThan(-0.2);
  });

  it('finds promoted clubs below the league average in every real league, from seasons before 2018', () => {
    // test/football-data holds 2014/15 to 2016/17 of each league before 2018: the promoted of the last
    // two seasons, two a season in the Bundesliga and three elsewhere (the full data's 12 seasons give
    // about 30 a league, and each league's attack and defence below average on its own).
    const priors = learnNewcomerPriors(loadLeagueMatches(testDataDir), 2018);
    expect(Object.fromEntries([...priors].map(([league, prior]) => [league, prior.clubs]))).toEqual({
      bundesliga: 4,
      'la-liga': 6,
      'ligue-1': 6,
      'premier-league': 6,
      'serie-a': 6,
    });
    for (const prior of priors.values()) {
      expect(prior.attack).toBeLessThan(-0.05);
      expect(prior.attack).toBeGreaterThan(-0.4);
      expect(prior.attack + prior.defence).toBeLessThan(-0.05);
    }
    // Pooled over the leagues' 28 clubs, attack and defence are both below average.
    const pooled = [...priors.values()].reduce(
      (sum, prior) => ({
        attack: sum.attack + (prior.attack * prior.clubs) / 28,
        defence: sum.defence + (prior.defence * prior.clubs) / 28,
      }),
      { attack: 0, defence: 0 },
    );
    expect(pooled.attack).toBeLessThan(-0.05);
    expect(pooled.defence).toBeLessThan(-0.05);
  });
});
