// Reading the football data (the tests' cut of it, test/football-data/README.md), and the rate summaries the fit takes from it.
import { describe, expect, it } from 'vitest';
import {
  bandWeightsFromMinutes,
  loadGoalMinutes,
  withFirstHalfShare,
} from '../../model/international-goals.js';
import { competitionsIn, loadLeagueMatches, seasonStartYear } from '../../model/league-results.js';
import { parseCsv } from '../../model/read-csv.js';
import { testDataDir } from '../helpers/football-data.js';

const dataDir = testDataDir;

describe('parseCsv', () => {
  it('reads quoted cells with commas, doubled quotes and CRLF line ends', () => {
    const rows = parseCsv('a,b,c\r\n1,"x, y",3\r\n4,"say ""hi""",\r\n');
    expect(rows).toEqual([
      { a: '1', b: 'x, y', c: '3' },
      { a: '4', b: 'say "hi"', c: '' },
    ]);
  });
});

describe('league results', () => {
  it('names seasons by their starting year across the century', () => {
    expect(seasonStartYear('season-9394.csv')).toBe(1993);
    expect(seasonStartYear('season-0001.csv')).toBe(2000);
    expect(seasonStartYear('season-2223.csv')).toBe(2022);
    expect(seasonStartYear('schema.json')).toBeNull();
  });

  it('loads the five leagues with half-time scores and statistics where present', () => {
    expect(competitionsIn(dataDir)).toEqual([
      'bundesliga',
      'la-liga',
      'ligue-1',
      'premier-league',
      'serie-a',
    ]);
    const matches = loadLeagueMatches(dataDir, ['premier-league']);
    const latest = matches.filter((m) => m.season === 2022);
    expect(latest).toHaveLength(380);
    const opener = latest[0]!;
    // First line of season-2223.csv: Crystal Palace 0-2 Arsenal, 0-1 at half-time, 10 shots each.
    expect(opener).toMatchObject({
      date: '2022-08-05',
      home: 'Crystal Palace',
      away: 'Arsenal',
      homeGoals: 0,
      awayGoals: 2,
      halfTime: { home: 0, away: 1 },
    });
    expect(opener.stats?.home.shots).toBe(10);
    expect(opener.stats?.away.yellowCards).toBe(2);
    const first = matches.filter((m) => m.season === 1993);
    expect(first.every((m) => m.stats === null && m.halfTime === null)).toBe(true);
    // Ordered by date.
    expect(matches.every((m, i) => i === 0 || matches[i - 1]!.day <= m.day)).toBe(true);
  });
});

describe('goal minutes', () => {
  it('band weights average 1 and keep the within-half shape when the halves are rescaled', () => {
    const goals = new Array<number>(91).fill(0);
    for (let minute = 1; minute <= 90; minute++) goals[minute] = minute <= 45 ? 1 : 2;
    const weights = bandWeightsFromMinutes(goals);
    expect(weights.map((w) => Number(w.toFixed(6)))).toEqual([
      0.666667, 0.666667, 0.666667, 1.333333, 1.333333, 1.333333,
    ]);
    const rescaled = withFirstHalfShare(weights, 0.5);
    expect(rescaled.reduce((a, b) => a + b, 0)).toBeCloseTo(6, 10);
    expect(rescaled[0]).toBeCloseTo(1, 10);
    expect(rescaled[5]).toBeCloseTo(1, 10);
  });

  it('international goals rise through the match, with a late peak (added time in the last band)', () => {
    const weights = bandWeightsFromMinutes(loadGoalMinutes(dataDir, { since: '2000' }));
    expect(weights[0]).toBeLessThan(weights[2]!);
    expect(weights[5]).toBe(Math.max(...weights));
    const firstHalf = (weights[0]! + weights[1]! + weights[2]!) / 6;
    expect(firstHalf).toBeGreaterThan(0.4);
    expect(firstHalf).toBeLessThan(0.47);
  });
});
