// The second rating family of the ensemble (model/second-ratings.ts) on a small hand-made league:
// predictions use earlier days only, the stronger club is rated above, a promoted club starts where the
// relegated club left off, the calibration line is learned from earlier seasons, the blend keeps totals.
import { describe, expect, it } from 'vitest';
import type { LeagueMatch } from '../../model/league-results.js';
import {
  blendedForecast,
  calibratedSupremacy,
  ELO,
  PI_RATINGS,
  secondRatingPredictors,
} from '../../model/second-ratings.js';

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

/** Two seasons: A beats everyone 3-0, B and C draw; in season 2, C is replaced by newcomer N. */
function league(): LeagueMatch[] {
  const out: LeagueMatch[] = [];
  let day = 0;
  for (const [season, teams] of [
    [1, ['A', 'B', 'C']],
    [2, ['A', 'B', 'N']],
  ] as const) {
    for (let round = 0; round < 4; round++) {
      for (const home of teams) {
        for (const away of teams) {
          if (home === away) continue;
          const goals: [number, number] = home === 'A' ? [3, 0] : away === 'A' ? [0, 3] : [1, 1];
          out.push(match(season, day++, home, away, goals));
        }
      }
    }
  }
  return out;
}

describe('second rating family', () => {
  for (const family of [ELO, PI_RATINGS]) {
    it(`${family.kind}: a match's predictor depends on earlier days only`, () => {
      const matches = league();
      const before = secondRatingPredictors(matches, family);
      const changed = matches.map((m, i) => (i === 20 ? { ...m, homeGoals: 0, awayGoals: 5 } : m));
      const after = secondRatingPredictors(changed, family);
      for (let i = 0; i <= 20; i++) expect(after.get(changed[i]!)).toBe(before.get(matches[i]!));
      expect(after.get(changed[21]!)).not.toBe(before.get(matches[21]!));
    });

    it(`${family.kind}: the winning club is rated above, the newcomer starts like the club it replaced`, () => {
      const matches = league();
      const predictors = secondRatingPredictors(matches, family);
      const lastOfSeason1 = matches.filter((m) => m.season === 1).at(-1)!;
      const aHome = matches.filter((m) => m.season === 1 && m.home === 'A').at(-1)!;
      const bHome = matches.filter((m) => m.season === 1 && m.home === 'B' && m.away === 'C').at(-1)!;
      expect(predictors.get(aHome)!).toBeGreaterThan(predictors.get(bHome)!);
      // The first season-2 match of N at home to B is rated like C at home to B at the end of season 1.
      const nFirst = matches.find((m) => m.season === 2 && m.home === 'N' && m.away === 'B')!;
      const cLast = matches.filter((m) => m.season === 1 && m.home === 'C' && m.away === 'B').at(-1)!;
      expect(lastOfSeason1.season).toBe(1);
      expect(Math.abs(predictors.get(nFirst)! - predictors.get(cLast)!)).toBeLessThan(
        Math.abs(predictors.get(aHome)! - predictors.get(bHome)!),
      );
    });
  }

  it('calibrates the predictor against goal differences of earlier seasons only', () => {
    const matches = [1, 2, 3].flatMap((season) =>
      [0, 1, 2, 3].map((k) => match(season, season * 10 + k, `H${k}`, `A${k}`, [k + 1, 0])),
    );
    // Goal difference = predictor + 1 in every season: the line of seasons 1–2 forecasts season 3.
    const predictors = new Map(matches.map((m) => [m, m.homeGoals - m.awayGoals - 1]));
    const supremacy = calibratedSupremacy(matches, predictors);
    for (const m of matches.filter((x) => x.season === 3)) {
      expect(supremacy.get(m)).toBeCloseTo(m.homeGoals - m.awayGoals, 9);
    }
  });

  it('blends supremacy and keeps the total of goals', () => {
    const blended = blendedForecast({ lambdaHome: 2, lambdaAway: 1, rho: -0.05 }, 0, 0.5);
    expect(blended.lambdaHome + blended.lambdaAway).toBeCloseTo(3, 12);
    expect(blended.lambdaHome - blended.lambdaAway).toBeCloseTo(0.5, 12);
    expect(blended.rho).toBe(-0.05);
    expect(blendedForecast({ lambdaHome: 2, lambdaAway: 1, rho: 0 }, 1, 0)).toEqual({
      lambdaHome: 2,
      lambdaAway: 1,
      rho: 0,
    });
  });
});
