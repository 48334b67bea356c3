// `matchsim ratings` publishes the backtest's own walk-forward ratings: on the slice, the rated goals its
// attack, defence, intercept and home advantage give every match of a day equal the walk-forward's
// (totals shrink applied, before the ensemble blend) for that day. And a results file is read strictly.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clubRatingsAsOf, ratingsTable } from '../../model/club-ratings.js';
import { competitionProfile } from '../../model/league-profile.js';
import { loadLeagueMatches } from '../../model/league-results.js';
import { InputFileError, readResultsFile, readResultsFolder } from '../../model/results-files.js';
import { walkForward } from '../../model/walk-forward.js';
import { EXAMPLE_AS_OF, makeLeagueSlice } from './league-slice.js';

const slice = makeLeagueSlice();
afterAll(() => slice.remove());

describe('clubRatingsAsOf', () => {
  it("gives every match on the date the backtest walk-forward's rated goals", () => {
    const matches = readResultsFolder(slice.results);
    // The strict reader makes the very matches the backtest's loader makes.
    expect(matches).toEqual(loadLeagueMatches(slice.dataDir));
    const ratings = clubRatingsAsOf(matches, EXAMPLE_AS_OF);
    const [pl] = ratings.competitions;
    expect(pl!.season).toBe('2022/23');
    expect(pl!.clubs).toHaveLength(20);
    expect(pl!.clubs.filter((c) => c.newcomer).map((c) => c.name)).toEqual([
      'Bournemouth',
      'Fulham',
      "Nott'm Forest",
    ]);
    expect(pl!.totals_shrink).toBe(0.7);
    expect(pl!.profile?.shots.conversion).toBeGreaterThan(0.08);
    const club = new Map(pl!.clubs.map((c) => [c.name, c]));

    // The backtest's walk-forward with 2022/23 held out, refitted every day so that a fit is made on the date.
    const rated = walkForward(matches, { heldOutSeasons: [2022], refitEveryDays: 1 }).filter(
      (r) => r.match.date === EXAMPLE_AS_OF,
    );
    expect(rated.length).toBeGreaterThanOrEqual(4);
    for (const { match, rated: goals } of rated) {
      const home = club.get(match.home)!;
      const away = club.get(match.away)!;
      const lambdaHome = Math.exp(pl!.intercept + pl!.home_advantage + home.attack - away.defence);
      const lambdaAway = Math.exp(pl!.intercept + away.attack - home.defence);
      // The walk-forward starts each fit from the day before's, the ratings from scratch: both converge.
      expect(Math.abs(lambdaHome / goals.lambdaHome - 1)).toBeLessThan(1e-6);
      expect(Math.abs(lambdaAway / goals.lambdaAway - 1)).toBeLessThan(1e-6);
    }
    expect(ratingsTable(ratings)).toContain('premier-league 2022/23, ratings before 2023-04-04');
  });

  it("rates a new season's newcomers from the prior, with the league profile the shipped constants carry", () => {
    const next = makeLeagueSlice();
    try {
      // 2023/24 begins: Luton, new to the league and never in it before, lose their first match.
      writeFileSync(
        join(next.results, 'premier-league', 'season-2324.csv'),
        'Date,HomeTeam,AwayTeam,FTHG,FTAG\n2023-08-12,Brighton,Luton,4,1\n',
      );
      const [pl] = clubRatingsAsOf(readResultsFolder(next.results), '2023-08-13').competitions;
      expect(pl!.season).toBe('2023/24');
      expect(pl!.clubs.map((c) => [c.name, c.newcomer, c.matches])).toEqual([
        ['Brighton', false, 115],
        ['Luton', true, 1],
      ]);
      // From the newcomer prior: one goal scored keeps the attack near it, four conceded pull the defence down.
      const luton = pl!.clubs[1]!;
      expect(Math.abs(luton.attack - pl!.newcomer_prior!.attack)).toBeLessThan(0.05);
      expect(luton.defence).toBeLessThan(pl!.newcomer_prior!.defence - 0.1);
      // The card and shot rates of 2020/21–2022/23, as `matchsim model fit` stored them for the service.
      const shipped = competitionProfile('premier-league')!;
      expect(pl!.profile!.yellow_per_match).toEqual(shipped.yellow_per_match);
      expect(pl!.profile!.straight_red_per_match).toEqual(shipped.straight_red_per_match);
      expect(pl!.profile!.shots).toEqual(shipped.shots);
      expect(pl!.profile!.booked_player_factor).toBeCloseTo(shipped.booked_player_factor!, 3);
    } finally {
      next.remove();
    }
  });

  it('refuses a date before every result', () => {
    expect(() => clubRatingsAsOf(readResultsFolder(slice.results), '2019-01-01')).toThrow(/no result before/);
    expect(() => clubRatingsAsOf(readResultsFolder(slice.results), '2023-13-01')).toThrow(/not a date/);
  });
});

const HEADER = 'Date,HomeTeam,AwayTeam,FTHG,FTAG,HS,AS';
const GOOD = '2023-04-01,Arsenal,Leeds,4,1,20,8';

function problem(lines: string[]): InputFileError {
  try {
    readResultsFile('r.csv', `${lines.join('\n')}\n`, 'premier-league', 2022);
  } catch (error) {
    if (error instanceof InputFileError) return error;
    throw error;
  }
  throw new Error('no error');
}

describe('readResultsFile', () => {
  it("reads football-data.co.uk's own day/month/year dates, rows without statistics and lines of bare commas", () => {
    const matches = readResultsFile(
      'r.csv',
      `${HEADER}\n01/04/2023,Arsenal,Leeds,4,1,,\n2/4/23,Leeds,Arsenal,0,0,5,9\n,,,,,,\n`,
      'premier-league',
      2022,
    );
    expect(matches.map((m) => [m.date, m.home, m.stats])).toEqual([
      ['2023-04-01', 'Arsenal', null],
      ['2023-04-02', 'Leeds', null], // statistics count only where the row has all of them
    ]);
  });

  it.each([
    ['a date that is not one', ['2023-02-30,Arsenal,Leeds,4,1,20,8'], 2, 1, 'Date', /not a date/],
    ['no home team', ['2023-04-01,,Leeds,4,1,20,8'], 2, 2, 'HomeTeam', /no team named/],
    ['a team playing itself', ['2023-04-01,Leeds,Leeds,4,1,20,8'], 2, 3, 'AwayTeam', /cannot play itself/],
    [
      'a score that is not a whole number',
      ['2023-04-01,Arsenal,Leeds,4,x,20,8'],
      2,
      5,
      'FTAG',
      /not a full-time score/,
    ],
    ['a missing score', ['2023-04-01,Arsenal,Leeds,,1,20,8'], 2, 4, 'FTHG', /not a full-time score/],
    [
      'a statistic that is not a count',
      ['2023-04-01,Arsenal,Leeds,4,1,20,-8'],
      2,
      7,
      'AS',
      /not a whole number/,
    ],
    ['the same match twice', [GOOD, GOOD], 3, 2, 'HomeTeam', /on line 2 too/],
  ])('stops at %s with its line and column', (_name, rows, line, column, field, message) => {
    const error = problem([HEADER, ...rows]);
    expect([error.line, error.column, error.field]).toEqual([line, column, field]);
    expect(error.message).toMatch(message);
    expect(error.message).toMatch(new RegExp(`^r\\.csv: line ${line}, column ${column} \\(${field}\\): `));
  });

  it('refuses a header without the result columns, a badly named file and an unknown competition', () => {
    const error = problem(['Date,HomeTeam,AwayTeam,FTHG', '2023-04-01,Arsenal,Leeds,4']);
    expect([error.line, error.field]).toEqual([1, 'FTAG']);
    expect(() => readResultsFolder(slice.results, ['serie-a'])).toThrow(
      /no such competition folder; there are: premier-league/,
    );
  });
});
