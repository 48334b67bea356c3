#!/usr/bin/env node
// `matchsim`: the operators' CLI (docs/decisions.md §8). Tables for people; JSON on stdout with --json, and
// then errors too, as JSON on stderr. Exit codes: 0 done, 1 failed, 2 bad usage or configuration.
// The commands and their flags are data in parse.ts; this file runs them.
import { readFileSync } from 'node:fs';
import { SCOPES, type Scope } from '../accounts/keys.js';
import { ORG_STATUSES, type OrgStatus, PLANS, type Plan } from '../accounts/orgs.js';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { isApiError } from '../errors.js';
import { armExitDeadline, type Logger, makeLogger } from '../logger.js';
import type { Role, RunningService } from '../server.js';
import { nodeVersionProblem } from './node-version.js';
import type { Operations } from './operations.js';
import { fields, KEY_COLUMNS, ORG_COLUMNS, table } from './output.js';
import { commandUsage, type Flags, type Parsed, parseCommandLine, UsageError } from './parse.js';
import { engineSentence, publicBaseUrl, type StartupEngine, startupLine } from './startup-line.js';

type Invocation = Extract<Parsed, { kind: 'run' }>;

/** What a command printed: the JSON value (--json) and its layout for people. */
interface Output {
  value: unknown;
  human: string;
}

/** A usage mistake in a flag's value; the command's usage is attached where it is caught. */
const usage = (message: string) => new UsageError(message, '');

function oneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  flag: string,
): T | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw usage(`--${flag} must be one of ${allowed.join(', ')}`);
  return value as T;
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw usage(`--${flag} is required`);
  return value;
}

function creditsArgument(value: string, flag: string): number {
  const credits = Number(value);
  if (!Number.isFinite(credits) || credits < 0 || Math.round(credits * 1000) !== credits * 1000) {
    throw usage(`--${flag} must be a non-negative number of credits with at most three decimals`);
  }
  return credits;
}

/** Runs one command's operations: on the database, or through the running service that holds it. */
async function withOperations(work: (ops: Operations) => Promise<Output>): Promise<Output> {
  // Loaded only when a command needs the database, as the service only for `serve` (below): a usage
  // error or --help answers without loading either.
  const { withOperations: operationsOn } = await import('./operations.js');
  return operationsOn(loadConfig(), async (ops) => {
    const output = await work(ops);
    if (!ops.through) return output;
    const { pid, url } = ops.through;
    return {
      ...output,
      human: `${output.human}\n\n(through the service running at ${url}, process ${pid}, which holds the embedded database)`,
    };
  });
}

const shown = (value: Record<string, unknown>, note?: string): Output => ({
  value,
  human: note ? `${fields(value)}\n\n${note}` : fields(value),
});

type Runner = (run: Invocation) => Promise<Output>;

const RUNNERS: Record<string, Runner> = {
  migrate: () =>
    withOperations(async (ops) => {
      const { applied, database } = await ops.migrate();
      const note = ops.through ? ', migrated by the running service at its start' : '';
      const human = `applied migrations: ${applied.length ? applied.join(', ') : 'none'} (database: ${database}${note})`;
      return { value: { applied, database }, human };
    }),
  demo: () => withOperations(async (ops) => shown(await ops.demo())),
  ingest: ({ args }) =>
    withOperations(async (ops) => shown(await ops.ingest(readFileSync(args[0]!, 'utf8')))),
  'org list': () =>
    withOperations(async (ops) => {
      const orgs = await ops.listOrgs();
      return { value: { object: 'list', data: orgs }, human: table(orgs, ORG_COLUMNS) };
    }),
  'org create': ({ flags }) => {
    const org = {
      name: required(flags.name, 'name'),
      plan: oneOf(required(flags.plan, 'plan'), PLANS, 'plan') as Plan,
      spendCapCredits: flags['spend-cap'] ? creditsArgument(flags['spend-cap'], 'spend-cap') : null,
    };
    return withOperations(async (ops) => shown(await ops.createOrg(org)));
  },
  'org set': ({ flags, args }) => {
    const cap = flags['spend-cap'];
    const changes = {
      name: flags.name,
      plan: oneOf(flags.plan, PLANS, 'plan'),
      status: oneOf(flags.status, ORG_STATUSES, 'status') as OrgStatus | undefined,
      spendCapCredits:
        cap === undefined ? undefined : cap === 'default' ? null : creditsArgument(cap, 'spend-cap'),
    };
    return withOperations(async (ops) => shown(await ops.updateOrg(args[0]!, changes)));
  },
  'key list': ({ flags }) => {
    const orgId = required(flags.org, 'org');
    return withOperations(async (ops) => {
      const keys = await ops.listKeys(orgId);
      return { value: { object: 'list', data: keys }, human: table(keys, KEY_COLUMNS) };
    });
  },
  'key create': ({ flags }) => {
    const input = newKeyArguments(flags);
    return withOperations(async (ops) =>
      shown(await ops.createKey(input), 'The secret is shown once: store it now.'),
    );
  },
  'key revoke': ({ args }) => withOperations(async (ops) => shown(await ops.revokeKey(args[0]!))),
  'credits topup': ({ flags }) => {
    const orgId = required(flags.org, 'org');
    const credits = creditsArgument(required(flags.credits, 'credits'), 'credits');
    return withOperations(async (ops) => shown(await ops.topUp(orgId, credits)));
  },
  'credits show': ({ flags }) => {
    const orgId = required(flags.org, 'org');
    return withOperations(async (ops) => shown(await ops.showCredits(orgId)));
  },
  'model fit': ({ flags }) => modelCommand('fit', flags),
  'model backtest': ({ flags }) => modelCommand('backtest', flags),
  'model backtest-in-play': ({ flags }) => inPlayBacktestCommand(flags),
  projection: ({ flags }) => projectionCommand(flags),
  'projection backtest': ({ flags }) => projectionBacktestCommand(flags),
  'market backtest': ({ flags }) => marketBacktestCommand(flags),
  simulate: ({ flags }) => simulateCommand(flags),
  'results fetch': ({ flags }) => resultsFetchCommand(flags),
  ratings: ({ flags }) => leagueCommand('ratings', flags),
  'feed build': ({ flags }) => leagueCommand('feed build', flags),
  'feed squads': ({ flags }) => leagueCommand('feed squads', flags),
};

function newKeyArguments(flags: Flags) {
  const scopes = flags.scopes?.split(',').map((s) => oneOf(s.trim(), SCOPES, 'scopes') as Scope);
  const expires = flags.expires ? new Date(flags.expires) : null;
  if (expires && Number.isNaN(expires.getTime())) throw usage('--expires must be an ISO 8601 date-time');
  return {
    orgId: required(flags.org, 'org'),
    mode: oneOf(required(flags.mode, 'mode'), ['live', 'test'] as const, 'mode')!,
    scopes,
    expiresAt: expires,
    ipAllowlist: flags.ip?.split(',').map((s) => s.trim()),
  };
}

/** A non-negative whole number given to a flag (undefined when the flag is absent). */
function countArgument(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw usage(`--${flag} must be a non-negative whole number`);
  return n;
}

/**
 * The backtest's knobs from its flags (docs/model.md, "Commands and code"): engine draws per match, which
 * matches the engine simulates (every n-th; 1 = all, 0 = none), worker threads, held-out seasons (the
 * year each starts) and the model version the result is recorded for.
 */
function backtestKnobs(flags: Flags) {
  const draws = countArgument(flags.draws, 'draws');
  if (draws === 0) throw usage('--draws must be at least 1');
  const threads = countArgument(flags.threads, 'threads');
  if (threads === 0) throw usage('--threads must be at least 1');
  const seasons = flags.seasons
    ?.split(',')
    .map((s) => countArgument(s.trim(), 'seasons')!)
    .filter((s) => s > 0);
  if (seasons?.length === 0) throw usage('--seasons must list at least one season, e.g. 2018,2019');
  const every = countArgument(flags.every, 'every');
  return {
    ...(draws === undefined ? {} : { engineDraws: draws }),
    ...(every === undefined ? {} : { engineEvery: every }),
    ...(threads === undefined ? {} : { engineThreads: threads }),
    ...(seasons === undefined ? {} : { heldOutSeasons: seasons }),
    ...(flags['model-version'] === undefined ? {} : { modelVersion: flags['model-version'] }),
  };
}

/** `model fit` and `model backtest`: offline work on ../shared/data (or --data), no database. */
async function modelCommand(sub: 'fit' | 'backtest', flags: Flags): Promise<Output> {
  const knobs = sub === 'backtest' ? backtestKnobs(flags) : {};
  const { resolveDataDir } = await import('../../model/data-dir.js');
  const files = await import('../../model/model-files.js');
  const dataDir = resolveDataDir(flags.data);
  const progress = (message: string) => console.error(message);
  if (sub === 'fit') {
    const { fitModel, writeModelParams } = await import('../../model/fit-model.js');
    const { params, report } = await fitModel({ dataDir, onProgress: progress });
    writeModelParams(files.modelParamsPath(), params);
    return shown({ written: files.modelParamsPath(), model_version: params.model_version, report });
  }
  const { backtestModel } = await import('../../model/backtest.js');
  const result = await backtestModel({ dataDir, ...knobs, onProgress: progress });
  files.writeModelAccuracy(files.modelAccuracyPath(), result);
  return shown({ ...result });
}

/** `market backtest`: fitted runs against closing odds on held-out seasons (model/market-backtest.ts). */
async function marketBacktestCommand(flags: Flags): Promise<Output> {
  const seasons = flags.seasons?.split(',').map((season) => {
    const year = countArgument(season.trim(), 'seasons');
    if (year === undefined || year < 1900) throw usage('--seasons must be start years such as 2023,2024');
    return year;
  });
  const { marketBacktestCommand: run } = await import('../../model/market-backtest.js');
  return run({
    results: required(flags.results, 'results'),
    seasons,
    competitions: flags.competitions?.split(',').map((c) => c.trim()),
    onProgress: (message) => console.error(message),
  });
}

/** `projection`: one projection on the configured database (src/cli/projection-command.ts). */
async function projectionCommand(flags: Flags): Promise<Output> {
  const competitionId = countArgument(required(flags.competition, 'competition'), 'competition');
  if (!competitionId) throw usage('--competition must be a competition id');
  const projection = await import('./projection-command.js');
  const seasons = (() => {
    try {
      return projection.seasonsArgument(flags.seasons);
    } catch (error) {
      throw usage((error as Error).message);
    }
  })();
  return withOperations(async (ops) => {
    const content = await ops.project(competitionId, seasons);
    const head = `${content.competition.name} ${content.competition.season}: ${content.seasons} seasons, ${content.played_fixtures} played, ${content.remaining_fixtures} to play`;
    const rows = projection.projectionRows(content);
    const columns = Object.keys(rows[0] ?? {}).map((key) => [key, key] as const);
    return { value: { ...content }, human: `${head}\n${table(rows, columns)}` };
  });
}

/** `simulate`: one simulation on the configured database (src/cli/simulate-command.ts). */
async function simulateCommand(flags: Flags): Promise<Output> {
  const simulate = await import('./simulate-command.js');
  const args = (() => {
    try {
      return simulate.simulateArguments(flags);
    } catch (error) {
      throw usage((error as Error).message);
    }
  })();
  return withOperations(async (ops) => {
    const document = await ops.simulate(args);
    const { fixture } = document;
    const from = document.state
      ? `, from ${document.state.minute}' at ${document.state.score.home}-${document.state.score.away}`
      : '';
    const head = `${fixture.home.name} - ${fixture.away.name}, ${fixture.kickoff}: ${args.draws.toLocaleString('en-US')} draws${from}`;
    const rows = simulate.simulationRows(document);
    const columns = Object.keys(rows[0] ?? {}).map((key) => [key, key] as const);
    return { value: { ...document }, human: `${head}\n${table(rows, columns)}` };
  });
}

/** `model backtest-in-play`: offline, on ../shared/data (or --data); the in-play forecasts from half time. */
async function inPlayBacktestCommand(flags: Flags): Promise<Output> {
  const { heldOutSeasons } = backtestKnobs(flags);
  const { resolveDataDir } = await import('../../model/data-dir.js');
  const { backtestInPlay } = await import('../../model/in-play-backtest.js');
  const onProgress = (message: string) => console.error(message);
  const dataDir = resolveDataDir(flags.data);
  return shown({
    ...(await backtestInPlay({ dataDir, onProgress, ...(heldOutSeasons ? { heldOutSeasons } : {}) })),
  });
}

/** `projection backtest`: offline, on ../shared/data (or --data); rewrites projection-model.json. */
async function projectionBacktestCommand(flags: Flags): Promise<Output> {
  const seasons = countArgument(flags.seasons, 'seasons');
  const { resolveDataDir } = await import('../../model/data-dir.js');
  const { runProjectionBacktest } = await import('../../model/projection-backtest-command.js');
  const written = runProjectionBacktest({
    dataDir: resolveDataDir(flags.data),
    ...(seasons ? { seasons } : {}),
    log: (line) => console.error(line),
  });
  return shown({ ...written });
}

/** A calendar day given to a flag (undefined when the flag is absent). */
function dayArgument(value: string | undefined, flag: string): string | undefined {
  if (value !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(value))
    throw usage(`--${flag} must be a day, YYYY-MM-DD`);
  return value;
}

/** `results fetch`: public results files into a folder of the layout `ratings` reads (docs/feed.md). */
async function resultsFetchCommand(flags: Flags): Promise<Output> {
  const results = await import('../../model/results-fetch.js');
  let leagues: string[];
  let seasons: string[];
  try {
    leagues = results.parseLeagues(required(flags.league, 'league'));
    seasons = results.parseSeasons(required(flags.seasons, 'seasons'));
  } catch (error) {
    if (error instanceof results.ResultsFetchError) throw usage(error.message);
    throw error;
  }
  const to = required(flags.to, 'to');
  const written = await results.fetchResults({ leagues, seasons, to, source: flags.source });
  const lines = written.map(
    (file) => `${file.league} ${file.season}: ${file.matches} matches, ${file.bytes} bytes → ${file.file}`,
  );
  const terms = flags.source
    ? ''
    : "\nThese are football-data.co.uk's files, free to download: read its terms before you publish or pass them on.";
  return {
    value: written,
    human: `${lines.join('\n')}\n${terms}\nNext: matchsim ratings --results ${to} --as-of YYYY-MM-DD`,
  };
}

/** `ratings`, `feed build`, `feed squads`: files in, files out (docs/feed.md), no database. */
async function leagueCommand(name: 'ratings' | 'feed build' | 'feed squads', flags: Flags): Promise<Output> {
  const shiftTo = dayArgument(flags['shift-to'], 'shift-to');
  const league = await import('../../model/league-commands.js');
  if (name === 'ratings') {
    const { resolveDataDir } = await import('../../model/data-dir.js');
    return league.ratingsCommand({
      asOf: dayArgument(required(flags['as-of'], 'as-of'), 'as-of')!,
      results: flags.results ?? `${resolveDataDir()}/leagues`,
      competitions: flags.competitions?.split(',').map((c) => c.trim()),
      out: flags.out,
    });
  }
  const ratings = required(flags.ratings, 'ratings');
  const out = required(flags.out, 'out');
  if (name === 'feed squads') return league.feedSquadsCommand({ ratings, out });
  const fixtures = required(flags.fixtures, 'fixtures');
  const squads = required(flags.squads, 'squads');
  return league.feedBuildCommand({ ratings, fixtures, squads, out, shiftTo });
}

/**
 * `serve`: JSON log lines on stdout and nothing else; the demo's secrets (demo mode only) on stderr, the
 * terminal. SIGTERM or SIGINT shut down gracefully (src/server.ts); a second signal exits at once, unless it
 * is the first one repeated at once (SAME_KEYSTROKE_MS).
 */
async function serve(flags: Flags): Promise<void> {
  const role = oneOf(flags.role ?? 'all', ['api', 'worker', 'all'] as Role[], 'role')!;
  const config = loadConfig();
  const logger = makeLogger(config, { role });
  let service: RunningService;
  try {
    const { startService } = await import('../server.js');
    service = await startService(config, role, {
      logger,
      terminal: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    logger.fatal({ err: error }, 'could not start');
    process.exit(1);
  }
  installSignalHandlers(service, config, logger);
  await printStartupLine(service, config);
}

/** The one plain start-up line on stderr (src/cli/startup-line.ts), once the engine has found its adapter. */
async function printStartupLine(service: RunningService, config: Config): Promise<void> {
  await service.engine?.ready();
  const address = service.app?.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const baseUrl = publicBaseUrl(process.env.BASE_URL || undefined, config.HOST, port);
  const engine = (service.engine?.health() ?? null) as StartupEngine | null;
  const line = service.app
    ? startupLine(baseUrl, engine)
    : `matchsim worker running; ${engineSentence(engine)}`;
  process.stderr.write(`${line}\n`);
}

/** How long after the shutdown's own limit the process is killed if its exit has not ended it. */
const EXIT_GRACE_MS = 5000;

/**
 * One Ctrl-C can arrive as two SIGINTs: the terminal sends it to the whole foreground process group, and
 * `npm start` (npm, in the same group) forwards the one it got to the service. Both come within
 * milliseconds; a person's second Ctrl-C comes later than this, and that one exits at once.
 */
const SAME_KEYSTROKE_MS = 1000;

function installSignalHandlers(service: RunningService, config: Config, logger: Logger): void {
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (first) {
      if (signal === first.signal && performance.now() - first.at < SAME_KEYSTROKE_MS) {
        logger.info(
          { signal },
          'the same signal again at once (a terminal and npm both send it): still draining',
        );
        return;
      }
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    first = { signal, at: performance.now() };
    logger.info({ signal }, 'signal received');
    // The drain is bounded by its own timeout; this bounds the closing steps after it too.
    const limitMs = (config.SHUTDOWN_DELAY_SECONDS + config.SHUTDOWN_TIMEOUT_SECONDS + 15) * 1000;
    setTimeout(() => {
      logger.error({ limit_ms: limitMs }, 'shutdown took too long: exiting');
      process.exit(1);
    }, limitMs).unref();
    // And should the exit itself block (the log's flush to a stdout nobody reads), a thread of its own
    // kills the process a little later (src/logger.ts).
    armExitDeadline(limitMs + EXIT_GRACE_MS);
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** The error as the CLI reports it: its code, message and exit status. */
function describeError(error: unknown): { code: string; message: string; exit: number; extra: object } {
  if (error instanceof UsageError) {
    return { code: 'usage_invalid', message: error.message, exit: 2, extra: { usage: error.usage } };
  }
  if (error instanceof ConfigError)
    return { code: 'config_invalid', message: error.message, exit: 2, extra: {} };
  if (isApiError(error)) {
    const param = error.options.param ? { param: error.options.param } : {};
    return { code: error.code, message: error.message, exit: 1, extra: param };
  }
  const message = (error as { message?: string })?.message ?? String(error);
  return { code: 'failed', message, exit: 1, extra: {} };
}

function report(error: unknown, json: boolean): number {
  const { code, message, exit, extra } = describeError(error);
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: { code, message, ...extra } })}\n`);
  } else {
    process.stderr.write(`matchsim: ${message}\n`);
    if (error instanceof UsageError) process.stderr.write(`\n${error.usage}\n`);
  }
  return exit;
}

async function main(argv: string[]): Promise<number | 'serving'> {
  const tooOld = nodeVersionProblem(process.version);
  if (tooOld) return report(new Error(tooOld), argv.includes('--json'));
  let parsed: Parsed;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    return report(error, argv.includes('--json'));
  }
  if (parsed.kind === 'help') {
    process.stdout.write(`${parsed.text}\n`);
    return 0;
  }
  try {
    if (parsed.command.name === 'serve') {
      await serve(parsed.flags);
      return 'serving';
    }
    if (parsed.command.name === 'gpu-check') {
      // Its own exit codes (docs/gpu.md "gpu-check"); loaded only when asked for, like the model tools.
      const { gpuCheckCommand } = await import('./gpu-check/command.js');
      return await gpuCheckCommand(parsed.flags);
    }
    const output = await RUNNERS[parsed.command.name]!(parsed);
    process.stdout.write(`${parsed.json ? JSON.stringify(output.value) : output.human}\n`);
    return 0;
  } catch (error) {
    const withUsage =
      error instanceof UsageError && error.usage === ''
        ? new UsageError(error.message, commandUsage(parsed.command))
        : error;
    return report(withUsage, parsed.json);
  }
}

// Exit explicitly: an embedded database's socket server would otherwise keep a finished command alive.
main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 'serving') process.exit(code);
  },
  (error: unknown) => process.exit(report(error, process.argv.includes('--json'))),
);
