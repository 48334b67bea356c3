// The CLI's commands as data (name, arguments, flags, one line of help) and the parser that turns argv
// into one of them. Every mistake is a UsageError: exit code 2 with the command's usage (docs/decisions.md §8).
import { parseArgs } from 'node:util';

export const FLAGS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  role: { type: 'string' },
  name: { type: 'string' },
  plan: { type: 'string' },
  status: { type: 'string' },
  'spend-cap': { type: 'string' },
  org: { type: 'string' },
  mode: { type: 'string' },
  scopes: { type: 'string' },
  expires: { type: 'string' },
  ip: { type: 'string' },
  credits: { type: 'string' },
  data: { type: 'string' },
  draws: { type: 'string' },
  every: { type: 'string' },
  threads: { type: 'string' },
  seasons: { type: 'string' },
  'model-version': { type: 'string' },
  // ratings, feed build, feed squads (docs/feed.md, "Building a feed from results"); gpu-check
  'as-of': { type: 'string' },
  results: { type: 'string' },
  competitions: { type: 'string' },
  out: { type: 'string' },
  ratings: { type: 'string' },
  fixtures: { type: 'string' },
  squads: { type: 'string' },
  'shift-to': { type: 'string' },
  deadline: { type: 'string' },
  scale: { type: 'string' },
  'allow-software': { type: 'boolean' },
  tune: { type: 'boolean' },
  'compare-kernel': { type: 'string' },
  // projection (docs/api.md §4.12)
  competition: { type: 'string' },
  // simulate (docs/api.md §4.3, "Fitted to the market")
  fixture: { type: 'string' },
  odds: { type: 'string' },
  total: { type: 'string' },
  fit: { type: 'string' },
  'margin-method': { type: 'string' },
  // simulate from an in-play state (docs/api.md §4.3, "In play")
  'from-minute': { type: 'string' },
  score: { type: 'string' },
  'red-cards': { type: 'string' },
  // results fetch (docs/feed.md, "Getting results")
  league: { type: 'string' },
  to: { type: 'string' },
  source: { type: 'string' },
} as const;

export type FlagName = keyof typeof FLAGS;
export type Flags = { [K in FlagName]?: (typeof FLAGS)[K]['type'] extends 'boolean' ? boolean : string };

export interface CommandSpec {
  /** One or two words: `serve`, `org create`. */
  name: string;
  /** Positional arguments, all required, e.g. ['ORG']. */
  args: readonly string[];
  /** The flags after the arguments, as shown in the usage line. */
  synopsis: string;
  summary: string;
  flags: readonly FlagName[];
}

const spec = (
  name: string,
  synopsis: string,
  summary: string,
  flags: readonly FlagName[] = [],
  args: readonly string[] = [],
): CommandSpec => ({ name, synopsis, summary, flags, args });

export const COMMANDS: readonly CommandSpec[] = [
  spec('serve', '[--role api|worker|all]', 'run the service (default role: all)', ['role']),
  spec('migrate', '', 'apply database migrations'),
  spec('demo', '', 'load the demo data set (fictional clubs, fixtures around today)'),
  spec('ingest', '', 'load a fixture-inputs feed (docs/feed.md)', [], ['FILE']),
  spec('org list', '', 'list organisations'),
  spec('org create', '--name N --plan plus|pro|none [--spend-cap CREDITS]', 'create an organisation', [
    'name',
    'plan',
    'spend-cap',
  ]),
  spec(
    'org set',
    '[--plan P] [--status active|suspended] [--spend-cap CREDITS|default] [--name N]',
    'change an organisation',
    ['plan', 'status', 'spend-cap', 'name'],
    ['ORG'],
  ),
  spec('key list', '--org ORG', "list an organisation's keys (no secrets)", ['org']),
  spec(
    'key create',
    '--org ORG --mode live|test [--scopes a,b] [--expires ISO] [--ip CIDR,...]',
    'create a key; its secret is shown once',
    ['org', 'mode', 'scopes', 'expires', 'ip'],
  ),
  spec('key revoke', '', 'revoke a key', [], ['KEY']),
  spec('credits topup', '--org ORG --credits N', 'add top-up credits', ['org', 'credits']),
  spec('credits show', '--org ORG', "show an organisation's credits", ['org']),
  spec(
    'model fit',
    '[--data DIR]',
    "fit the model's constants; rewrites src/engine-contract/model-params.json",
    ['data'],
  ),
  spec(
    'model backtest',
    '[--data DIR] [--draws N] [--every N] [--threads N] [--seasons 2018,2019,...] [--model-version V]',
    'walk-forward backtest; rewrites src/engine/model-accuracy.json',
    ['data', 'draws', 'every', 'threads', 'seasons', 'model-version'],
  ),
  spec(
    'model backtest-in-play',
    '[--data DIR] [--seasons 2018,2019,...]',
    'walk-forward backtest of in-play forecasts from the half-time score, beside a Poisson baseline and the pre-match forecast',
    ['data', 'seasons'],
  ),
  spec(
    'projection',
    '--competition ID [--seasons N]',
    'a season projection of a competition on this database: title, zone and place odds (no charge)',
    ['competition', 'seasons'],
  ),
  spec(
    'simulate',
    '--fixture ID [--draws N] [--odds H,D,A [--total OVER,UNDER] [--fit exact|supremacy] [--margin-method M]] [--from-minute M [--score H-A] [--red-cards H-A]]',
    'one simulation on this database (no charge), fitted to bookmaker odds when given, from an in-play state when given',
    ['fixture', 'draws', 'odds', 'total', 'fit', 'margin-method', 'from-minute', 'score', 'red-cards'],
  ),
  spec(
    'market backtest',
    '--results DIR [--seasons 2023,2024,2025] [--competitions a,b]',
    "over 2.5 priced by the model, the model fitted to closing 1X2 odds, and the closing total, on results files with closing odds (football-data.co.uk's; see results fetch)",
    ['results', 'seasons', 'competitions'],
  ),
  spec(
    'projection backtest',
    '[--data DIR] [--seasons N]',
    'walk-forward backtest of season projections; rewrites src/projections/projection-model.json',
    ['data', 'seasons'],
  ),
  spec(
    'results fetch',
    '--league premier-league[,…] --seasons 2122,2223|9394-2223 --to DIR [--source URL]',
    "public results files (football-data.co.uk's CSV by default) into DIR, for ratings (docs/feed.md)",
    ['league', 'seasons', 'to', 'source'],
  ),
  spec(
    'ratings',
    '--as-of YYYY-MM-DD [--results DIR] [--competitions a,b] [--out FILE]',
    "each club's attack and defence before a date, from results files (docs/feed.md)",
    ['as-of', 'results', 'competitions', 'out'],
  ),
  spec(
    'feed build',
    '--ratings FILE --fixtures FILE --squads FILE --out FILE [--shift-to YYYY-MM-DD]',
    'a feed from ratings, a fixtures CSV and a squads CSV (docs/feed.md)',
    ['ratings', 'fixtures', 'squads', 'out', 'shift-to'],
  ),
  spec(
    'feed squads',
    '--ratings FILE --out FILE',
    "a placeholder squads CSV for the ratings' clubs (25 players each)",
    ['ratings', 'out'],
  ),
  spec(
    'gpu-check',
    '[--allow-software] [--deadline SECONDS] [--scale N] [--tune [--compare-kernel FILE,...]] [--out FILE]',
    'check the GPU: adapter, parity with the CPU engine, kernel time, engine speed (docs/gpu.md)',
    ['allow-software', 'deadline', 'scale', 'tune', 'compare-kernel', 'out'],
  ),
];

export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    /** The usage shown with the message: one command's, a group's or the whole list. */
    readonly usage: string,
  ) {
    super(message);
  }
}

export function commandUsage(command: CommandSpec): string {
  const line = ['matchsim', command.name, ...command.args, command.synopsis, '[--json]'].filter(Boolean);
  return `usage: ${line.join(' ')}\n  ${command.summary}`;
}

/** Every command, or those of one group (`org`, `key`, …). */
export function listUsage(group?: string): string {
  const shown = COMMANDS.filter((command) => !group || command.name.startsWith(`${group} `));
  const lines = shown.map((command) => {
    const left = [command.name, ...command.args, command.synopsis].filter(Boolean).join(' ');
    return `  ${left}\n      ${command.summary}`;
  });
  const tail = 'Add --json for JSON output (errors too); `matchsim help COMMAND` or COMMAND --help for one.';
  return `usage: matchsim ${group ?? '<command>'} [options] [--json]\n${lines.join('\n')}\n${tail}`;
}

const GROUPS = new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!));

/** The command named by the leading words of argv, and how many words it took. */
function findCommand(words: readonly string[]): { command: CommandSpec; used: number } | null {
  for (const used of [2, 1]) {
    const name = words.slice(0, used).join(' ');
    const command = words.length >= used ? COMMANDS.find((c) => c.name === name) : undefined;
    if (command) return { command, used };
  }
  return null;
}

export type Parsed =
  | { kind: 'help'; text: string }
  | { kind: 'run'; command: CommandSpec; flags: Flags; args: string[]; json: boolean };

/** The help asked for by `help [COMMAND…]`, `--help` or `-h` before any command. */
function helpFor(words: readonly string[]): Parsed {
  const found = findCommand(words);
  if (found) return { kind: 'help', text: commandUsage(found.command) };
  if (words.length === 0) return { kind: 'help', text: listUsage() };
  if (words.length === 1 && GROUPS.has(words[0]!)) return { kind: 'help', text: listUsage(words[0]) };
  throw new UsageError(`unknown command: ${words.join(' ')}`, listUsage());
}

function leadingWords(argv: readonly string[]): string[] {
  const end = argv.findIndex((token) => token.startsWith('-'));
  return [...(end === -1 ? argv : argv.slice(0, end))];
}

export function parseCommandLine(argv: readonly string[]): Parsed {
  const words = leadingWords(argv);
  if (words[0] === 'help') return helpFor(words.slice(1));
  const found = findCommand(words);
  if (!found) {
    if (argv.includes('--help') || argv.includes('-h')) return helpFor(words);
    if (words.length === 0) throw new UsageError('no command given', listUsage());
    const group = words[0]!;
    if (GROUPS.has(group) && words.length === 1) {
      throw new UsageError(`${group} needs a subcommand`, listUsage(group));
    }
    throw new UsageError(
      `unknown command: ${words.join(' ')}`,
      GROUPS.has(group) ? listUsage(group) : listUsage(),
    );
  }
  const { command, used } = found;
  const usage = commandUsage(command);
  const options = Object.fromEntries(
    (['json', 'help', ...command.flags] as FlagName[]).map((flag) => [flag, FLAGS[flag]]),
  );
  let parsed: { values: Flags; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv.slice(used),
      options,
      allowPositionals: true,
      strict: true,
    }) as typeof parsed;
  } catch (error) {
    // node:util's parse errors (unknown flag, missing value) become usage errors in our words.
    // Its first sentence is enough ("Unknown option '--nme'"); the rest is advice about `--`.
    throw new UsageError((error as Error).message.split('. ')[0]!, usage);
  }
  if (parsed.values.help) return { kind: 'help', text: usage };
  const args = parsed.positionals;
  if (args.length !== command.args.length) {
    const expected = command.args.length === 0 ? 'no arguments' : command.args.join(' ');
    throw new UsageError(
      `${command.name} takes ${expected}; got ${args.length === 0 ? 'none' : args.join(' ')}`,
      usage,
    );
  }
  return { kind: 'run', command, flags: parsed.values, args, json: Boolean(parsed.values.json) };
}
