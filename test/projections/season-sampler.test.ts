// The season sampler (src/projections/season-sampler.ts) against what can be computed without it:
// probabilities that sum to one, a finished season's table, each club's expected points from the same
// score model fixture by fixture, and the tie-breakers in the order the rules give.
import { describe, expect, it } from 'vitest';
import {
  type RemainingFixture,
  type SeasonInput,
  type SeasonRules,
  simulateSeasons,
} from '../../src/projections/season-sampler.js';
import { expectedPointsByFixture } from './expected-points.js';

const RULES: SeasonRules = { win: 3, draw: 1, tieBreakers: ['goal_difference', 'goals_for', 'head_to_head'] };

/** A double round robin of `clubs` with strengths spread evenly; the first `playedRounds` fixtures played. */
function league(clubs: number, strengthSd: number): SeasonInput {
  const remaining: RemainingFixture[] = [];
  for (let h = 0; h < clubs; h++) {
    for (let a = 0; a < clubs; a++) {
      if (h === a) continue;
      const gap = (a - h) * (0.6 / clubs);
      remaining.push({
        home: h,
        away: a,
        homeExpectedGoals: 1.5 * Math.exp(gap),
        awayExpectedGoals: 1.15 * Math.exp(-gap),
      });
    }
  }
  return { clubs, played: [], remaining, rules: RULES, strengthSd };
}

describe('the season sampler', () => {
  it('gives each club one place per season and each place one club', () => {
    const input = league(8, 0.1);
    const tally = simulateSeasons(input, 2000, 'sums');
    for (let c = 0; c < 8; c++) {
      let byClub = 0;
      let byPlace = 0;
      for (let p = 0; p < 8; p++) {
        byClub += tally.positions[c * 8 + p]!;
        byPlace += tally.positions[p * 8 + c]!;
      }
      expect(byClub).toBe(2000);
      expect(byPlace).toBe(2000);
    }
  });

  for (const sd of [0, 0.15]) {
    it(`agrees with 3 P(win) + P(draw) summed over each club's fixtures (strength sd ${sd})`, () => {
      const input = league(6, sd);
      const seasons = 20_000;
      const tally = simulateSeasons(input, seasons, `expected-${sd}`);
      const expected = expectedPointsByFixture(input);
      for (let c = 0; c < 6; c++) {
        const mean = tally.pointsSum[c]! / seasons;
        const variance = tally.pointsSquares[c]! / seasons - mean * mean;
        const standardError = Math.sqrt(variance / seasons);
        expect(Math.abs(mean - expected[c]!), `club ${c}`).toBeLessThan(4 * standardError);
      }
    });
  }

  it('answers a finished season with its final table, with certainty', () => {
    const played = [
      { home: 0, away: 1, homeGoals: 2, awayGoals: 0 },
      { home: 1, away: 2, homeGoals: 1, awayGoals: 1 },
      { home: 2, away: 0, homeGoals: 0, awayGoals: 3 },
    ];
    const tally = simulateSeasons(
      { clubs: 3, played, remaining: [], rules: RULES, strengthSd: 0.2 },
      1000,
      'done',
    );
    // Club 0: 6 points; clubs 1 and 2 level on 1 point, club 1 ahead on goal difference (-1 against -3).
    expect(Array.from(tally.positions)).toEqual([1000, 0, 0, 0, 1000, 0, 0, 0, 1000]);
    expect(Array.from(tally.pointsSum)).toEqual([6000, 1000, 1000]);
  });

  it('applies the tie-breakers in the order the rules give', () => {
    // Clubs 0 and 1 level on points; 1 has the better goal difference, 0 won their meeting.
    const played = [
      { home: 0, away: 1, homeGoals: 1, awayGoals: 0 },
      { home: 1, away: 2, homeGoals: 5, awayGoals: 0 },
      { home: 2, away: 0, homeGoals: 1, awayGoals: 0 },
    ];
    const table = (tieBreakers: SeasonRules['tieBreakers']) =>
      Array.from(
        simulateSeasons(
          { clubs: 3, played, remaining: [], rules: { ...RULES, tieBreakers }, strengthSd: 0 },
          10,
          't',
        ).positions,
      );
    // Every club has 3 points: goal difference puts 1 (+4) before 0 (0) before 2 (-4).
    expect(table(['goal_difference', 'goals_for', 'head_to_head'])).toEqual([0, 10, 0, 10, 0, 0, 0, 0, 10]);
    // Head to head among all three is their whole table (3 points each): its goal difference decides.
    expect(table(['head_to_head', 'goal_difference'])).toEqual([0, 10, 0, 10, 0, 0, 0, 0, 10]);
  });

  it('separates clubs level on points by their meetings when head to head comes first', () => {
    const played = [
      { home: 0, away: 1, homeGoals: 1, awayGoals: 0 },
      { home: 1, away: 2, homeGoals: 6, awayGoals: 0 },
      { home: 2, away: 0, homeGoals: 0, awayGoals: 0 },
      { home: 0, away: 2, homeGoals: 0, awayGoals: 1 },
    ];
    // Points: 0 = 3 + 1 = 4, 1 = 3, 2 = 1 + 3 = 4. Clubs 0 and 2 level on 4: 0 and 2 drew and 2 won.
    const run = (tieBreakers: SeasonRules['tieBreakers']) =>
      Array.from(
        simulateSeasons(
          { clubs: 3, played, remaining: [], rules: { ...RULES, tieBreakers }, strengthSd: 0 },
          10,
          'h',
        ).positions,
      );
    // Head to head: 2 took 4 points from their meetings, 0 one: 2 first. Goal difference: 0 (0) and 2 (-5).
    expect(run(['head_to_head'])).toEqual([0, 10, 0, 0, 0, 10, 10, 0, 0]);
    expect(run(['goal_difference'])).toEqual([10, 0, 0, 0, 0, 10, 0, 10, 0]);
  });

  it('gives the same tally for the same seed', () => {
    const input = league(6, 0.1);
    expect(simulateSeasons(input, 500, 'same')).toEqual(simulateSeasons(input, 500, 'same'));
  });
});
