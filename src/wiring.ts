// Builds the service graph once: ledger, queue, results, limits, idempotency and the simulation
// service, for the server (src/server.ts), the CLI and the tests. Nothing here starts work.
import { makeLedger } from './billing/ledger.js';
import type { Config } from './config.js';
import type { Database } from './db/connection.js';
import type { EngineHealth } from './engine/runner.js';
import { ApiError } from './errors.js';
import { makeIdempotencyStore } from './http/idempotency.js';
import type { Metrics } from './http/metrics.js';
import type { Services } from './http/services.js';
import { makeUsageLimits } from './limits/usage.js';
import type { WindowCounter } from './limits/window-counter.js';
import { makeJobQueue } from './sim/queue.js';
import { makeResultStore } from './sim/results.js';
import { type EngineGate, makeSimulationService } from './sim/simulations.js';
import { makeHoldSweeper } from './sim/sweeper.js';

/** Seconds per draw assumed by an API process that runs no engine itself (the CPU engine's order). */
const REMOTE_ENGINE_SECONDS_PER_DRAW = 1e-6;

export interface LocalEngine {
  estimateSeconds(draws: number): number;
  health(): EngineHealth;
}

/** The engine states of the spec's 503 codes (engine_cold_start, engine_unavailable). */
export function engineGate(mode: Config['ENGINE'], engine: LocalEngine | null): EngineGate {
  return {
    estimateSeconds: (draws) =>
      engine ? engine.estimateSeconds(draws) : draws * REMOTE_ENGINE_SECONDS_PER_DRAW,
    assertAvailable() {
      if (!engine) return;
      const health = engine.health();
      if (health.state === 'starting') {
        throw new ApiError('engine_cold_start', {
          message: 'The GPU engine is starting.',
          retryAfterSeconds: 2,
        });
      }
      const gpu = health.gpu as { state?: string } | null | undefined;
      if (mode === 'gpu' && gpu?.state === 'unavailable') {
        throw new ApiError('engine_unavailable', {
          message: 'ENGINE=gpu and no GPU adapter is available.',
          retryAfterSeconds: 30,
        });
      }
    },
  };
}

export interface ServiceGraphOptions {
  config: Config;
  db: Database;
  clock: () => Date;
  counters: WindowCounter;
  metrics: Metrics;
  engine: LocalEngine | null;
  queueBound?: number | undefined;
}

export function makeServiceGraph(options: ServiceGraphOptions) {
  const { config, db, clock, counters, metrics } = options;
  const sql = db.sql;
  const ledger = makeLedger({ sql, clock });
  const queue = makeJobQueue({
    sql,
    ledger,
    clock,
    holdTtlSeconds: config.HOLD_TTL_SECONDS,
    notifications: db.kind === 'server',
  });
  const results = makeResultStore({ sql, ledger, clock });
  const usage = makeUsageLimits({ sql, counters, clock });
  const idempotency = makeIdempotencyStore({ sql, clock });
  const sweeper = makeHoldSweeper({
    sql,
    ledger,
    clock,
    holdTtlSeconds: config.HOLD_TTL_SECONDS,
    chores: [(now) => idempotency.purgeExpired(now)],
  });
  const service = makeSimulationService({
    sql,
    ledger,
    queue,
    results,
    usage,
    attachJob: idempotency.attachJob,
    engine: engineGate(config.ENGINE, options.engine),
    clock,
    docsUrl: config.docsUrl,
    onCharged: (milli, livemode) => metrics.addCreditsCharged(milli, livemode),
    ...(options.queueBound === undefined ? {} : { queueBound: options.queueBound }),
  });
  const services: Services = {
    ledger,
    simulations: { service, usage, idempotency },
    ...(options.engine ? { engineHealth: () => options.engine!.health() } : {}),
  };
  return { ledger, queue, results, usage, idempotency, sweeper, service, services };
}

export type ServiceGraph = ReturnType<typeof makeServiceGraph>;
