// Boot: configuration → database → migrations → first-start bootstrap → HTTP API and/or workers.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Config } from './config.js';
import { type Database, openDatabase } from './db/connection.js';
import { runMigrations } from './db/migrations.js';
import { createSimulationEngine, type SimulationEngine } from './engine/runner.js';
import { type App, type AppDeps, buildApp } from './http/app.js';
import { type Metrics, makeMetrics } from './http/metrics.js';
import { startWorker, type Worker } from './jobs/worker.js';
import {
  makeMemoryWindowCounter,
  makeRedisWindowCounter,
  type WindowCounter,
} from './limits/window-counter.js';
import { ensureDemoData, ensureDemoOrganisation } from './operations/demo.js';
import { makeServiceGraph, type ServiceGraph } from './wiring.js';

export type Role = 'api' | 'worker' | 'all';

function connectRedis(url: string): Redis {
  // Fail fast instead of queueing commands while Redis is away: a limit check must answer, not wait.
  return new Redis(url, {
    connectTimeout: 2000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: false,
  });
}

export async function openServiceDatabase(config: Config): Promise<Database> {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  await runMigrations(db.sql);
  return db;
}

/** The admin token: ADMIN_TOKEN, else one generated once into DATA_DIR (docs/decisions.md §8). */
function resolveAdminToken(config: Config): { token: string; generated: boolean } {
  if (config.ADMIN_TOKEN) return { token: config.ADMIN_TOKEN, generated: false };
  const file = path.resolve(config.DATA_DIR, 'admin-token');
  try {
    return { token: readFileSync(file, 'utf8').trim(), generated: false };
  } catch {
    mkdirSync(config.DATA_DIR, { recursive: true });
    const token = `msadm_${randomBytes(24).toString('base64url')}`;
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    return { token, generated: true };
  }
}

export interface RunningService {
  app: App | null;
  db: Database;
  stop(): Promise<void>;
}

export async function startService(
  config: Config,
  role: Role,
  print: (line: string) => void,
): Promise<RunningService> {
  const db = await openServiceDatabase(config);
  const clock = () => new Date();
  const redis = config.REDIS_URL ? connectRedis(config.REDIS_URL) : undefined;
  const counters: WindowCounter = redis ? makeRedisWindowCounter(redis) : makeMemoryWindowCounter();
  const metrics = makeMetrics();
  const runsEngine = role === 'worker' || role === 'all';
  const engine: SimulationEngine | null = runsEngine
    ? createSimulationEngine({
        mode: config.ENGINE,
        cpuThreads: config.CPU_THREADS > 0 ? config.CPU_THREADS : undefined,
        clock,
      })
    : null;
  const graph = makeServiceGraph({ config, db, clock, counters, metrics, engine });
  if (engine) registerEngineGauges(metrics, engine);
  const app =
    role === 'api' || role === 'all'
      ? await startApi({ config, db, clock, counters, metrics, services: graph.services, redis }, print)
      : null;
  const worker = engine ? startEngineWorker(db, graph, engine, app) : null;
  if (worker) print(`Worker ${worker.workerId} running (ENGINE=${config.ENGINE})`);

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      await app?.close();
      await worker?.stop();
      await engine?.close();
      await graph.queue.close();
      await counters.close();
      redis?.disconnect();
      await db.close();
    })();
    return stopping;
  };
  return { app, db, stop };
}

function registerEngineGauges(metrics: Metrics, engine: SimulationEngine): void {
  metrics.registerGauge('matchsim_engine_ready', 'Engine state: 1 when the engine takes work.', () => {
    const health = engine.health();
    return [
      {
        labels: { engine: String(health.engine), state: String(health.state) },
        value: health.state === 'starting' ? 0 : 1,
      },
    ];
  });
  metrics.registerGauge('matchsim_gpu_restarts', 'GPU worker restarts after device loss.', () => {
    const gpu = engine.health().gpu as { restarts?: number } | null;
    return [{ labels: {}, value: gpu?.restarts ?? 0 }];
  });
}

/** The HTTP API, after the first-start demo of docs/decisions.md §8 and the admin token. */
async function startApi(deps: AppDeps, print: (line: string) => void): Promise<App> {
  const { config, db, clock, services } = deps;
  const admin = resolveAdminToken(config);
  if (await ensureDemoData(db.sql, clock()))
    print('Loaded the demo data set (fictional clubs and fixtures around today).');
  const demo = await ensureDemoOrganisation(db.sql, services.operator);
  if (demo.created) {
    print(`Demo organisation ${demo.orgId} (Pro). Keys are shown once; keep them:`);
    print(`  live key: ${demo.liveSecret}`);
    print(`  test key: ${demo.testSecret}`);
  } else {
    print(`Demo organisation ${demo.orgId} exists; its keys were printed at first start.`);
  }
  if (admin.generated)
    print(`Admin token (saved in ${path.resolve(config.DATA_DIR, 'admin-token')}): ${admin.token}`);
  const app = await buildApp({ ...deps, config: { ...config, ADMIN_TOKEN: admin.token } });
  await app.listen({ port: config.PORT, host: config.HOST });
  print(`matchsim listening on ${config.baseUrl} (docs: ${config.docsUrl}, database: ${db.kind})`);
  return app;
}

function startEngineWorker(
  db: Database,
  graph: ServiceGraph,
  engine: SimulationEngine,
  app: App | null,
): Worker {
  return startWorker({
    queue: graph.queue,
    sql: db.sql,
    runBatch: engine.runBatch,
    clock: () => new Date(),
    workerId: `${hostname()}:${process.pid}`,
    // PGlite serves one connection: fewer jobs in flight keep the API responsive beside the worker.
    concurrency: db.kind === 'server' ? 64 : 16,
    sweeper: graph.sweeper,
    logger: app?.log,
  });
}
