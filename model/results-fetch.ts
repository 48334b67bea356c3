// `matchsim results fetch` (docs/feed.md, "Getting results"): public results files downloaded into the
// folder layout `matchsim ratings` reads (`<folder>/<league>/season-2223.csv`). By default from
// football-data.co.uk, whose CSV files (one per division and season) are the layout results-files.ts
// reads; the source is a URL template, so an operator can point it at a mirror and the tests at a server
// of their own. Each file is read as `ratings` will read it before it is written, and written whole
// (a temporary name, then renamed): a refused or broken download leaves no file behind.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seasonStartYear } from './league-results.js';
import { readResultsFile } from './results-files.js';

/** football-data.co.uk's address of a season's file: `{season}` is 2223 for 2022/23, `{division}` E0. */
export const DEFAULT_RESULTS_SOURCE = 'https://www.football-data.co.uk/mmz4281/{season}/{division}.csv';

/** The leagues whose division football-data.co.uk names, under the folder names `ratings` knows them by. */
export const LEAGUE_DIVISIONS: Readonly<Record<string, string>> = {
  'premier-league': 'E0',
  championship: 'E1',
  'la-liga': 'SP1',
  'serie-a': 'I1',
  bundesliga: 'D1',
  'ligue-1': 'F1',
  eredivisie: 'N1',
  'primeira-liga': 'P1',
  'scottish-premiership': 'SC0',
};

/** How long one file may take to arrive. */
const FETCH_TIMEOUT_MS = 60_000;

export class ResultsFetchError extends Error {
  override name = 'ResultsFetchError';
}

export interface FetchedFile {
  league: string;
  season: string;
  url: string;
  file: string;
  matches: number;
  bytes: number;
}

/** The most seasons one run fetches for a league (football-data.co.uk's oldest are of 1993/94). */
const MAX_SEASONS = 60;

/**
 * `2122,2223` → ['2122', '2223']: each four digits naming two consecutive years; a range `9394-2223` is
 * every season from the first to the last.
 */
export function parseSeasons(text: string): string[] {
  const seasons = text.split(',').flatMap((part) => {
    const [first, last, ...rest] = part.split('-').map((season) => season.trim());
    if (last === undefined) return [checkedSeason(first!)];
    const from = seasonStartYear(`season-${checkedSeason(first!)}.csv`)!;
    const to = seasonStartYear(`season-${checkedSeason(last)}.csv`)!;
    if (rest.length > 0 || to < from || to - from >= MAX_SEASONS) {
      throw new ResultsFetchError(
        `--seasons: "${part}" is not a range of at most ${MAX_SEASONS} seasons, first to last (9394-2223)`,
      );
    }
    return Array.from({ length: to - from + 1 }, (_, i) => {
      const year = (from + i) % 100;
      return `${String(year).padStart(2, '0')}${String((year + 1) % 100).padStart(2, '0')}`;
    });
  });
  return [...new Set(seasons)];
}

function checkedSeason(season: string): string {
  const consecutive =
    /^\d{4}$/.test(season) && (Number(season.slice(0, 2)) + 1) % 100 === Number(season.slice(2));
  if (!consecutive) {
    throw new ResultsFetchError(
      `--seasons: "${season}" is not a season; give the two years it spans, 2223 for 2022/23`,
    );
  }
  return season;
}

export function parseLeagues(text: string): string[] {
  const leagues = text.split(',').map((league) => league.trim());
  for (const league of leagues) {
    if (!(league in LEAGUE_DIVISIONS)) {
      throw new ResultsFetchError(
        `--league: "${league}" is not one of ${Object.keys(LEAGUE_DIVISIONS).join(', ')}`,
      );
    }
  }
  return [...new Set(leagues)];
}

/** The file's text: UTF-8 where it is valid, else Windows-1252, in which older files name their clubs. */
function decode(bytes: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = new TextDecoder('windows-1252').decode(bytes);
  }
  return text.replace(/^\uFEFF/, '');
}

async function download(url: string): Promise<Uint8Array> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'follow' });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new ResultsFetchError(`${url}: could not be fetched (${cause})`);
  }
  if (!response.ok) {
    throw new ResultsFetchError(`${url}: answered HTTP ${response.status}`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * Downloads each league's seasons into `to/<league>/season-<season>.csv`, one after another, and says
 * what it wrote. A file that fails to arrive or to read as results stops the run, naming its address.
 */
export async function fetchResults(options: {
  leagues: readonly string[];
  seasons: readonly string[];
  to: string;
  source?: string | undefined;
}): Promise<FetchedFile[]> {
  const source = options.source ?? DEFAULT_RESULTS_SOURCE;
  const written: FetchedFile[] = [];
  for (const league of options.leagues) {
    const folder = join(options.to, league);
    mkdirSync(folder, { recursive: true });
    for (const season of options.seasons) {
      const url = source
        .replaceAll('{season}', season)
        .replaceAll('{division}', LEAGUE_DIVISIONS[league]!)
        .replaceAll('{league}', league);
      const bytes = await download(url);
      const text = decode(bytes);
      const name = `season-${season}.csv`;
      const file = join(folder, name);
      let matches: number;
      try {
        matches = readResultsFile(url, text, league, seasonStartYear(name)!).length;
      } catch (error) {
        throw new ResultsFetchError(`${(error as Error).message} (not written)`);
      }
      const partial = `${file}.partial`;
      writeFileSync(partial, text);
      renameSync(partial, file);
      written.push({ league, season, url, file, matches, bytes: bytes.length });
    }
  }
  return written;
}
