// `matchsim results fetch` (model/results-fetch.ts, docs/feed.md "Getting results") against a server of the
// test's own on 127.0.0.1 that answers as football-data.co.uk does: the Premier League's 2021/22 and
// 2022/23 files of test/football-data rewritten into that site's layout (a Div column first, DD/MM/YYYY dates,
// a kick-off time, odds columns, CRLF and a byte-order mark). The files land where `ratings` reads them,
// and rate the clubs exactly as the originals do; a missing file, a page that is no results file and an
// older file in Windows-1252 are handled as the docs say.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clubRatingsAsOf } from '../../model/club-ratings.js';
import { fetchResults, parseLeagues, parseSeasons, ResultsFetchError } from '../../model/results-fetch.js';
import { readResultsFolder } from '../../model/results-files.js';
import { runCli } from '../helpers/cli-process.js';
import { testDataDir } from '../helpers/football-data.js';
import { makeLeagueSlice } from './league-slice.js';

const run = promisify(execFile);
const seasons = join(testDataDir, 'leagues', 'premier-league');
const work = mkdtempSync(join(tmpdir(), 'matchsim-results-fetch-'));
let server: Server;
let source: string;
const asked: string[] = [];

/** A season file of test/football-data as football-data.co.uk publishes it. */
function asFootballData(season: string): Buffer {
  const [header, ...rows] = readFileSync(join(seasons, `season-${season}.csv`), 'utf8')
    .trimEnd()
    .split('\n');
  const lines = [
    `Div,Date,Time,${header!.split(',').slice(1).join(',')},B365H,B365D,B365A`,
    ...rows.map((row) => {
      const [date, ...rest] = row.split(',');
      const [y, m, d] = date!.split('-');
      return `E0,${d}/${m}/${y},15:00,${rest.join(',')},2.1,3.4,3.6`;
    }),
    ',,,,,,,,,,,,,,,,,,,,,,,,,,',
  ];
  return Buffer.from(`\uFEFF${lines.join('\r\n')}\r\n`, 'utf8');
}

/** An older file whose club names are in Windows-1252 (é as the byte 0xE9). */
const latin1File = Buffer.concat([
  Buffer.from('Div,Date,HomeTeam,AwayTeam,FTHG,FTAG\r\nSP1,01/09/01,Alav', 'latin1'),
  Buffer.from([0xe9]),
  Buffer.from('s,Betis,1,0\r\nSP1,02/09/01,Betis,Alav', 'latin1'),
  Buffer.from([0xe9]),
  Buffer.from('s,2,2\r\n', 'latin1'),
]);

beforeAll(async () => {
  const files: Record<string, Buffer> = {
    '/mmz4281/2122/E0.csv': asFootballData('2122'),
    '/mmz4281/2223/E0.csv': asFootballData('2223'),
    '/mmz4281/0102/SP1.csv': latin1File,
    '/mmz4281/2324/E0.csv': Buffer.from('<html>Not a results file</html>'),
  };
  server = createServer((request, response) => {
    asked.push(request.url!);
    const body = files[request.url!];
    response.writeHead(body ? 200 : 404, { 'content-type': 'text/csv' }).end(body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  source = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mmz4281/{season}/{division}.csv`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(work, { recursive: true, force: true });
});

describe('results fetch', () => {
  it('writes the files where ratings reads them, and they rate the clubs as the originals do', async () => {
    const to = join(work, 'results');
    const written = await fetchResults({
      leagues: ['premier-league'],
      seasons: ['2122', '2223'],
      to,
      source,
    });
    expect(written.map(({ file, matches, season }) => ({ file, matches, season }))).toEqual([
      { file: join(to, 'premier-league', 'season-2122.csv'), matches: 380, season: '2122' },
      { file: join(to, 'premier-league', 'season-2223.csv'), matches: 380, season: '2223' },
    ]);
    expect(asked).toContain('/mmz4281/2223/E0.csv');
    expect(readdirSync(join(to, 'premier-league')).sort()).toEqual(['season-2122.csv', 'season-2223.csv']);
    // The same two seasons as test/football-data has them, in the layout ratings reads.
    const originals = join(work, 'originals', 'premier-league');
    mkdirSync(originals, { recursive: true });
    for (const season of ['2122', '2223'])
      copyFileSync(join(seasons, `season-${season}.csv`), join(originals, `season-${season}.csv`));
    const fetched = clubRatingsAsOf(readResultsFolder(to), '2023-04-04');
    expect(fetched).toEqual(clubRatingsAsOf(readResultsFolder(join(work, 'originals')), '2023-04-04'));
    expect(fetched.competitions[0]!.clubs).toHaveLength(20);
  });

  it("picks the worked example's fixtures from a fetched file with docs/feed.md's own line of Node.js", async () => {
    const feedDoc = readFileSync(new URL('../../docs/feed.md', import.meta.url), 'utf8');
    const snippet = /^node -e '\n([\s\S]*?)\n' "\$out\/results\/premier-league\/season-2223\.csv"/m.exec(
      feedDoc,
    );
    expect(snippet, 'the node -e step of the worked example').not.toBeNull();
    const fetched = await fetchResults({
      leagues: ['premier-league'],
      seasons: ['2223'],
      to: join(work, 'example'),
      source,
    });
    const file = fetched[0]!.file;
    const { stdout } = await run('node', ['-e', snippet![1]!, file]);
    // The same 100 fixtures the example's slice of test/football-data makes (test/model/league-slice.ts).
    const slice = makeLeagueSlice();
    expect(stdout).toBe(slice.fixturesCsv);
    slice.remove();
    expect(stdout.trim().split('\n')).toHaveLength(101);
  });

  it('reads an older file in Windows-1252 and writes it as UTF-8', async () => {
    const to = join(work, 'latin1');
    const [file] = await fetchResults({ leagues: ['la-liga'], seasons: ['0102'], to, source });
    expect(file!.matches).toBe(2);
    expect(readFileSync(file!.file, 'utf8')).toContain('Alavés');
  });

  it('stops at a missing file or a page that is no results file, naming its address and writing nothing', async () => {
    const to = join(work, 'refused');
    await expect(
      fetchResults({ leagues: ['premier-league'], seasons: ['1920'], to, source }),
    ).rejects.toThrow(`${source.replace('{season}', '1920').replace('{division}', 'E0')}: answered HTTP 404`);
    await expect(
      fetchResults({ leagues: ['premier-league'], seasons: ['2324'], to, source }),
    ).rejects.toThrow(
      /2324\/E0\.csv: line 1, column \d+ \(Date\): the header lacks Date, HomeTeam, AwayTeam, FTHG, FTAG \(not written\)/,
    );
    expect(readdirSync(join(to, 'premier-league'))).toEqual([]);
  });

  it('checks the leagues and seasons it is given', () => {
    expect(parseSeasons('2122, 2223,2122')).toEqual(['2122', '2223']);
    expect(parseSeasons('9900')).toEqual(['9900']);
    expect(parseSeasons('9798-0102')).toEqual(['9798', '9899', '9900', '0001', '0102']);
    expect(parseSeasons('9394-2223')).toHaveLength(30);
    for (const bad of ['2124', '22-23', '202223', '', '2223-2122', '9394-0001-0102'])
      expect(() => parseSeasons(bad), bad).toThrow(ResultsFetchError);
    expect(parseLeagues('premier-league,serie-a')).toEqual(['premier-league', 'serie-a']);
    expect(() => parseLeagues('premier')).toThrow(/--league: "premier" is not one of premier-league, /);
  });

  it('runs as a CLI command, with its usage and its JSON', async () => {
    const to = join(work, 'cli');
    const env = { ...process.env, LOG_LEVEL: 'silent' };
    const cli = (args: string[]) => runCli(args, env);
    const help = await cli(['results', 'fetch', '--help']);
    expect(help.stdout).toMatch(/^usage: matchsim results fetch --league premier-league\[,…\] --seasons/);
    const bad = await cli([
      'results',
      'fetch',
      '--league',
      'premier-league',
      '--seasons',
      '2124',
      '--to',
      to,
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--seasons: "2124" is not a season');
    const fetched = await cli(
      ['results', 'fetch', '--league', 'premier-league', '--seasons', '2223'].concat([
        '--to',
        to,
        '--source',
        source,
        '--json',
      ]),
    );
    expect(fetched.code).toBe(0);
    expect(JSON.parse(fetched.stdout)).toMatchObject([
      { league: 'premier-league', season: '2223', matches: 380 },
    ]);
    expect(existsSync(join(to, 'premier-league', 'season-2223.csv'))).toBe(true);
  });
});
