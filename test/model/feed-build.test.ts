// `matchsim feed build` on the slice (test/model/league-slice.ts): the worked example of docs/feed.md in
// small, from ratings to a feed the loader takes and a simulation of one of its fixtures; then every kind
// of bad line in the fixtures and squads files, each reported with its file, line and column.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../fallback/cpu-engine.js';
import { clubRatingsAsOf } from '../../model/club-ratings.js';
import {
  buildFeed,
  type InputFile,
  matchClub,
  POSITION_DEFAULTS,
  placeholderSquads,
} from '../../model/feed-build.js';
import { readResultsFolder } from '../../model/results-files.js';
import { compileFixture } from '../../src/engine/compile.js';
import { C_TEAM, TEAM_COUNTERS, TEAM_GOALS } from '../../src/engine-contract/layout.js';
import { expectedGoalsFromRatings } from '../../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { ingestFeed } from '../../src/fixtures/feed-loader.js';
import { getFixtureForSale } from '../../src/fixtures/fixture-access.js';
import { resolveLineups } from '../../src/fixtures/lineups.js';
import { buildMatchInputs } from '../../src/fixtures/match-inputs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { EXAMPLE_AS_OF, makeLeagueSlice } from './league-slice.js';

const slice = makeLeagueSlice();
const ratings = clubRatingsAsOf(readResultsFolder(slice.results), EXAMPLE_AS_OF);
const ratingsFile: InputFile = { file: 'ratings.json', text: JSON.stringify(ratings) };
const squadsText = placeholderSquads(ratings);
const squads = (text = squadsText): InputFile => ({ file: 'squads.csv', text });
const fixtures = (text: string): InputFile => ({ file: 'fixtures.csv', text });
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.close();
  slice.remove();
});

describe('buildFeed', () => {
  it('makes a feed of the last ten rounds that the loader stores and the engine simulates at its ratings', async () => {
    const feed = buildFeed(ratingsFile, fixtures(slice.fixturesCsv), squads(), { shiftTo: '2026-12-01' });
    expect(feed.fixtures).toHaveLength(100);
    expect(feed.teams).toHaveLength(20);
    const [competition] = feed.competitions;
    expect(competition).toMatchObject({
      competition_id: 101,
      name: 'Premier League',
      country: 'England',
      season: '2022/23',
    });
    expect(competition!.profile).toEqual(ratings.competitions[0]!.profile);
    // The first fixture moved to the day asked for, the days between fixtures kept.
    expect(feed.fixtures[0]!.kickoff).toBe('2026-12-01T15:00:00.000Z');
    expect(feed.fixtures.at(-1)!.kickoff).toBe('2027-01-24T15:00:00.000Z'); // 2023-05-28 is 54 days after 2023-04-04
    // Shares and minutes the squads file leaves out are the position's defaults.
    const keeper = feed.fixtures[0]!.inputs!.home.players[0]!;
    expect(keeper).toMatchObject({
      ...POSITION_DEFAULTS.goalkeeper,
      start_probability: 0.95,
      position: 'goalkeeper',
    });

    const now = new Date('2026-11-30T12:00:00Z');
    const summary = await ingestFeed(db.sql, JSON.stringify(feed), { clock: () => now });
    expect(summary).toMatchObject({ competitions: 1, teams: 20, players: 500, fixtures: { created: 100 } });
    const fixture = await getFixtureForSale(db.sql, feed.fixtures[0]!.fixture_id, now);
    const inputs = buildMatchInputs(fixture, resolveLineups(fixture, undefined).lineups);
    const rated = expectedGoalsFromRatings(inputs);
    const club = new Map(ratings.competitions[0]!.clubs.map((c) => [c.name, c]));
    const pl = ratings.competitions[0]!;
    const home = club.get(fixture.home.name)!;
    const away = club.get(fixture.away.name)!;
    expect(rated.home).toBeCloseTo(
      Math.exp(pl.intercept + pl.home_advantage + home.attack - away.defence),
      4,
    );
    const engine = createCpuEngine({ threads: 0 });
    try {
      const draws = 4000;
      const { counts } = await engine.run(compileFixture(inputs, defaultModelParams), {
        draws,
        seed: { lo: 30, hi: 4 },
      });
      const goals = (side: number) => counts[C_TEAM + side * TEAM_COUNTERS + TEAM_GOALS]! / draws;
      // The engine keeps the rated goals (its dynamics reshape, not rescale); 4,000 draws: ±0.04.
      expect(Math.abs(goals(0) - rated.home)).toBeLessThan(0.1);
      expect(Math.abs(goals(1) - rated.away)).toBeLessThan(0.1);
    } finally {
      await engine.close();
    }
  });

  it('takes a score, a competition column, a fixture id, an offset and names in another case', () => {
    const feed = buildFeed(
      ratingsFile,
      fixtures(
        'date,time,home,away,home_goals,away_goals,competition,fixture_id\n2023-04-04,19:45+01:00,ARSENAL,man city,2,1,premier-league,77\n',
      ),
      squads(),
    );
    expect(feed.fixtures[0]).toMatchObject({
      fixture_id: 77,
      kickoff: '2023-04-04T18:45:00.000Z',
      state: 'finished',
      score: { home: 2, away: 1 },
    });
    expect(feed.teams.map((t) => t.name)).toEqual(['Arsenal', 'Man City']);
  });
});

describe('matchClub', () => {
  const clubs = ['Man City', 'Man United', "Nott'm Forest", 'Arsenal'];
  it('matches exactly, then ignoring case and punctuation, then by a unique part of the name', () => {
    expect(matchClub('Arsenal', clubs)).toEqual({ club: 'Arsenal' });
    expect(matchClub('nottm forest', clubs)).toEqual({ club: "Nott'm Forest" });
    expect(matchClub('United', clubs)).toEqual({ club: 'Man United' });
    expect(matchClub('Man', clubs)).toEqual({
      problem: '"Man" is ambiguous: it could be Man City or Man United',
    });
    expect(matchClub('Chelsea', clubs)).toEqual({
      problem: expect.stringMatching(/^unknown team "Chelsea"; the ratings' clubs are Man City, /),
    });
  });
});

const FIXTURE_HEADER = 'date,time,home,away,home_goals,away_goals,fixture_id';

/** The error of a build whose fixtures file has `row` after its header (squads as generated). */
function fixtureProblem(row: string, header = FIXTURE_HEADER): Error {
  try {
    buildFeed(ratingsFile, fixtures(`${header}\n2023-04-04,15:00,Arsenal,Leeds,,,\n${row}\n`), squads());
  } catch (error) {
    return error as Error;
  }
  throw new Error('no error');
}

describe('buildFeed refuses a fixtures file', () => {
  it.each([
    [
      'an impossible date',
      '2023-02-29,15:00,Arsenal,Leeds,,,',
      'line 3, column 1 (date): "2023-02-29" is not a date',
    ],
    [
      'a time that is not one',
      '2023-04-05,3pm,Arsenal,Leeds,,,',
      'line 3, column 2 (time): "3pm" is not a kick-off time',
    ],
    [
      'an unknown team',
      '2023-04-05,15:00,Chelsea FC Women,Leeds,,,',
      'line 3, column 3 (home): unknown team "Chelsea FC Women"',
    ],
    [
      'an ambiguous team',
      '2023-04-05,15:00,Arsenal,Man,,,',
      'line 3, column 4 (away): "Man" is ambiguous: it could be Man City or Man United',
    ],
    [
      'a team playing itself',
      '2023-04-05,15:00,Leeds,leeds,,,',
      'line 3, column 4 (away): Leeds cannot play itself',
    ],
    [
      'half a score',
      '2023-04-05,15:00,Arsenal,Leeds,2,,',
      'line 3, column 6 (away_goals): a score is two whole numbers',
    ],
    [
      'a score that is not a number',
      '2023-04-05,15:00,Arsenal,Leeds,two,1,',
      'line 3, column 5 (home_goals): a score is two whole numbers',
    ],
    [
      'a fixture id twice',
      '2023-04-05,15:00,Arsenal,Leeds,,,10100001',
      'line 3, column 7 (fixture_id): fixture 10100001 is already on line 2',
    ],
    [
      'a fixture id out of range',
      '2023-04-05,15:00,Arsenal,Leeds,,,0',
      'line 3, column 7 (fixture_id): "0" is not a fixture id',
    ],
  ])('with %s', (_name, row, message) => {
    expect(fixtureProblem(row).message).toContain(`fixtures.csv: ${message}`);
  });

  it('with a header that lacks a column or has an unknown one', () => {
    expect(fixtureProblem('', 'date,home,away').message).toContain(
      'fixtures.csv: line 1, column 4 (time): the header lacks time',
    );
    expect(fixtureProblem('', `${FIXTURE_HEADER},venue`).message).toContain(
      'fixtures.csv: line 1, column 8 (venue): unknown column',
    );
  });

  it('naming a club the squads file has no squad for', () => {
    const arsenalOnly = squadsText
      .split('\n')
      .filter((line, i) => i === 0 || line.includes(',Arsenal,'))
      .join('\n');
    expect(() =>
      buildFeed(
        ratingsFile,
        fixtures('date,time,home,away\n2023-04-04,15:00,Arsenal,Leeds\n'),
        squads(arsenalOnly),
      ),
    ).toThrow('fixtures.csv: line 2, column 4 (away): squads.csv has no squad for Leeds');
  });
});

const SQUAD_HEADER = 'team,player_id,name,position,goal_share,start_probability,typical_minutes';

/** The error of a build whose squads file is Arsenal's generated squad (lines 2–26) and then `row`. */
function squadProblem(row: string): Error {
  const arsenal = squadsText
    .split('\n')
    .filter((line) => line.includes(',Arsenal,'))
    .map((line) => {
      const [, team, id, name, position, start] = line.split(',');
      return `${team},${id},${name},${position},,${start},`;
    });
  try {
    buildFeed(
      ratingsFile,
      fixtures('date,time,home,away\n'),
      squads([SQUAD_HEADER, ...arsenal, row].join('\n')),
    );
  } catch (error) {
    return error as Error;
  }
  throw new Error('no error');
}

describe('buildFeed refuses a squads file', () => {
  it.each([
    [
      'an unknown team',
      'Arsenal Ladies,1,A B,defender,,,',
      'line 27, column 1 (team): unknown team "Arsenal Ladies"',
    ],
    [
      'a player id that is not one',
      'Arsenal,1.5,A B,defender,,,',
      'line 27, column 2 (player_id): "1.5" is not a player id',
    ],
    [
      'a player id twice',
      'Arsenal,1010101,A B,defender,,,',
      'line 27, column 2 (player_id): player 1010101 is already on line 2',
    ],
    ['no name', 'Arsenal,1,,defender,,,', 'line 27, column 3 (name): a name has 1 to 200 characters'],
    [
      'an unknown position',
      'Arsenal,1,A B,winger,,,',
      'line 27, column 4 (position): "winger" is not one of goalkeeper',
    ],
    [
      'a negative share',
      'Arsenal,1,A B,defender,-1,,',
      'line 27, column 5 (goal_share): "-1" is not a number from 0 to 1000',
    ],
    [
      'a start probability above 1',
      'Arsenal,1,A B,defender,,1.5,',
      'line 27, column 6 (start_probability): "1.5" is not a number from 0 to 1',
    ],
    [
      'no minutes',
      'Arsenal,1,A B,defender,,,0',
      'line 27, column 7 (typical_minutes): "0" is not a number from 1 to 90',
    ],
    [
      'a squad of one',
      'Leeds,1,A B,defender,,,',
      'line 27, column 1 (team): Leeds has 1 players; a squad has 11 to 40',
    ],
  ])('with %s', (_name, row, message) => {
    expect(squadProblem(row).message).toContain(`squads.csv: ${message}`);
  });

  it('unless the row is good, unlabelled players getting the midfielder defaults', () => {
    const feed = buildFeed(
      ratingsFile,
      fixtures('date,time,home,away\n2023-04-04,15:00,Arsenal,Leeds\n'),
      squads(`${squadsText}premier-league,Arsenal,1,A B,,\n`),
    );
    const player = feed.fixtures[0]!.inputs!.home.players.find((p) => p.player_id === 1)!;
    expect(player).toMatchObject({ ...POSITION_DEFAULTS.midfielder, position: null });
  });

  it('and ratings the feed format refuses', () => {
    const edited = structuredClone(ratings);
    edited.competitions[0]!.clubs[0]!.attack = 5; // Arsenal
    expect(() =>
      buildFeed(
        { file: 'ratings.json', text: JSON.stringify(edited) },
        fixtures('date,time,home,away\n2023-04-04,15:00,Arsenal,Leeds\n'),
        squads(),
      ),
    ).toThrow('the feed built would be refused at fixtures.0.inputs.home.attack: ');
  });

  it('and a ratings file that is not one', () => {
    const bad = { file: 'ratings.json', text: '{"format": "matchsim.feed.v1"}' };
    expect(() => buildFeed(bad, fixtures('date,time,home,away\n'), squads())).toThrow(
      'ratings.json: not a ratings file of `matchsim ratings`: format',
    );
  });
});
