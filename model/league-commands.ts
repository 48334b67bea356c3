// The file work behind `matchsim ratings`, `matchsim feed build` and `matchsim feed squads` (docs/feed.md,
// "Building a feed from results"): read the inputs, write the output, and say what was written. The CLI
// (src/cli/main.ts) checks the flags and loads this module only when one of these commands runs.
import { readFileSync, writeFileSync } from 'node:fs';
import { clubRatingsAsOf, type RatingsFile, ratingsTable } from './club-ratings.js';
import { buildFeed, parseRatingsFile, placeholderSquads } from './feed-build.js';
import { InputFileError, readResultsFolder } from './results-files.js';

/** What a command printed: the JSON value (--json) and its layout for people. */
export interface CommandOutput {
  value: unknown;
  human: string;
}

function readInput(file: string): { file: string; text: string } {
  try {
    return { file, text: readFileSync(file, 'utf8') };
  } catch (error) {
    throw new InputFileError(
      file,
      0,
      0,
      '',
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

function writeJson(file: string, value: unknown): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** `matchsim ratings`: the ratings JSON (to `out` when given) and the table. */
export function ratingsCommand(options: {
  asOf: string;
  results: string;
  competitions?: readonly string[] | undefined;
  out?: string | undefined;
}): CommandOutput {
  const matches = readResultsFolder(options.results, options.competitions);
  const ratings: RatingsFile = clubRatingsAsOf(matches, options.asOf);
  if (options.out) writeJson(options.out, ratings);
  const written = options.out ? `\n\nwritten: ${options.out}` : '';
  return { value: ratings, human: `${ratingsTable(ratings)}${written}` };
}

/** `matchsim feed build`: the feed written to `out`, and what it holds. */
export function feedBuildCommand(options: {
  ratings: string;
  fixtures: string;
  squads: string;
  out: string;
  shiftTo?: string | undefined;
}): CommandOutput {
  const feed = buildFeed(readInput(options.ratings), readInput(options.fixtures), readInput(options.squads), {
    shiftTo: options.shiftTo,
  });
  writeJson(options.out, feed);
  const value = {
    written: options.out,
    competitions: feed.competitions.length,
    teams: feed.teams.length,
    fixtures: feed.fixtures.length,
    players: new Set(
      feed.fixtures
        .flatMap((f) => (f.inputs ? [...f.inputs.home.players, ...f.inputs.away.players] : []))
        .map((p) => p.player_id),
    ).size,
  };
  const human = Object.entries(value)
    .map(([key, v]) => `${key.padEnd(12)}  ${v}`)
    .join('\n');
  return { value, human: `${human}\n\nLoad it with: matchsim ingest ${options.out}` };
}

/** `matchsim feed squads`: a placeholder squads file for every club of the ratings. */
export function feedSquadsCommand(options: { ratings: string; out: string }): CommandOutput {
  const input = readInput(options.ratings);
  const ratings = parseRatingsFile(input.file, input.text);
  writeFileSync(options.out, placeholderSquads(ratings));
  const clubs = ratings.competitions.reduce((s, c) => s + c.clubs.length, 0);
  return {
    value: { written: options.out, clubs, players: clubs * 25 },
    human: `written: ${options.out} (${clubs} clubs, 25 players each)`,
  };
}
