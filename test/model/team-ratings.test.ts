// The fitter against data drawn from a known Dixon-Coles model: it must give the ratings back.
import { describe, expect, it } from 'vitest';
import { dixonColesGrid, GRID_MAX, marketsFromGrid } from '../../model/score-grid.js';
import {
  expectedGoals,
  fitTeamRatings,
  lowScoreCorrection,
  type RatedMatch,
} from '../../model/team-ratings.js';
import { seededUniform } from '../engine/plausible-teams.js';

/** mulberry32: a small seeded generator, so the synthetic league is the same on every run. */

const TRUE = { intercept: 0.15, homeAdvantage: 0.28, rho: -0.12 };
const TEAMS = 16;
const truth = Array.from({ length: TEAMS }, (_, i) => ({
  name: `Team ${i}`,
  // Spread like a real league (sd about 0.25), centred so the intercept is identified.
  attack: ((i % 8) - 3.5) * 0.08,
  defence: ((((i * 5) % 16) - 7.5) / 7.5) * 0.3,
}));

function syntheticLeague(rounds: number, seed: number): RatedMatch[] {
  const uniform = seededUniform(seed);
  const matches: RatedMatch[] = [];
  let day = 0;
  for (let round = 0; round < rounds; round++) {
    for (const home of truth) {
      for (const away of truth) {
        if (home === away) continue;
        const lh = Math.exp(TRUE.intercept + TRUE.homeAdvantage + home.attack - away.defence);
        const la = Math.exp(TRUE.intercept + away.attack - home.defence);
        const grid = dixonColesGrid(lh, la, TRUE.rho);
        // Inverse-CDF draw of a scoreline from the Dixon-Coles grid.
        let u = uniform();
        let cell = 0;
        while (cell < grid.length - 1 && u >= grid[cell]!) u -= grid[cell++]!;
        const h = Math.floor(cell / GRID_MAX);
        const a = cell % GRID_MAX;
        matches.push({
          day: day++,
          home: home.name,
          away: away.name,
          homeGoals: h,
          awayGoals: a,
          homeScore: h,
          awayScore: a,
        });
      }
    }
  }
  return matches;
}

describe('fitTeamRatings', () => {
  const matches = syntheticLeague(12, 7); // 2,880 matches
  const fit = fitTeamRatings(matches, { asOf: 1e9, decayPerDay: 0, prior: { sd: Number.POSITIVE_INFINITY } });

  it('recovers the intercept, home advantage and ρ of the generating model', () => {
    // The fit centres attack and defence at zero; the truth is centred too.
    expect(fit.homeAdvantage).toBeCloseTo(TRUE.homeAdvantage, 1);
    expect(Math.abs(fit.homeAdvantage - TRUE.homeAdvantage)).toBeLessThan(0.05);
    expect(Math.abs(fit.intercept - TRUE.intercept)).toBeLessThan(0.05);
    expect(Math.abs(fit.rho - TRUE.rho)).toBeLessThan(0.06);
  });

  it('recovers every team rating within sampling error', () => {
    let worst = 0;
    for (const team of truth) {
      const got = fit.teams.get(team.name)!;
      worst = Math.max(worst, Math.abs(got.attack - team.attack), Math.abs(got.defence - team.defence));
    }
    // 360 matches a team: the standard error of a rating is about 0.045.
    expect(worst).toBeLessThan(0.15);
  });

  it('a prior pulls ratings towards the league average', () => {
    const shrunk = fitTeamRatings(matches.slice(0, 240), {
      asOf: 1e9,
      decayPerDay: 0,
      prior: { sd: 0.1 },
    });
    const loose = fitTeamRatings(matches.slice(0, 240), {
      asOf: 1e9,
      decayPerDay: 0,
      prior: { sd: Number.POSITIVE_INFINITY },
    });
    const spread = (f: typeof fit) => Math.max(...[...f.teams.values()].map((t) => Math.abs(t.attack)));
    expect(spread(shrunk)).toBeLessThan(spread(loose));
  });

  it('time decay lets recent form dominate', () => {
    // Team 0 turns into a goal machine for the last round (its last 30 matches).
    const lastRound = matches.length - 240;
    const late = matches.map((m) => {
      if (m.day < lastRound) return m;
      if (m.home === 'Team 0') return { ...m, homeGoals: 6, homeScore: 6 };
      if (m.away === 'Team 0') return { ...m, awayGoals: 6, awayScore: 6 };
      return m;
    });
    const options = { asOf: matches.length, prior: { sd: Number.POSITIVE_INFINITY } };
    const decayed = fitTeamRatings(late, { ...options, decayPerDay: 0.02 });
    const flat = fitTeamRatings(late, { ...options, decayPerDay: 0 });
    expect(decayed.teams.get('Team 0')!.attack).toBeGreaterThan(flat.teams.get('Team 0')!.attack + 0.2);
  });

  it('only uses matches before asOf', () => {
    const early = fitTeamRatings(matches, { asOf: 100, decayPerDay: 0, prior: { sd: 1 } });
    expect(early.weight).toBe(100);
  });

  it('gives expected goals from the ratings, with unknown teams at the league average', () => {
    const xg = expectedGoals(fit, 'Team 1', 'Nobody');
    const t1 = fit.teams.get('Team 1')!;
    expect(xg.home).toBeCloseTo(Math.exp(fit.intercept + fit.homeAdvantage + t1.attack), 12);
    expect(xg.away).toBeCloseTo(Math.exp(fit.intercept - t1.defence), 12);
  });
});

describe('Dixon-Coles grid', () => {
  it('applies τ to the four low scores only and stays a distribution', () => {
    expect(lowScoreCorrection(0, 0, 1.5, 1.2, -0.1)).toBeCloseTo(1 + 1.5 * 1.2 * 0.1, 12);
    expect(lowScoreCorrection(1, 1, 1.5, 1.2, -0.1)).toBeCloseTo(1.1, 12);
    expect(lowScoreCorrection(2, 1, 1.5, 1.2, -0.1)).toBe(1);
    const grid = dixonColesGrid(1.5, 1.2, -0.1);
    expect(grid.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    const plain = marketsFromGrid(dixonColesGrid(1.5, 1.2, 0));
    const corrected = marketsFromGrid(grid);
    // ρ < 0 adds 0-0 and 1-1: more draws than independent Poisson.
    expect(corrected.draw).toBeGreaterThan(plain.draw);
  });
});
