// `matchsim ratings`, `feed squads`, `feed build` and `ingest` as an operator runs them, on the slice of
// test/model/league-slice.ts: the worked example of docs/feed.md in small, each step a separate process.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { EXAMPLE_AS_OF, makeLeagueSlice } from '../model/league-slice.js';

const work = mkdtempSync(path.join(tmpdir(), 'matchsim-league-cli-'));
const file = (name: string) => path.join(work, name);
const slice = makeLeagueSlice();
let serverDb: TestDatabase | undefined;

beforeAll(async () => {
  if (process.env.DATABASE_URL) serverDb = await createTestDatabase({ max: 1 });
});
afterAll(async () => {
  await serverDb?.close();
  rmSync(work, { recursive: true, force: true });
  slice.remove();
});

async function matchsim(args: string[]) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: file('db'),
    LOG_LEVEL: 'silent',
  };
  if (serverDb?.url) env.DATABASE_URL = serverDb.url;
  else delete env.DATABASE_URL;
  return runCli(args, env);
}

describe('matchsim ratings and feed', () => {
  it('shows help per command and asks for the flags a command needs', async () => {
    const ratings = await matchsim(['ratings', '--help']);
    expect(ratings.code).toBe(0);
    expect(ratings.stdout).toMatch(/^usage: matchsim ratings --as-of YYYY-MM-DD \[--results DIR\]/);
    const build = await matchsim(['help', 'feed', 'build']);
    expect(build.stdout).toMatch(
      /^usage: matchsim feed build --ratings FILE --fixtures FILE --squads FILE --out FILE/,
    );
    const group = await matchsim(['feed']);
    expect(group.code).toBe(2);
    expect(group.stderr).toContain('feed needs a subcommand');
    expect(group.stderr).toContain('feed squads --ratings FILE --out FILE');
    const missing = await matchsim(['ratings', '--results', slice.results]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--as-of is required');
    const day = await matchsim(['ratings', '--as-of', '4 April 2023', '--results', slice.results, '--json']);
    expect(day.code).toBe(2);
    expect(JSON.parse(day.stderr).error).toMatchObject({
      code: 'usage_invalid',
      message: '--as-of must be a day, YYYY-MM-DD',
    });
  });

  it('rates, builds and loads the last ten rounds, and reports a bad line by file, line and column', async () => {
    const ratings = await matchsim([
      'ratings',
      '--as-of',
      EXAMPLE_AS_OF,
      '--results',
      slice.results,
      '--out',
      file('ratings.json'),
    ]);
    expect(ratings.code, ratings.stderr).toBe(0);
    expect(ratings.stdout).toContain('premier-league 2022/23, ratings before 2023-04-04');
    expect(ratings.stdout).toMatch(/\nCLUB\s+ATTACK\s+DEFENCE\s+MATCHES\s+NEW\n/);
    expect(JSON.parse(readFileSync(file('ratings.json'), 'utf8')).competitions[0].clubs).toHaveLength(20);

    const squads = await matchsim([
      'feed',
      'squads',
      '--ratings',
      file('ratings.json'),
      '--out',
      file('squads.csv'),
    ]);
    expect(squads.code, squads.stderr).toBe(0);
    writeFileSync(file('fixtures.csv'), slice.fixturesCsv);
    const build = await matchsim([
      'feed',
      'build',
      '--ratings',
      file('ratings.json'),
      '--fixtures',
      file('fixtures.csv'),
      '--squads',
      file('squads.csv'),
      '--out',
      file('feed.json'),
      '--shift-to',
      '2026-12-01',
      '--json',
    ]);
    expect(build.code, build.stderr).toBe(0);
    expect(JSON.parse(build.stdout)).toMatchObject({
      competitions: 1,
      teams: 20,
      fixtures: 100,
      players: 500,
    });

    const ingest = await matchsim(['ingest', file('feed.json'), '--json']);
    expect(ingest.code, ingest.stderr).toBe(0);
    expect(JSON.parse(ingest.stdout)).toMatchObject({ teams: 20, players: 500, fixtures: { created: 100 } });

    writeFileSync(file('bad.csv'), 'date,time,home,away\n2023-04-04,15:00,Arsenal,Spurs FC\n');
    const bad = await matchsim([
      'feed',
      'build',
      '--ratings',
      file('ratings.json'),
      '--fixtures',
      file('bad.csv'),
      '--squads',
      file('squads.csv'),
      '--out',
      file('bad.json'),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${file('bad.csv')}: line 2, column 4 (away): unknown team "Spurs FC"`);
  });
});
