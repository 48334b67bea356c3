// Club results of the five leagues in ../shared/data/leagues (football-data.co.uk columns, see
// schema.json there). One record per match; the statistics columns are null where a season lacks them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCsv } from './read-csv.js';

export interface TeamMatchStats {
  shots: number;
  shotsOnTarget: number;
  fouls: number;
  corners: number;
  yellowCards: number;
  redCards: number;
}

/**
 * A match's closing odds where its file has them (football-data.co.uk's closing columns: Pinnacle's, else
 * the market average, else Bet365's), decimal, as read: the market backtest (market-backtest.ts) removes
 * their margin.
 */
export interface ClosingOdds {
  /** Home, draw, away. */
  result: [number, number, number] | null;
  /** Over 2.5 goals, under 2.5. */
  total: [number, number] | null;
}

/** The closing columns, most trusted first (football-data.co.uk's notes.txt names them). */
const CLOSING_RESULT_COLUMNS = [
  ['PSCH', 'PSCD', 'PSCA'],
  ['AvgCH', 'AvgCD', 'AvgCA'],
  ['B365CH', 'B365CD', 'B365CA'],
] as const;
const CLOSING_TOTAL_COLUMNS = [
  ['PC>2.5', 'PC<2.5'],
  ['AvgC>2.5', 'AvgC<2.5'],
  ['B365C>2.5', 'B365C<2.5'],
] as const;

/** The first set of `columns` whose every cell is decimal odds above 1; null when none is. */
function oddsOf<T extends readonly string[]>(
  row: Record<string, string>,
  sets: readonly T[],
): { -readonly [K in keyof T]: number } | null {
  for (const columns of sets) {
    const odds = columns.map((column) => Number(row[column] ?? ''));
    if (odds.every((price, i) => row[columns[i]!] && Number.isFinite(price) && price > 1))
      return odds as { -readonly [K in keyof T]: number };
  }
  return null;
}

export function closingOddsOf(row: Record<string, string>): ClosingOdds | null {
  const result = oddsOf(row, CLOSING_RESULT_COLUMNS);
  const total = oddsOf(row, CLOSING_TOTAL_COLUMNS);
  return result || total ? { result, total } : null;
}

export interface LeagueMatch {
  /** Folder name under leagues/, e.g. `premier-league`. */
  competition: string;
  /** Calendar year the season starts in (2022 for 2022/23). */
  season: number;
  date: string;
  /** Days since 1970-01-01, for time decay. */
  day: number;
  home: string;
  away: string;
  homeGoals: number;
  awayGoals: number;
  halfTime: { home: number; away: number } | null;
  stats: { home: TeamMatchStats; away: TeamMatchStats } | null;
  /** Closing odds, where the file has them (the repository's data has none). */
  closing?: ClosingOdds;
}

const MS_PER_DAY = 86_400_000;

export function competitionsIn(dataDir: string): string[] {
  return readdirSync(join(dataDir, 'leagues'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** `season-2223.csv` → 2022; `season-9394.csv` → 1993. */
export function seasonStartYear(fileName: string): number | null {
  const match = /^season-(\d\d)(\d\d)\.csv$/.exec(fileName);
  if (!match) return null;
  const first = Number(match[1]);
  return first >= 50 ? 1900 + first : 2000 + first;
}

/** Every match of the chosen competitions (all of them by default), ordered by date. */
export function loadLeagueMatches(dataDir: string, competitions?: readonly string[]): LeagueMatch[] {
  const matches: LeagueMatch[] = [];
  for (const competition of competitions ?? competitionsIn(dataDir)) {
    const folder = join(dataDir, 'leagues', competition);
    for (const file of readdirSync(folder)) {
      const season = seasonStartYear(file);
      if (season === null) continue;
      for (const row of parseCsv(readFileSync(join(folder, file), 'utf8'))) {
        const match = matchFromRow(competition, season, row);
        if (match) matches.push(match);
      }
    }
  }
  return matches.sort((a, b) => a.day - b.day || a.competition.localeCompare(b.competition));
}

/**
 * One row of a results file as a match; null where the date, the teams or the full-time score is missing
 * or unreadable. The statistics are the row's where all of them are there (results-files.ts checks an
 * operator's file strictly and then builds its matches here, so they are rated as the backtest rates them).
 */
export function matchFromRow(
  competition: string,
  season: number,
  row: Record<string, string>,
): LeagueMatch | null {
  const date = row.Date ?? '';
  const time = Date.parse(`${date}T00:00:00Z`);
  const homeGoals = count(row.FTHG);
  const awayGoals = count(row.FTAG);
  if (Number.isNaN(time) || homeGoals === null || awayGoals === null || !row.HomeTeam || !row.AwayTeam) {
    return null;
  }
  const htHome = count(row.HTHG);
  const htAway = count(row.HTAG);
  const halfTime =
    htHome !== null && htAway !== null && htHome <= homeGoals && htAway <= awayGoals
      ? { home: htHome, away: htAway }
      : null;
  const home = teamStats(row, 'H');
  const away = teamStats(row, 'A');
  const closing = closingOddsOf(row);
  return {
    ...(closing ? { closing } : {}),
    competition,
    season,
    date,
    day: Math.round(time / MS_PER_DAY),
    home: row.HomeTeam.trim(),
    away: row.AwayTeam.trim(),
    homeGoals,
    awayGoals,
    halfTime,
    stats: home && away ? { home, away } : null,
  };
}

function teamStats(row: Record<string, string>, side: 'H' | 'A'): TeamMatchStats | null {
  const shots = count(row[`${side}S`]);
  const shotsOnTarget = count(row[`${side}ST`]);
  const fouls = count(row[`${side}F`]);
  const corners = count(row[`${side}C`]);
  const yellowCards = count(row[`${side}Y`]);
  const redCards = count(row[`${side}R`]);
  if (
    shots === null ||
    shotsOnTarget === null ||
    fouls === null ||
    corners === null ||
    yellowCards === null ||
    redCards === null
  ) {
    return null;
  }
  return { shots, shotsOnTarget, fouls, corners, yellowCards, redCards };
}

function count(cell: string | undefined): number | null {
  if (cell === undefined || cell.trim() === '') return null;
  const value = Number(cell);
  return Number.isInteger(value) && value >= 0 ? value : null;
}
