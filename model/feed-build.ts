// `matchsim feed build` and `matchsim feed squads` (docs/feed.md, "Building a feed from results"): a
// feed (docs/feed.md, "Format") from the ratings `matchsim ratings` wrote, a fixtures CSV and a squads CSV.
// Team names in the two CSV files are matched to the ratings' clubs; every problem stops the build with
// the file, line and column, as the feed loader reports its own.
import { z } from 'zod';
import { INT4_MAX } from '../src/db/value-limits.js';
import { competitionProfileSchema, PLAYER_POSITIONS } from '../src/engine-contract/match-inputs.js';
import { FEED_FORMAT, type Feed, type FeedSide, feedSchema } from '../src/fixtures/feed-schema.js';
import { RATINGS_FORMAT, type RatingsFile } from './club-ratings.js';
import { type CsvRow, isBlankRow, parseCsvLines } from './read-csv.js';
import { InputFileError, isoDate } from './results-files.js';

type Position = (typeof PLAYER_POSITIONS)[number];
type Player = FeedSide['players'][number];

/**
 * A player's figures where the squads file leaves them out: typical published figures per position
 * (docs/feed.md lists them); an unlabelled player gets the midfielder's.
 */
export const POSITION_DEFAULTS: Record<Position, Omit<Player, 'player_id' | 'name' | 'position'>> = {
  goalkeeper: {
    goal_share: 0.0005,
    assist_share: 0.004,
    shot_share: 0.002,
    card_share: 0.25,
    start_probability: 0.5,
    typical_minutes: 90,
  },
  defender: {
    goal_share: 0.03,
    assist_share: 0.05,
    shot_share: 0.05,
    card_share: 1.3,
    start_probability: 0.5,
    typical_minutes: 86,
  },
  midfielder: {
    goal_share: 0.08,
    assist_share: 0.13,
    shot_share: 0.12,
    card_share: 1.15,
    start_probability: 0.5,
    typical_minutes: 77,
  },
  attacker: {
    goal_share: 0.22,
    assist_share: 0.11,
    shot_share: 0.21,
    card_share: 0.7,
    start_probability: 0.5,
    typical_minutes: 71,
  },
};

/** Countries of the leagues in ../shared/data; another competition's country is "Unknown". */
const COUNTRIES: Record<string, string> = {
  'premier-league': 'England',
  'la-liga': 'Spain',
  'serie-a': 'Italy',
  bundesliga: 'Germany',
  'ligue-1': 'France',
};

const ratingsFileSchema = z.object({
  format: z.literal(RATINGS_FORMAT),
  as_of: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  competitions: z
    .array(
      z.object({
        competition: z.string().min(1),
        season: z.string().min(1),
        intercept: z.number().finite(),
        home_advantage: z.number().finite(),
        profile: competitionProfileSchema.nullable(),
        clubs: z
          .array(
            z.object({ name: z.string().min(1), attack: z.number().finite(), defence: z.number().finite() }),
          )
          .min(2),
      }),
    )
    .min(1),
});

/** A ratings file's JSON text, checked; `file` names it in errors. */
export function parseRatingsFile(file: string, text: string): RatingsFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputFileError(file, 0, 0, '', `not JSON (${(error as Error).message})`);
  }
  const parsed = ratingsFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InputFileError(
      file,
      0,
      0,
      '',
      `not a ratings file of \`matchsim ratings\`: ${issue.path.join('.') || '(file)'}: ${issue.message}`,
    );
  }
  return parsed.data as RatingsFile;
}

/** One of the CSV inputs: its name for errors and its text. */
export interface InputFile {
  file: string;
  text: string;
}

/** A CSV file's rows with a reader of named cells that knows where each cell is. */
function csvTable(input: InputFile, required: readonly string[], optional: readonly string[]) {
  const { header, rows } = parseCsvLines(input.text);
  const columnOf = new Map(header.map((name, index) => [name.trim().toLowerCase(), index]));
  const missing = required.filter((name) => !columnOf.has(name));
  if (missing.length > 0) {
    throw new InputFileError(
      input.file,
      1,
      header.length + 1,
      missing[0]!,
      `the header lacks ${missing.join(', ')}`,
    );
  }
  const unknown = header
    .map((h) => h.trim().toLowerCase())
    .findIndex((h) => !required.includes(h) && !optional.includes(h));
  if (unknown !== -1) {
    throw new InputFileError(
      input.file,
      1,
      unknown + 1,
      header[unknown]!,
      `unknown column; the columns are ${[...required, ...optional].join(', ')}`,
    );
  }
  const cell = (row: CsvRow, name: string) => {
    const index = columnOf.get(name);
    return index === undefined ? '' : (row.cells[index] ?? '').trim();
  };
  const fail = (row: CsvRow, name: string, problem: string): never => {
    throw new InputFileError(input.file, row.line, (columnOf.get(name) ?? 0) + 1, name, problem);
  };
  return { rows: rows.filter((row) => !isBlankRow(row)), cell, fail };
}

const normalised = (name: string) =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]/g, '');

/**
 * The club a name in a CSV file means: the ratings' club of that name, else the one whose name matches
 * ignoring case, accents and punctuation, else the one whose name contains it. Unknown or ambiguous: null
 * with the reason.
 */
export function matchClub(name: string, clubs: readonly string[]): { club: string } | { problem: string } {
  if (clubs.includes(name)) return { club: name };
  const wanted = normalised(name);
  const same = clubs.filter((club) => normalised(club) === wanted);
  const candidates =
    same.length > 0 || wanted.length < 3 ? same : clubs.filter((club) => normalised(club).includes(wanted));
  if (candidates.length === 1) return { club: candidates[0]! };
  if (candidates.length > 1)
    return { problem: `"${name}" is ambiguous: it could be ${candidates.join(' or ')}` };
  return { problem: `unknown team "${name}"; the ratings' clubs are ${clubs.join(', ')}` };
}

interface Club {
  competition: RatingsFile['competitions'][number];
  competitionId: number;
  teamId: number;
  name: string;
  attack: number;
  defence: number;
}

/** Ids: competition 100 + its place in the ratings file, its clubs competition id × 100 + their place. */
function clubsOf(ratings: RatingsFile): Club[] {
  return ratings.competitions.flatMap((competition, c) =>
    competition.clubs.map((club, k) => ({
      competition,
      competitionId: 101 + c,
      teamId: (101 + c) * 100 + k + 1,
      name: club.name,
      attack: club.attack,
      defence: club.defence,
    })),
  );
}

/** The club a cell names, among the clubs of `competition` (all competitions when null). */
function clubNamed(
  clubs: readonly Club[],
  name: string,
  competition: string | null,
): Club | { problem: string } {
  const pool = competition === null ? clubs : clubs.filter((c) => c.competition.competition === competition);
  const found = matchClub(name, [...new Set(pool.map((c) => c.name))]);
  if ('problem' in found) return found;
  const matches = pool.filter((c) => c.name === found.club);
  if (matches.length > 1) {
    return {
      problem: `"${name}" is a club of ${matches.map((c) => c.competition.competition).join(' and ')}: add a competition column`,
    };
  }
  return matches[0]!;
}

const SQUAD_SHARES = ['goal_share', 'assist_share', 'shot_share', 'card_share'] as const;
const SQUAD_COLUMNS = ['team', 'player_id', 'name', 'position'] as const;
const SQUAD_OPTIONAL = ['competition', ...SQUAD_SHARES, 'start_probability', 'typical_minutes'] as const;

/** Each club's squad from the squads file, by team id; every club with a row has 11 to 40 players. */
function readSquads(input: InputFile, clubs: readonly Club[]): Map<number, Player[]> {
  const { rows, cell, fail } = csvTable(input, SQUAD_COLUMNS, SQUAD_OPTIONAL);
  const squads = new Map<number, Player[]>();
  const firstLine = new Map<number, CsvRow>();
  const playerLine = new Map<number, number>();
  for (const row of rows) {
    const club = clubNamed(clubs, cell(row, 'team'), cell(row, 'competition') || null);
    if ('problem' in club) fail(row, 'team', club.problem);
    const { teamId } = club as Club;
    const id = Number(cell(row, 'player_id'));
    if (!Number.isInteger(id) || id < 1 || id > INT4_MAX)
      fail(
        row,
        'player_id',
        `"${cell(row, 'player_id')}" is not a player id (a whole number from 1 to ${INT4_MAX})`,
      );
    if (playerLine.has(id)) fail(row, 'player_id', `player ${id} is already on line ${playerLine.get(id)}`);
    playerLine.set(id, row.line);
    const name = cell(row, 'name');
    if (name.length < 1 || name.length > 200) fail(row, 'name', 'a name has 1 to 200 characters');
    const position = cell(row, 'position').toLowerCase();
    if (position !== '' && !PLAYER_POSITIONS.includes(position as Position)) {
      fail(
        row,
        'position',
        `"${position}" is not one of ${PLAYER_POSITIONS.join(', ')} (or empty: unlabelled)`,
      );
    }
    const defaults = POSITION_DEFAULTS[(position || 'midfielder') as Position];
    const figure = (column: keyof typeof defaults, low: number, high: number) => {
      const text = cell(row, column);
      if (text === '') return defaults[column];
      const value = Number(text);
      if (!Number.isFinite(value) || value < low || value > high)
        fail(row, column, `"${text}" is not a number from ${low} to ${high}`);
      return value;
    };
    const player: Player = {
      player_id: id,
      name,
      position: position === '' ? null : (position as Position),
      goal_share: figure('goal_share', 0, 1000),
      assist_share: figure('assist_share', 0, 1000),
      shot_share: figure('shot_share', 0, 1000),
      card_share: figure('card_share', 0, 1000),
      start_probability: figure('start_probability', 0, 1),
      typical_minutes: figure('typical_minutes', 1, 90),
    };
    if (!squads.has(teamId)) firstLine.set(teamId, row);
    squads.set(teamId, [...(squads.get(teamId) ?? []), player]);
  }
  for (const [teamId, players] of squads) {
    if (players.length < 11 || players.length > 40) {
      const name = clubs.find((c) => c.teamId === teamId)!.name;
      fail(firstLine.get(teamId)!, 'team', `${name} has ${players.length} players; a squad has 11 to 40`);
    }
  }
  return squads;
}

const FIXTURE_COLUMNS = ['date', 'time', 'home', 'away'] as const;
const FIXTURE_OPTIONAL = ['home_goals', 'away_goals', 'competition', 'fixture_id'] as const;

/** `15:00` (UTC) or `15:00+01:00`: the kick-off's time of day with its offset. */
function kickoffOf(date: string, time: string): string | null {
  const match = /^(\d{2}):(\d{2})(Z|[+-]\d{2}:\d{2})?$/.exec(time);
  if (!match || Number(match[1]) > 23 || Number(match[2]) > 59) return null;
  return `${date}T${match[1]}:${match[2]}:00${match[3] ?? 'Z'}`;
}

interface FixtureRow {
  row: CsvRow;
  fixtureId: number;
  home: Club;
  away: Club;
  kickoff: string;
  score: { home: number; away: number } | null;
}

function readFixtures(input: InputFile, clubs: readonly Club[]): FixtureRow[] {
  const { rows, cell, fail } = csvTable(input, FIXTURE_COLUMNS, FIXTURE_OPTIONAL);
  const ids = new Map<number, number>();
  return rows.map((row, index) => {
    const date = isoDate(cell(row, 'date'));
    if (date === null)
      fail(row, 'date', `"${cell(row, 'date')}" is not a date (YYYY-MM-DD, DD/MM/YYYY or DD/MM/YY)`);
    const kickoff = kickoffOf(date!, cell(row, 'time'));
    if (kickoff === null)
      fail(row, 'time', `"${cell(row, 'time')}" is not a kick-off time (HH:MM in UTC, or HH:MM+01:00)`);
    const competition = cell(row, 'competition') || null;
    const side = (column: 'home' | 'away'): Club => {
      const club = clubNamed(clubs, cell(row, column), competition);
      if ('problem' in club) fail(row, column, club.problem);
      return club as Club;
    };
    const home = side('home');
    const away = side('away');
    if (home.teamId === away.teamId) fail(row, 'away', `${away.name} cannot play itself`);
    if (home.competitionId !== away.competitionId)
      fail(
        row,
        'away',
        `${away.name} plays in ${away.competition.competition}, ${home.name} in ${home.competition.competition}`,
      );
    const goals = [cell(row, 'home_goals'), cell(row, 'away_goals')];
    if (goals.some((g) => g !== '' && !/^\d{1,3}$/.test(g)) || (goals[0] === '') !== (goals[1] === '')) {
      fail(
        row,
        goals[0] === '' || /^\d{1,3}$/.test(goals[0]!) ? 'away_goals' : 'home_goals',
        'a score is two whole numbers, or both cells empty',
      );
    }
    const idText = cell(row, 'fixture_id');
    const fixtureId = idText === '' ? home.competitionId * 100_000 + index + 1 : Number(idText);
    if (!Number.isInteger(fixtureId) || fixtureId < 1 || fixtureId > INT4_MAX)
      fail(row, 'fixture_id', `"${idText}" is not a fixture id (a whole number from 1 to ${INT4_MAX})`);
    if (ids.has(fixtureId))
      fail(row, 'fixture_id', `fixture ${fixtureId} is already on line ${ids.get(fixtureId)}`);
    ids.set(fixtureId, row.line);
    const score = goals[0] === '' ? null : { home: Number(goals[0]), away: Number(goals[1]) };
    return { row, fixtureId, home, away, kickoff: kickoff!, score };
  });
}

/** The feed: the competitions and clubs the fixtures use, each fixture with both squads as its inputs. */
export function buildFeed(
  ratingsFile: InputFile,
  fixturesFile: InputFile,
  squadsFile: InputFile,
  options: { shiftTo?: string | undefined } = {},
): Feed {
  const ratings = parseRatingsFile(ratingsFile.file, ratingsFile.text);
  const clubs = clubsOf(ratings);
  const fixtures = shifted(readFixtures(fixturesFile, clubs), options.shiftTo);
  const squads = readSquads(squadsFile, clubs);
  const asOf = `${ratings.as_of}T00:00:00Z`;
  for (const f of fixtures) {
    for (const [column, club] of [
      ['home', f.home],
      ['away', f.away],
    ] as const) {
      if (!squads.has(club.teamId)) {
        throw new InputFileError(
          fixturesFile.file,
          f.row.line,
          FIXTURE_COLUMNS.indexOf(column) + 1,
          column,
          `${squadsFile.file} has no squad for ${club.name}`,
        );
      }
    }
  }
  const used = [
    ...new Map(fixtures.flatMap((f) => [f.home, f.away]).map((c) => [c.teamId, c])).values(),
  ].sort((a, b) => a.teamId - b.teamId);
  const competitions = [...new Map(used.map((c) => [c.competitionId, c])).values()];
  const side = (club: Club) => ({
    attack: round(club.attack),
    defence: round(club.defence),
    players: squads.get(club.teamId)!,
  });
  return checkedFeed({
    format: FEED_FORMAT,
    competitions: competitions.map(({ competition: c, competitionId }) => ({
      competition_id: competitionId,
      name: titleCase(c.competition),
      country: COUNTRIES[c.competition] ?? 'Unknown',
      season: c.season,
      covered: true,
      intercept: round(c.intercept),
      home_advantage: round(c.home_advantage),
      ...(c.profile ? { profile: c.profile } : {}),
    })),
    teams: used.map((c) => ({
      team_id: c.teamId,
      name: c.name,
      short_name: c.name,
      country: COUNTRIES[c.competition.competition] ?? 'Unknown',
    })),
    fixtures: fixtures.map((f) => ({
      fixture_id: f.fixtureId,
      competition_id: f.home.competitionId,
      home_team_id: f.home.teamId,
      away_team_id: f.away.teamId,
      kickoff: new Date(f.kickoff).toISOString(),
      state: f.score ? ('finished' as const) : ('provisional' as const),
      score: f.score,
      inputs: { as_of: asOf, home: side(f.home), away: side(f.away) },
    })),
  });
}

/**
 * The feed as the loader will check it (its schema, src/fixtures/feed-schema.ts): what the input files
 * cannot show by line, such as a rating outside [−3, 3] in a hand-edited ratings file.
 */
function checkedFeed(feed: Feed): Feed {
  const parsed = feedSchema.safeParse(feed);
  if (parsed.success) return feed;
  const issue = parsed.error.issues[0]!;
  throw new Error(
    `the feed built would be refused at ${issue.path.join('.')}: ${issue.message} (docs/feed.md)`,
  );
}

const MS_PER_DAY = 86_400_000;

/**
 * The fixtures moved by whole days so that the first one's day is `shiftTo` (YYYY-MM-DD): past fixtures
 * replayed as upcoming ones (simulations are sold until kick-off), the days between them kept.
 */
function shifted(fixtures: FixtureRow[], shiftTo: string | undefined): FixtureRow[] {
  if (shiftTo === undefined || fixtures.length === 0) return fixtures;
  const target = isoDate(shiftTo);
  if (target === null) throw new Error(`--shift-to ${shiftTo} is not a date (YYYY-MM-DD)`);
  const first = Math.min(...fixtures.map((f) => Date.parse(f.kickoff.slice(0, 10))));
  const days = Math.round((Date.parse(target) - first) / MS_PER_DAY);
  return fixtures.map((f) => ({
    ...f,
    kickoff: new Date(Date.parse(f.kickoff) + days * MS_PER_DAY).toISOString(),
  }));
}

/** Six decimals: far below what changes a forecast, and a feed a person can read. */
function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

function titleCase(key: string): string {
  return key
    .split('-')
    .map((word) => (word.length <= 2 ? word.toUpperCase() : word[0]!.toUpperCase() + word.slice(1)))
    .join(' ');
}

/** The lines of a placeholder squad: 3 goalkeepers, 8 defenders, 8 midfielders, 6 attackers; a 4-4-2's XI likeliest. */
const PLACEHOLDER_LINES: readonly { position: Position; starts: readonly number[] }[] = [
  { position: 'goalkeeper', starts: [0.95, 0.04, 0.01] },
  { position: 'defender', starts: [0.9, 0.9, 0.85, 0.85, 0.3, 0.2, 0.1, 0.05] },
  { position: 'midfielder', starts: [0.9, 0.85, 0.85, 0.8, 0.3, 0.2, 0.1, 0.05] },
  { position: 'attacker', starts: [0.85, 0.8, 0.3, 0.2, 0.1, 0.05] },
];

/**
 * A squads file with a placeholder squad of 25 for every club of the ratings (the results carry no
 * players): player ids team id × 100 + 1…25, names "<club> <position> <n>", start probabilities that make
 * a 4-4-2 the likeliest XI, and the other figures left to the position defaults.
 */
export function placeholderSquads(ratings: RatingsFile): string {
  const lines = ['competition,team,player_id,name,position,start_probability'];
  for (const club of clubsOf(ratings)) {
    let n = 0;
    for (const line of PLACEHOLDER_LINES) {
      line.starts.forEach((start, k) => {
        n++;
        lines.push(
          [
            club.competition.competition,
            csvCell(club.name),
            club.teamId * 100 + n,
            csvCell(`${club.name} ${line.position} ${k + 1}`),
            line.position,
            start,
          ].join(','),
        );
      });
    }
  }
  return `${lines.join('\n')}\n`;
}

function csvCell(text: string): string {
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
