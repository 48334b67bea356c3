// A slice of the tests' football data (test/football-data) for the ratings and feed tests, made at test
// time: the Premier League's 2020/21 to 2022/23 season files alone in a temporary folder laid out as
// `matchsim ratings --results` reads it, and the last ten rounds' worth of 2022/23.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDataDir } from '../helpers/football-data.js';

export const SLICE_SEASONS = ['season-2021.csv', 'season-2122.csv', 'season-2223.csv'];
/** The day the last 100 matches of 2022/23 start on: the worked example's fixtures (docs/feed.md). */
export const EXAMPLE_AS_OF = '2023-04-04';

export interface LeagueSlice {
  /** Holds `leagues/premier-league/season-*.csv`, as test/football-data does (the backtest's loader reads it). */
  dataDir: string;
  /** Its `leagues` folder: what `matchsim ratings --results` reads. */
  results: string;
  /** The matches of 2022/23 from EXAMPLE_AS_OF on as a fixtures CSV (date, time, home, away). */
  fixturesCsv: string;
  remove: () => void;
}

export function makeLeagueSlice(): LeagueSlice {
  const source = join(testDataDir, 'leagues', 'premier-league');
  const root = mkdtempSync(join(tmpdir(), 'matchsim-slice-'));
  const folder = join(root, 'leagues', 'premier-league');
  mkdirSync(folder, { recursive: true });
  for (const file of SLICE_SEASONS) copyFileSync(join(source, file), join(folder, file));
  // As the worked example's awk line does: every 2022/23 match from the date on, kick-off 15:00.
  const rows = readFileSync(join(source, 'season-2223.csv'), 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.split(','))
    .filter((cells) => cells[0]! >= EXAMPLE_AS_OF);
  const fixturesCsv = ['date,time,home,away', ...rows.map((c) => `${c[0]},15:00,${c[1]},${c[2]}`)].join('\n');
  return {
    dataDir: root,
    results: join(root, 'leagues'),
    fixturesCsv: `${fixturesCsv}\n`,
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
