// A real app over a fresh test database, with helpers to make organisations and keys.
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { KeyMode, Scope } from '../../src/accounts/keys.js';
import type { Plan } from '../../src/accounts/orgs.js';
import { type Config, loadConfig } from '../../src/config.js';
import { createSimulationEngine, type SimulationEngine } from '../../src/engine/runner.js';
import { type IngestOptions, type IngestSummary, ingestFeed } from '../../src/fixtures/feed-loader.js';
import { type App, buildApp } from '../../src/http/app.js';
import { makeMetrics } from '../../src/http/metrics.js';
import type { Lifecycle } from '../../src/http/readiness.js';
import type { Services } from '../../src/http/services.js';
import { startWorker, type Worker, type WorkerOptions } from '../../src/jobs/worker.js';
import { makeMemoryWindowCounter } from '../../src/limits/window-counter.js';
import { makeOperator } from '../../src/operations/operator.js';
import { makeServiceGraph, type ServiceGraph } from '../../src/wiring.js';
import { NOW, smallFeed } from '../fixtures/small-feed.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { checkedInject, WireContract } from './wire-contract.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestContext {
  adminToken: string;
  app: App;
  db: TestDatabase;
  operator: ReturnType<typeof makeOperator>;
  services: Services;
  graph: ServiceGraph;
  /** Pin the clock the app sees (null: real time again). */
  setNow(date: Date | null): void;
  newOrg(options?: {
    plan?: Plan;
    mode?: KeyMode;
    scopes?: Scope[];
    ipAllowlist?: string[];
    expiresAt?: Date | null;
    limits?: Record<string, number>;
  }): Promise<{ orgId: string; secret: string; keyId: string; auth: { authorization: string } }>;
  /**
   * The app's last error log lines (the error handler logs every 5xx with its cause), those of one
   * request when given its id: what a failing assertion on a 500 prints. Empty with TEST_LOG, where
   * they go to stdout.
   */
  serverErrors(requestId?: string): string[];
  /**
   * Loads a feed as the service's own loads do (the admin route): the app's fixture read cache forgets
   * what it holds once the load commits.
   */
  loadFeed(feed: string | unknown, options?: IngestOptions): Promise<IngestSummary>;
  /** Stops the worker (its jobs stay as they are); close() still closes the rest. */
  stopWorker(): Promise<void>;
  close(): Promise<void>;
}

export interface TestContextOptions {
  adminToken?: string | null;
  env?: Record<string, string>;
  /** Run a worker with the CPU engine on the test's thread, as `npm start` does in-process. */
  worker?: boolean;
  /**
   * The worker's CPU engine on this many threads of its own (default 0: on the test's thread), and the
   * worker's bounds (default startWorker's).
   */
  engineThreads?: number;
  workerOptions?: Pick<WorkerOptions, 'concurrency' | 'claimDraws'>;
  /** Queued jobs beyond which submissions answer engine_overloaded. */
  queueBound?: number;
  /** The fixture read cache's entry lifetime; 0 sends every fixture read to the database. */
  fixtureCacheTtlMs?: number;
  /** A database of the test's own (e.g. reached through a proxy it can cut), closed with the context. */
  database?: TestDatabase;
  /** Readiness and shutdown state the app reads (src/http/readiness.ts). */
  lifecycle?: Lifecycle;
  /** How often the event-loop delay is sampled for back-pressure. */
  pressureSampleMs?: number;
  /** Settings beyond what the environment's schema allows (a handler time limit of one second). */
  configOverrides?: Partial<Config>;
}

/** A logger at level error that keeps its last lines in memory, for serverErrors. */
function recentErrorLog(): { logger: FastifyBaseLogger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino(
    { level: 'error' },
    {
      write(line: string) {
        lines.push(line.trimEnd());
        if (lines.length > 50) lines.shift();
      },
    },
  );
  return { logger, lines };
}

/**
 * A test app whose clock is pinned at NOW with the small feed loaded (test/fixtures/small-feed.ts): the
 * setup most HTTP and fault tests start from.
 */
export async function createFeedTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const t = await createTestContext(options);
  t.setNow(NOW);
  await t.loadFeed(smallFeed(), { clock: () => NOW });
  return t;
}

export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const db = options.database ?? (await createTestDatabase());
  // Real time unless a test pins it with setNow.
  let pinned: Date | null = null;
  const clock = () => pinned ?? new Date();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    BASE_URL: 'http://api.test',
    // Back-pressure only where a test asks for it: a loaded test machine must not turn requests into 503s.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...(options.adminToken === null ? {} : { ADMIN_TOKEN: options.adminToken ?? ADMIN_TOKEN }),
    ...options.env,
  });
  Object.assign(config, options.configOverrides);
  const counters = makeMemoryWindowCounter(() => clock().getTime());
  const metrics = makeMetrics();
  const engine: SimulationEngine | null = options.worker
    ? createSimulationEngine({ mode: 'cpu', cpuThreads: options.engineThreads ?? 0, clock })
    : null;
  const graph = makeServiceGraph({
    config,
    db,
    clock,
    counters,
    metrics,
    engine,
    queueBound: options.queueBound,
    fixtureCacheTtlMs: options.fixtureCacheTtlMs,
  });
  const { ledger, services } = graph;
  const errors = recentErrorLog();
  const app = await buildApp({
    config,
    db,
    clock,
    counters,
    metrics,
    services,
    ...(process.env.TEST_LOG ? { logger: { level: 'error' } } : { loggerInstance: errors.logger }),
    lifecycle: options.lifecycle,
    pressureSampleMs: options.pressureSampleMs,
  });
  // Every response the tests see is checked against /openapi.json (test/helpers/wire-contract.ts).
  const contract = new WireContract(
    (await app.inject({ method: 'GET', url: '/openapi.json' })).json(),
    (await app.inject({ method: 'GET', url: '/admin/openapi.json' })).json(),
  );
  Object.defineProperty(app, 'inject', { value: checkedInject(app, () => contract) });
  let worker: Worker | null = engine
    ? startWorker({
        queue: graph.queue,
        sql: db.sql,
        knownResults: graph.knownResults,
        runBatch: engine.runBatch,
        clock,
        workerId: 'test-worker',
        pollMs: 20,
        sweeper: graph.sweeper,
        onJobFinished: graph.onJobFinished,
        ...options.workerOptions,
      })
    : null;
  const operator = makeOperator({ sql: db.sql, ledger, clock });
  return {
    adminToken: options.adminToken ?? ADMIN_TOKEN,
    app,
    db,
    operator,
    services,
    graph,
    setNow(date) {
      pinned = date;
    },
    async loadFeed(feed, ingest = {}) {
      const cache = await services.fixtureCache();
      return ingestFeed(db.sql, feed, { ...ingest, onChanged: cache.changed });
    },
    serverErrors: (requestId) =>
      errors.lines.filter((line) => requestId === undefined || line.includes(`"${requestId}"`)),
    async newOrg(o = {}) {
      const org = await operator.createOrg({ name: 'Test org', plan: o.plan ?? 'pro', limits: o.limits });
      const key = await operator.createKey({
        orgId: org.id,
        mode: o.mode ?? 'live',
        scopes: o.scopes,
        ipAllowlist: o.ipAllowlist,
        expiresAt: o.expiresAt ?? null,
      });
      return {
        orgId: org.id,
        secret: key.secret,
        keyId: key.key.id,
        auth: { authorization: `Bearer ${key.secret}` },
      };
    },
    async stopWorker() {
      await worker?.stop();
      worker = null;
    },
    async close() {
      await app.close();
      await worker?.stop();
      await engine?.close();
      await graph.queue.close();
      await counters.close();
      await db.close();
    },
  };
}
