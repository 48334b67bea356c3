// Results an operator hands `matchsim ratings` (docs/feed.md, "Ratings from results"): the
// football-data.co.uk CSV layout, one folder per competition and one file per season
// (`<folder>/<competition>/season-2223.csv`), as ../shared/data/leagues holds them. Unlike the backtest's
// reader, which passes over rows it cannot use, every row here must be a match: a bad row stops the run
// with its file, line and column, so a typo never silently drops a result from the ratings. The rows
// become matches through the backtest's own `matchFromRow`, so they are rated exactly as it rates them.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type LeagueMatch, matchFromRow, seasonStartYear } from './league-results.js';
import { type CsvRow, isBlankRow, parseCsvLines } from './read-csv.js';

/** A problem at a place in an input file: `file: line L, column C (FIELD): message`. */
export class InputFileError extends Error {
  override name = 'InputFileError';
  constructor(
    readonly file: string,
    readonly line: number,
    /** The field's number in the row, counting from 1 (0: the file as a whole). */
    readonly column: number,
    readonly field: string,
    readonly problem: string,
  ) {
    super(
      line === 0
        ? `${file}: ${problem}`
        : `${file}: line ${line}, column ${column}${field ? ` (${field})` : ''}: ${problem}`,
    );
  }
}

const REQUIRED_COLUMNS = ['Date', 'HomeTeam', 'AwayTeam', 'FTHG', 'FTAG'] as const;
/** Counts that must be whole numbers where a row carries them (half-time goals and the statistics). */
const COUNT_COLUMNS = [
  'HTHG',
  'HTAG',
  'HS',
  'AS',
  'HST',
  'AST',
  'HF',
  'AF',
  'HC',
  'AC',
  'HY',
  'AY',
  'HR',
  'AR',
] as const;

/** Every match of the competitions under `folder` (all of its sub-folders by default), ordered by date. */
export function readResultsFolder(folder: string, competitions?: readonly string[]): LeagueMatch[] {
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    throw new InputFileError(folder, 0, 0, '', 'no such folder of results');
  }
  const available = readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const chosen = competitions ?? available;
  if (chosen.length === 0) {
    throw new InputFileError(folder, 0, 0, '', 'holds no competition folder (<competition>/season-2223.csv)');
  }
  const matches: LeagueMatch[] = [];
  for (const competition of chosen) {
    if (!available.includes(competition)) {
      throw new InputFileError(
        join(folder, competition),
        0,
        0,
        '',
        `no such competition folder; there are: ${available.join(', ') || 'none'}`,
      );
    }
    matches.push(...readCompetitionFolder(join(folder, competition), competition));
  }
  return matches.sort((a, b) => a.day - b.day || a.competition.localeCompare(b.competition));
}

function readCompetitionFolder(path: string, competition: string): LeagueMatch[] {
  const files = readdirSync(path)
    .filter((name) => name.toLowerCase().endsWith('.csv'))
    .sort();
  if (files.length === 0) {
    throw new InputFileError(path, 0, 0, '', 'holds no season file (season-2223.csv for 2022/23)');
  }
  const matches: LeagueMatch[] = [];
  for (const name of files) {
    const season = seasonStartYear(name);
    if (season === null) {
      throw new InputFileError(
        join(path, name),
        0,
        0,
        '',
        'a season file is named season-YYZZ.csv after the years it spans (season-2223.csv for 2022/23)',
      );
    }
    matches.push(
      ...readResultsFile(join(path, name), readFileSync(join(path, name), 'utf8'), competition, season),
    );
  }
  return matches;
}

/** The matches of one season's file; `file` names it in errors. */
export function readResultsFile(
  file: string,
  text: string,
  competition: string,
  season: number,
): LeagueMatch[] {
  const { header, rows } = parseCsvLines(text);
  const columnOf = new Map(header.map((name, index) => [name.trim(), index]));
  const missing = REQUIRED_COLUMNS.filter((name) => !columnOf.has(name));
  if (missing.length > 0) {
    throw new InputFileError(
      file,
      1,
      header.length + 1,
      missing[0]!,
      `the header lacks ${missing.join(', ')}`,
    );
  }
  const seen = new Map<string, number>();
  return rows
    .filter((row) => !isBlankRow(row))
    .map((row) => {
      const record = checkedRow(file, row, columnOf);
      const match = matchFromRow(competition, season, record)!;
      const key = `${match.date} ${match.home} ${match.away}`;
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        const column = columnOf.get('HomeTeam')! + 1;
        throw new InputFileError(
          file,
          row.line,
          column,
          'HomeTeam',
          `the same match is on line ${earlier} too`,
        );
      }
      seen.set(key, row.line);
      return match;
    });
}

/** The row as a record, its date in ISO form; throws at the first cell that is not what it must be. */
function checkedRow(
  file: string,
  row: CsvRow,
  columnOf: ReadonlyMap<string, number>,
): Record<string, string> {
  const record: Record<string, string> = {};
  for (const [name, index] of columnOf) record[name] = (row.cells[index] ?? '').trim();
  const fail = (field: string, problem: string): never => {
    throw new InputFileError(file, row.line, columnOf.get(field)! + 1, field, problem);
  };
  const date = isoDate(record.Date!);
  if (date === null) fail('Date', `"${record.Date}" is not a date (YYYY-MM-DD, DD/MM/YYYY or DD/MM/YY)`);
  record.Date = date!;
  for (const side of ['HomeTeam', 'AwayTeam'] as const) {
    if (record[side] === '') fail(side, 'no team named');
  }
  if (record.HomeTeam === record.AwayTeam) fail('AwayTeam', `${record.AwayTeam} cannot play itself`);
  for (const goals of ['FTHG', 'FTAG'] as const) {
    if (!isCount(record[goals]!)) fail(goals, `"${record[goals]}" is not a full-time score (a whole number)`);
  }
  for (const name of COUNT_COLUMNS) {
    const value = record[name];
    if (value !== undefined && value !== '' && !isCount(value))
      fail(name, `"${value}" is not a whole number`);
  }
  return record;
}

function isCount(cell: string): boolean {
  return /^\d{1,4}$/.test(cell);
}

/** `2023-04-22`, `22/04/2023` or `22/04/23` (football-data.co.uk's own) as `2023-04-22`; null otherwise. */
export function isoDate(cell: string): string | null {
  let year: number;
  let month: number;
  let day: number;
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(cell);
  const dmy = /^(\d{1,2})\/(\d{1,2})\/(\d{2}|\d{4})$/.exec(cell);
  if (iso) {
    [year, month, day] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
  } else if (dmy) {
    const y = Number(dmy[3]);
    [year, month, day] = [
      dmy[3]!.length === 2 ? (y >= 50 ? 1900 + y : 2000 + y) : y,
      Number(dmy[2]),
      Number(dmy[1]),
    ];
  } else {
    return null;
  }
  const time = Date.UTC(year, month - 1, day);
  const back = new Date(time);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day)
    return null;
  return back.toISOString().slice(0, 10);
}
