// The service as serve-bench runs it (docs/gpu.md "The service on a GPU host"): started from its own
// `matchsim` CLI in processes of their own, set up by that CLI as an operator would (fixtures from a feed
// file, an organisation, a live key, credits), on one of two back ends:
// - `embedded`: one `matchsim serve` process (API and worker) on PGlite, the default;
// - `server`: a PostgreSQL server started here in a scratch folder (initdb, trust auth, 127.0.0.1), with
//   the compose file's layout: API processes (`--role api`) and one GPU worker (`--role worker`).
// Each process has a METRICS_PORT: the worker's /metrics gives the jobs by engine and their GPU time.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { benchFeed } from './bench-feed.js';
import { freePort } from './servers.js';

export type Backend = 'embedded' | 'server';

export interface StackOptions {
  backend: Backend;
  /** How to run Node: the bundle gives its own, with the C library it chose (scripts/gpu-bundle-run.sh). */
  node: readonly string[];
  /** The CLI's entry: dist/src/cli/main.js. */
  cli: string;
  /** Fixtures on sale (each batch item takes its own). */
  fixtures: number;
  /** API processes on the `server` back end. */
  apiProcesses: number;
  /** Where a process's log lines go when it fails. */
  say: (line: string) => void;
}

export interface RunningStack {
  backend: Backend;
  /** The API processes' base URLs; clients take them in turn. */
  apiBases: string[];
  /** The base URL of the metrics listener of the process that runs jobs. */
  workerMetrics: string;
  secret: string;
  fixtureIds: number[];
  /** The service's processes (API and worker), for their CPU time. */
  pids: number[];
  /** The engine as the worker's /healthz reports it (state, adapter, software, timing). */
  engine: Record<string, unknown>;
  stop(): Promise<void>;
}

/** Limits of the benchmark organisation: none of them may cap the measurement (admin API overrides). */
const UNLIMITED = 1_000_000_000;
const LIMIT_OVERRIDES = {
  data_rpm: UNLIMITED,
  simulations_rpm: UNLIMITED,
  submissions_per_day: UNLIMITED,
  batches_per_day: UNLIMITED,
  gpu_seconds_per_day: UNLIMITED,
  concurrent_simulations: UNLIMITED,
};
/** Enough for every workload at full scale: 64 clients of 1,000,000 draws for 30 s cost some 10^6. */
const TOP_UP_CREDITS = 100_000_000;
/** How long a process may take to be ready: Dawn's start and the kernel's compile on llvmpipe. */
const READY_TIMEOUT_MS = 180_000;
/** A stopped process drains first (SHUTDOWN_TIMEOUT_SECONDS below); after this it is killed. */
const STOP_TIMEOUT_MS = 30_000;
/** 503s the set-up's admin request takes before it fails: at 2 s each (the service's Retry-After), a minute. */
const SET_UP_REFUSALS = 30;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A child's exit, or null when it is still running after `ms`. */
function exited(child: ChildProcess, ms: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? 1);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code ?? 1);
    });
  });
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  if ((await exited(child, STOP_TIMEOUT_MS)) === null) child.kill('SIGKILL');
}

/** The tail of a log file, for an error message. */
function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** One CLI command with --json; its answer. */
function cli(options: StackOptions, env: NodeJS.ProcessEnv, args: string[]): Record<string, unknown> {
  const [node, ...prefix] = options.node;
  const out = execFileSync(node!, [...prefix, options.cli, ...args, '--json'], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  return JSON.parse(out) as Record<string, unknown>;
}

/** The PostgreSQL server's programs: the bundle's (run.sh sets MATCHSIM_POSTGRES_BIN), else Debian's. */
function postgresPrograms(): { bin: string; env: NodeJS.ProcessEnv } {
  const bin =
    process.env.MATCHSIM_POSTGRES_BIN ??
    ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].find((dir) =>
      existsSync(path.join(dir, 'postgres')),
    );
  if (!bin) throw new Error('serve-bench: no PostgreSQL server found (set MATCHSIM_POSTGRES_BIN)');
  const libraries = process.env.MATCHSIM_POSTGRES_LIBRARY_PATH;
  return {
    bin,
    // GMT needs no time zone files: a bare host may have none (PostgreSQL builds GMT in).
    env: { PATH: process.env.PATH, TZ: 'GMT', ...(libraries ? { LD_LIBRARY_PATH: libraries } : {}) },
  };
}

/** PostgreSQL refuses to run as root: as root, its processes run as `nobody` (every host has it). */
function postgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('nobody:'));
  if (!line) throw new Error('serve-bench: running as root and /etc/passwd has no `nobody` for PostgreSQL');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** As `nobody`, the server's programs must be reachable: every folder above them open to others. */
function reachableByOthers(folder: string): void {
  for (let dir = folder; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0)
      throw new Error(
        `serve-bench: PostgreSQL runs as nobody (not as root), who cannot enter ${dir}: unpack the bundle ` +
          'where others may read it (tar xf ... -C /tmp) or chmod o+x that folder',
      );
  }
}

/** initdb into `scratch`, then the server on 127.0.0.1; resolves with its URL once it answers. */
async function startPostgres(scratch: string, say: (line: string) => void) {
  const { bin, env } = postgresPrograms();
  const user = postgresUser();
  if (user) reachableByOthers(bin);
  const log = path.join(scratch, 'postgres.log');
  if (user) {
    chmodSync(scratch, 0o755);
    writeFileSync(log, '');
    chownSync(log, user.uid, user.gid);
  }
  const owner = user ? { uid: user.uid, gid: user.gid } : {};
  // initdb makes the data folder; as `nobody` it needs a parent it may write.
  const parent = path.join(scratch, 'pg');
  mkdirSync(parent, { recursive: true });
  if (user) chownSync(parent, user.uid, user.gid);
  const folder = path.join(parent, 'data');
  execFileSync(
    path.join(bin, 'initdb'),
    ['-D', folder, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
    { env, ...owner, stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')], timeout: 120_000 },
  );
  const port = await freePort();
  const server = spawn(
    path.join(bin, 'postgres'),
    [
      '-D',
      folder,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-k',
      parent,
      '-c',
      'max_connections=300',
    ],
    { env, ...owner, stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')] },
  );
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      const [row] = await sql<{ version: string }[]>`SELECT version()`;
      say(`serve-bench: PostgreSQL ready on 127.0.0.1:${port}: ${row!.version}`);
      return { url, server, version: row!.version };
    } catch (error) {
      if (server.exitCode !== null || Date.now() > deadline) {
        await stopChild(server, 'SIGINT');
        throw new Error(`serve-bench: PostgreSQL did not start (${(error as Error).message}):\n${tail(log)}`);
      }
      await sleep(200);
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
}

/** A `matchsim serve` process; its log lines go to `log`. */
function serve(options: StackOptions, env: NodeJS.ProcessEnv, role: string, log: string): ChildProcess {
  const [node, ...prefix] = options.node;
  const fd = openSync(log, 'a');
  return spawn(node!, [...prefix, options.cli, 'serve', '--role', role], { env, stdio: ['ignore', fd, fd] });
}

async function untilReady(metricsBase: string, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`serve-bench: a service process exited:\n${tail(log)}`);
    const ready = await fetch(`${metricsBase}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return;
    await sleep(250);
  }
  throw new Error(
    `serve-bench: a service process was not ready within ${READY_TIMEOUT_MS / 1000} s:\n${tail(log)}`,
  );
}

/** The operator's set-up with the CLI: fixtures, an organisation, its live key and credits. */
function setUp(options: StackOptions, env: NodeJS.ProcessEnv, scratch: string) {
  const feed = benchFeed(options.fixtures, new Date());
  const feedFile = path.join(scratch, 'feed.json');
  writeFileSync(feedFile, JSON.stringify(feed.feed));
  cli(options, env, ['ingest', feedFile]);
  const org = cli(options, env, [
    'org',
    'create',
    '--name',
    'serve-bench',
    '--plan',
    'pro',
    '--spend-cap',
    String(UNLIMITED),
  ]);
  const orgId = String(org.org_id);
  const key = cli(options, env, ['key', 'create', '--org', orgId, '--mode', 'live']);
  cli(options, env, ['credits', 'topup', '--org', orgId, '--credits', String(TOP_UP_CREDITS)]);
  return { orgId, secret: String(key.secret), fixtureIds: feed.onSale.slice(0, options.fixtures) };
}

/**
 * The limits no benchmark may meet, through the admin API (the CLI sets plans, not single limits). A 503
 * (back-pressure: a process just started, on a loaded machine, lags) is sent again after its Retry-After,
 * as a client would (./serve-load.ts simulate); a PATCH of the same limits may be sent twice.
 */
async function liftLimits(apiBase: string, adminToken: string, orgId: string): Promise<void> {
  for (let refusals = 0; ; refusals++) {
    const answer = await fetch(`${apiBase}/admin/v1/orgs/${orgId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ limits: LIMIT_OVERRIDES }),
    });
    if (answer.status === 200) return;
    const text = await answer.text();
    if (answer.status !== 503 || refusals >= SET_UP_REFUSALS)
      throw new Error(`serve-bench: PATCH org limits: ${answer.status} ${text}`);
    await sleep(Number(answer.headers.get('retry-after') ?? 1) * 1000);
  }
}

export async function startStack(options: StackOptions): Promise<RunningStack> {
  const scratch = mkdtempSync(path.join(tmpdir(), `matchsim-serve-bench-${options.backend}-`));
  const children: ChildProcess[] = [];
  let database: Awaited<ReturnType<typeof startPostgres>> | null = null;
  const stop = async () => {
    await Promise.all(children.map((child) => stopChild(child)));
    // Fast shutdown: the run's data is not kept.
    if (database) await stopChild(database.server, 'SIGINT');
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    if (options.backend === 'server') database = await startPostgres(scratch, options.say);
    const adminToken = randomBytes(24).toString('hex');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      MATCHSIM_DEMO: 'off',
      ENGINE: 'gpu',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ADMIN_TOKEN: adminToken,
      SHUTDOWN_TIMEOUT_SECONDS: '10',
      DATA_DIR: path.join(scratch, 'data'),
      ...(database ? { DATABASE_URL: database.url } : {}),
    };
    delete env.REDIS_URL;
    if (!database) delete env.DATABASE_URL;
    const setup = setUp(options, env, scratch);

    const roles =
      options.backend === 'embedded' ? ['all'] : [...Array(options.apiProcesses).fill('api'), 'worker'];
    const started: Array<{ role: string; child: ChildProcess; port: number; metrics: string; log: string }> =
      [];
    for (const [index, role] of roles.entries()) {
      const port = await freePort();
      const metricsPort = await freePort();
      const log = path.join(scratch, `${role}-${index}.log`);
      const child = serve(
        options,
        { ...env, PORT: String(port), METRICS_PORT: String(metricsPort) },
        role,
        log,
      );
      children.push(child);
      started.push({ role, child, port, metrics: `http://127.0.0.1:${metricsPort}`, log });
    }
    for (const process of started) await untilReady(process.metrics, process.child, process.log);
    const apis = started.filter((p) => p.role !== 'worker');
    const worker = started.find((p) => p.role !== 'api')!;
    const apiBases = apis.map((p) => `http://127.0.0.1:${p.port}`);
    await liftLimits(apiBases[0]!, adminToken, setup.orgId);
    const health = (await (await fetch(`${worker.metrics}/healthz`)).json()) as {
      engine: Record<string, unknown>;
    };
    return {
      backend: options.backend,
      apiBases,
      workerMetrics: worker.metrics,
      secret: setup.secret,
      fixtureIds: setup.fixtureIds,
      pids: started.map((p) => p.child.pid ?? 0),
      engine: { ...health.engine, ...(database ? { postgres: database.version } : {}) },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What the worker's /metrics says of the jobs it ran: by engine, and the GPU time of the GPU's. */
export interface JobCounters {
  gpuJobs: number;
  cpuJobs: number;
  gpuSeconds: number;
}

/**
 * The worker counts a job once its outcome is stored, and a client may hear of the stored outcome (from
 * an API process) a moment before: after a workload, the counters are read until they show its `jobs`
 * (or, after a while, as they are; the record then shows fewer jobs than it ran).
 */
export async function readJobCountersAfter(
  workerMetrics: string,
  before: JobCounters,
  jobs: number,
): Promise<JobCounters> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const now = await readJobCounters(workerMetrics);
    const counted = now.gpuJobs + now.cpuJobs - before.gpuJobs - before.cpuJobs;
    if (counted >= jobs || Date.now() > deadline) return now;
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function readJobCounters(workerMetrics: string): Promise<JobCounters> {
  const text = await (await fetch(`${workerMetrics}/metrics`)).text();
  const value = (pattern: RegExp) => Number(text.match(pattern)?.[1] ?? 0);
  return {
    gpuJobs: value(/^matchsim_job_run_seconds_count\{engine="gpu"\} (\S+)$/m),
    cpuJobs: value(/^matchsim_job_run_seconds_count\{engine="cpu"\} (\S+)$/m),
    gpuSeconds: value(/^matchsim_gpu_seconds_total (\S+)$/m),
  };
}
