// Boot: configuration → database → migrations → first-start bootstrap → HTTP API and/or workers, and the
// graceful shutdown that undoes it. Everything the service says goes to the JSON log (src/logger.ts); the
// demo's keys and admin token are the one exception, printed once to the terminal and only in demo mode.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { type Config, serviceClock } from './config.js';
import type { Database } from './db/connection.js';
import { openServiceDatabase } from './db/migrations.js';
import { createSimulationEngine, type SimulationEngine } from './engine/runner.js';
import { type App, type AppDeps, buildApp } from './http/app.js';
import { makeMetrics } from './http/metrics.js';
import { buildOperationsApp } from './http/operations-app.js';
import { type Lifecycle, makeLifecycle } from './http/readiness.js';
import { startWorker, type Worker, type WorkerOptions } from './jobs/worker.js';
import {
  makeMemoryWindowCounter,
  makeResilientWindowCounter,
  type WindowCounter,
} from './limits/window-counter.js';
import { type Logger, makeLogger } from './logger.js';
import { ensureDemoData, ensureDemoOrganisation } from './operations/demo.js';
import { forgetServiceAddress, localUrl, writeServiceAddress } from './operations/service-address.js';
import type { ProjectionWorker } from './projections/projection-worker.js';
import { runSeasonsOnThread } from './projections/season-runner.js';
import { makeServiceGraph, type ServiceGraph } from './wiring.js';

export type Role = 'api' | 'worker' | 'all';

/** A Redis command that takes longer than this counts as failed: the limit answers from the process. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

function connectRedis(url: string): Redis {
  // Fail fast instead of queueing commands while Redis is away: a limit check must answer, not wait.
  return new Redis(url, {
    connectTimeout: 2000,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: false,
  });
}

/**
 * The limits' counters: this process's, or Redis with this process's as the fallback. ioredis emits
 * 'error' for every failed reconnection; unlistened, each is an "Unhandled error event" on stderr. One log
 * line when an outage begins (a failed connection or command), one when it ends (docs/decisions.md §3).
 */
function limitCounters(redis: Redis | undefined, logger: Logger): WindowCounter {
  const local = makeMemoryWindowCounter();
  if (!redis) return local;
  let away = false;
  const unavailable = (error: unknown) => {
    if (away) return;
    away = true;
    logger.warn({ err: error }, 'Redis unavailable: limits count in this process until it returns');
  };
  redis.on('error', unavailable);
  redis.on('ready', () => {
    if (!away) return;
    away = false;
    logger.info('Redis available again: limits are shared');
  });
  return makeResilientWindowCounter(redis, local, unavailable);
}

/** The admin token: ADMIN_TOKEN, else one generated once into DATA_DIR (docs/decisions.md §8). */
function resolveAdminToken(config: Config): { token: string; generated: boolean; file: string } {
  const file = path.resolve(config.DATA_DIR, 'admin-token');
  if (config.ADMIN_TOKEN) return { token: config.ADMIN_TOKEN, generated: false, file };
  try {
    return { token: readFileSync(file, 'utf8').trim(), generated: false, file };
  } catch {
    mkdirSync(config.DATA_DIR, { recursive: true });
    const token = `msadm_${randomBytes(24).toString('base64url')}`;
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    return { token, generated: true, file };
  }
}

export interface ServiceOptions {
  /** Where the demo's secrets are printed (the CLI: stderr, the terminal). Never the log. */
  terminal?: (line: string) => void;
  /** The JSON log; default stdout at LOG_LEVEL. */
  logger?: Logger;
  /** The service's clock; default the host's moved by CLOCK_OFFSET_SECONDS (tests run other days). */
  clock?: () => Date;
}

/** What a shutdown did: the jobs it put back in the queue because they outlived the timeout. */
export interface ShutdownReport {
  releasedJobs: string[];
}

export interface RunningService {
  app: App | null;
  /** The METRICS_PORT listener (metrics and probes), when configured. */
  operations: App | null;
  db: Database;
  lifecycle: Lifecycle;
  logger: Logger;
  /** The engine of this process (roles `worker` and `all`), for the CLI's start-up line. */
  engine: SimulationEngine | null;
  /**
   * Graceful shutdown: readiness flips at once; after SHUTDOWN_DELAY_SECONDS the listener closes and
   * in-flight requests and running jobs get SHUTDOWN_TIMEOUT_SECONDS to finish; jobs still running then go
   * back to the queue and the remaining connections are cut; then everything closes.
   */
  stop(): Promise<ShutdownReport>;
}

/** The parts of a running service, for the shutdown. */
interface ServiceParts {
  config: Config;
  logger: Logger;
  lifecycle: Lifecycle;
  db: Database;
  graph: ServiceGraph;
  engine: SimulationEngine | null;
  counters: WindowCounter;
  redis: Redis | undefined;
  app: App | null;
  operations: App | null;
  worker: Worker | null;
  /** The projection kind's worker, beside the engine's (src/jobs/kind-worker.ts, made in src/wiring.ts). */
  projectionWorker: ProjectionWorker | null;
  deliverer: { stop(options?: { timeoutMs?: number | undefined }): Promise<void> } | null;
}

export async function startService(
  config: Config,
  role: Role,
  options: ServiceOptions = {},
): Promise<RunningService> {
  const logger = options.logger ?? makeLogger(config, { role });
  const db = await openServiceDatabase(config);
  const clock = options.clock ?? serviceClock(config);
  const redis = config.REDIS_URL ? connectRedis(config.REDIS_URL) : undefined;
  const counters = limitCounters(redis, logger);
  const metrics = makeMetrics();
  const lifecycle = makeLifecycle();
  const engine = role === 'api' ? null : startEngine(config, clock);
  const graph = makeServiceGraph({ config, db, clock, counters, metrics, engine });
  const deps: AppDeps = { config, db, clock, counters, metrics, services: graph.services, lifecycle };
  const app =
    role === 'api' || role === 'all'
      ? await startApi({ ...deps, loggerInstance: logger }, options.terminal ?? (() => {}))
      : null;
  const operations = await startOperations(deps, logger);
  const worker = engine ? startEngineWorker(deps, graph, engine, logger, config.WORKER_CLAIM_DRAWS) : null;
  // Worker processes deliver webhook events too (src/webhooks/delivery.ts), each under its own leases.
  const deliverer = worker ? graph.startDeliverer({ workerId: worker.workerId, logger }) : null;
  if (worker) logger.info({ worker_id: worker.workerId, engine: config.ENGINE }, 'worker running');
  const projectionWorker = engine
    ? graph.startProjectionWorker({
        runSeasons: runSeasonsOnThread,
        workerId: `${hostname()}:${process.pid}:projections`,
        logger,
      })
    : null;
  if (engine) void engine.ready().then(() => logEngineStart(engine, logger));
  const parts: ServiceParts = {
    config,
    logger,
    lifecycle,
    db,
    graph,
    engine,
    counters,
    redis,
    app,
    operations,
    worker,
    projectionWorker,
    deliverer,
  };
  let stopping: Promise<ShutdownReport> | null = null;
  const stop = () => {
    stopping ??= shutdown(parts);
    return stopping;
  };
  return { app, operations, db, lifecycle, logger, engine, stop };
}

/** Once the engine started: the adapter in use, or why no GPU adapter was found (docs/gpu.md "No adapter"). */
function logEngineStart(engine: SimulationEngine, logger: Logger): void {
  const health = engine.health();
  const gpu = health.gpu as { state?: string; adapter?: string | null; reason?: string | null } | null;
  if (gpu?.state === 'unavailable') {
    logger.warn(
      { engine: health.engine, reason: gpu.reason },
      'no GPU adapter: the CPU engine runs the jobs',
    );
  } else {
    logger.info({ engine: health.engine, adapter: gpu?.adapter ?? null }, 'engine started');
  }
}

function startEngine(config: Config, clock: () => Date): SimulationEngine {
  return createSimulationEngine({
    mode: config.ENGINE,
    cpuThreads: config.CPU_THREADS > 0 ? config.CPU_THREADS : undefined,
    clock,
  });
}

/** The METRICS_PORT listener, when configured. */
async function startOperations(deps: AppDeps, logger: Logger): Promise<App | null> {
  const { config } = deps;
  if (config.METRICS_PORT === undefined) return null;
  const operations = await buildOperationsApp({ ...deps, lifecycle: deps.lifecycle! }, logger);
  await operations.listen({ port: config.METRICS_PORT, host: config.HOST });
  logger.info({ address: listenAddress(operations) }, 'metrics and probes listening');
  return operations;
}

function listenAddress(app: App): string {
  const address = app.server.address();
  return typeof address === 'object' && address ? `${address.address}:${address.port}` : String(address);
}

/**
 * The first-start demo (docs/decisions.md §8) when the configuration asks for it: the demo data set and
 * a demo organisation (Pro) with a live and a test key, whose secrets are printed once to the terminal.
 */
async function bootstrapDemo(deps: AppDeps, terminal: (line: string) => void, log: Logger): Promise<void> {
  const { db, clock, services } = deps;
  if (await ensureDemoData(db.sql, clock())) log.info({ demo: true }, 'loaded the demo data set');
  const demo = await ensureDemoOrganisation(db.sql, services.operator);
  log.info({ org_id: demo.orgId, created: demo.created }, 'demo organisation');
  if (demo.created) {
    terminal(`Demo organisation ${demo.orgId} (Pro). Keys are shown once; keep them:`);
    terminal(`  live key: ${demo.liveSecret}`);
    terminal(`  test key: ${demo.testSecret}`);
  } else {
    terminal(`Demo organisation ${demo.orgId} exists; its keys were printed at first start.`);
  }
}

/** The HTTP API, after the first-start demo (when asked for) and the admin token. */
async function startApi(deps: AppDeps, terminal: (line: string) => void): Promise<App> {
  const { config, db } = deps;
  const log = deps.loggerInstance as Logger;
  const admin = resolveAdminToken(config);
  if (config.demo) await bootstrapDemo(deps, terminal, log);
  else log.info({ demo: false }, 'demo off: no demo data, organisation or keys are created');
  if (admin.generated) {
    // The token itself never reaches the log; the demo shows it on the terminal.
    log.info({ file: admin.file }, 'generated an admin token');
    if (config.demo) terminal(`Admin token (saved in ${admin.file}): ${admin.token}`);
  }
  const app = await buildApp({ ...deps, config: { ...config, ADMIN_TOKEN: admin.token } });
  await app.listen({ port: config.PORT, host: config.HOST });
  if (db.kind === 'embedded') {
    // The CLI beside this process reaches the embedded database through the admin API at this address
    // (removed by the shutdown once the listener has closed).
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    writeServiceAddress(config.DATA_DIR, { pid: process.pid, url: localUrl(config.HOST, port) });
  }
  log.info(
    { address: listenAddress(app), url: config.baseUrl, docs: config.docsUrl, database: db.kind },
    'matchsim listening',
  );
  return app;
}

function startEngineWorker(
  { db, clock }: Pick<AppDeps, 'db' | 'clock'>,
  graph: ServiceGraph,
  engine: SimulationEngine,
  logger: Logger,
  claimDraws: number,
): Worker {
  return startWorker({
    queue: graph.queue,
    sql: db.sql,
    knownResults: graph.knownResults,
    runBatch: engine.runBatch,
    clock,
    workerId: `${hostname()}:${process.pid}`,
    ...workerClaims(db.kind, engine, claimDraws),
    sweeper: graph.sweeper,
    logger,
    onJobFinished: graph.onJobFinished,
  });
}

/** How much the engine's worker claims: its jobs in flight, its draws, and what it claims beyond them. */
export function workerClaims(
  dbKind: Database['kind'],
  engine: Pick<SimulationEngine, 'drawsAhead' | 'smallDraws'>,
  claimDraws: number,
): Pick<WorkerOptions, 'concurrency' | 'claimDraws' | 'smallDraws'> {
  return {
    // PGlite serves one connection: fewer jobs in flight keep the API responsive beside the worker. On a
    // server, packs of a quarter of these (claim-loop.ts) are 64 jobs, as many as a store gathers
    // (outcome-store.ts): a claim or a store of 64 small jobs costs the server little more than one of
    // 16, and with 64 held a batch of 1,000 took it twice the CPU a job (docs/decisions.md §6, "What a
    // job costs the host").
    concurrency: dbKind === 'server' ? 256 : 16,
    // And at most what the engine can begin soon, counted in draws (docs/decisions.md §6 "Claims").
    claimDraws: claimDraws > 0 ? () => claimDraws : engine.drawsAhead,
    // Beyond that, runs the engine begins at once beside the large ones (§6 "Fair shares").
    smallDraws: engine.smallDraws,
  };
}

/** Closes the HTTP listener within timeoutMs: connections still open then are cut. */
async function closeHttp(app: App | null, timeoutMs: number): Promise<void> {
  if (!app) return;
  const timer = setTimeout(() => app.server.closeAllConnections(), timeoutMs);
  try {
    await app.close();
  } finally {
    clearTimeout(timer);
  }
}

async function shutdown(parts: ServiceParts): Promise<ShutdownReport> {
  const { config, logger, lifecycle } = parts;
  const timeoutMs = config.SHUTDOWN_TIMEOUT_SECONDS * 1000;
  lifecycle.draining = true;
  logger.info(
    { delay_s: config.SHUTDOWN_DELAY_SECONDS, timeout_s: config.SHUTDOWN_TIMEOUT_SECONDS },
    'shutting down: not ready any more',
  );
  // Load balancers see /readyz fail and stop sending before the listener goes.
  if (config.SHUTDOWN_DELAY_SECONDS > 0) await sleep(config.SHUTDOWN_DELAY_SECONDS * 1000);
  lifecycle.closing = true;
  // Requests waiting for a job answer now with its state (202 and its result path), so the drain does
  // not hang on jobs that may yet go back to the queue.
  parts.graph.queue.endWaits();
  // Together: the HTTP drain and the worker's, each bounded by the timeout.
  const [, drained, projectionsDrained] = await Promise.all([
    closeHttp(parts.app, timeoutMs),
    parts.worker?.stop({ timeoutMs }) ?? { released: [] },
    parts.projectionWorker?.stop({ timeoutMs }) ?? { released: [] },
    // A delivery cut short by the exit is sent again once its lease ends (at least once).
    parts.deliverer?.stop({ timeoutMs }),
  ]);
  if (parts.app && parts.db.kind === 'embedded') forgetServiceAddress(config.DATA_DIR, process.pid);
  await parts.operations?.close();
  await parts.engine?.close();
  await parts.graph.queue.close();
  await parts.counters.close();
  parts.redis?.disconnect();
  await parts.db.close();
  const releasedJobs = [...drained.released, ...projectionsDrained.released];
  logger.info({ released_job_ids: releasedJobs }, 'stopped');
  return { releasedJobs };
}
