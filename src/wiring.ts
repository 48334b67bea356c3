// Builds the service graph once: ledger, queue, limits, idempotency, the simulation use cases and
// the operator's operations, for the server (src/server.ts), the CLI and the tests. Nothing here starts work:
// the workers and deliverers it makes start when src/server.ts asks.
import { type Ledger, makeLedger } from './billing/ledger.js';
import type { Config } from './config.js';
import type { Database } from './db/connection.js';
import type { EngineHealth } from './engine/runner.js';
import { ApiError } from './errors.js';
import { makeExpectedLineupSales } from './fixtures/expected-lineup-sales.js';
import { type FixtureReadCache, makeFixtureReadCache } from './fixtures/read-cache.js';
import type { Metrics } from './http/metrics.js';
import type { Services } from './http/services.js';
import { projectionJobView } from './http/views/projections.js';
import { eventObjects } from './http/views/webhooks.js';
import { type IdempotencyStore, makeIdempotencyStore } from './idempotency/store.js';
import type { OpenJobGroups } from './jobs/call-context.js';
import { type JobQueueDeps, makeJobQueue } from './jobs/queue.js';
import { makeHoldSweeper } from './jobs/sweeper.js';
import type { WorkerLogger } from './jobs/types.js';
import { type JobWaits, makeJobWaits } from './jobs/waits.js';
import type { JobFinished } from './jobs/worker.js';
import { makeUsageLimits } from './limits/usage.js';
import type { WindowCounter } from './limits/window-counter.js';
import { makeOperator } from './operations/operator.js';
import { countOpenProjectionJobs, expireUndeliveredProjections } from './projections/projection-store.js';
import { type ProjectionEvents, startProjectionWorker } from './projections/projection-worker.js';
import type { RunSeasons } from './projections/season-runner.js';
import { makeProjectionService } from './projections/service.js';
import type { ProjectionDeps } from './projections/types.js';
import { makeKnownResults } from './results/known-results.js';
import { makeSimulationService } from './simulations/service.js';
import type { EngineGate } from './simulations/types.js';
import { QUEUE_BOUND } from './simulations/types.js';
import { type DelivererLogger, makeWebhookDeliverer, type WebhookDeliverer } from './webhooks/delivery.js';
import { purgeOldEvents } from './webhooks/events.js';
import { makeWebhookOutbox } from './webhooks/outbox.js';
import { makeSender } from './webhooks/sender.js';
import { makeWebhookService } from './webhooks/service.js';
import type { UrlPolicy } from './webhooks/url-guard.js';

/** How often a wait for a job polls when no news comes (a job run where no NOTIFY reaches). */
const JOB_WAIT_POLL_MS = 1000;

/** Seconds per draw assumed by an API process that runs no engine itself (the CPU engine's order). */
const REMOTE_ENGINE_SECONDS_PER_DRAW = 1e-6;

export interface LocalEngine {
  estimateSeconds(draws: number): number;
  health(): EngineHealth;
  fitMarket?: EngineGate['fitMarket'];
}

/** The engine states behind the 503 codes engine_cold_start and engine_unavailable (docs/api.md §7). */
export function engineGate(
  mode: Config['ENGINE'],
  engine: LocalEngine | null,
  queuedDraws?: () => number,
): EngineGate {
  return {
    queuedDraws,
    fitMarket: engine?.fitMarket,
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

/**
 * The webhooks room (src/webhooks): its service, the outbox that the job and ledger transactions write
 * their events through, and deliverers for worker processes, woken by this process's commits that wrote
 * events (others' are found by polling).
 */
function makeWebhookParts(config: Config, sql: Database['sql'], clock: () => Date) {
  const deliverers = new Set<WebhookDeliverer>();
  const outbox = makeWebhookOutbox({
    clock,
    objects: eventObjects(),
    onCommitted: () => {
      for (const deliverer of deliverers) deliverer.wake();
    },
  });
  const policy: UrlPolicy = { publicOnly: config.production && !config.WEBHOOKS_ALLOW_PRIVATE };
  const webhooks = makeWebhookService({ sql, clock, policy });
  const startDeliverer = (options: { workerId: string; logger?: DelivererLogger | undefined }) => {
    const deliverer = makeWebhookDeliverer({
      sql,
      clock,
      send: makeSender(policy),
      beforeRound: () => outbox.decideBatchChecks(sql),
      ...options,
    });
    deliverers.add(deliverer);
    deliverer.start();
    return {
      ...deliverer,
      stop: async (stopOptions?: { timeoutMs?: number | undefined }) => {
        deliverers.delete(deliverer);
        await deliverer.stop(stopOptions);
      },
    };
  };
  // A projection in its event is its job as the result path shows it (its result_url, not the table).
  const projectionEvents: ProjectionEvents = {
    projectionSucceeded: (tx, job) =>
      outbox.projectionSucceeded(tx, {
        id: job.id,
        orgId: job.orgId,
        livemode: job.mode === 'live',
        object: projectionJobView(job, 0),
      }),
  };
  return { outbox, webhooks, startDeliverer, projectionEvents };
}

export interface ServiceGraphOptions {
  config: Config;
  db: Database;
  clock: () => Date;
  counters: WindowCounter;
  metrics: Metrics;
  engine: LocalEngine | null;
  queueBound?: number | undefined;
  /** How long the fixture read cache keeps an entry (default 2 s; 0 keeps none: every read is a query). */
  fixtureCacheTtlMs?: number | undefined;
}

/**
 * The fixture read cache (src/fixtures/read-cache.ts), made on first use: an API process's fixture routes
 * and its quotes and simulations share it; a worker never makes one. `made` is the cache once made, so
 * that a change empties it at once (a cache not made yet holds nothing to empty).
 */
function lazyFixtureCache(db: Database, ttlMs: number | undefined) {
  let making: Promise<FixtureReadCache> | null = null;
  let made: FixtureReadCache | null = null;
  return {
    get(): Promise<FixtureReadCache> {
      making ??= makeFixtureReadCache(db, ttlMs === undefined ? {} : { ttlMs }).then(
        (cache) => (made = cache),
      );
      return making;
    },
    made: () => made,
  };
}

/**
 * The hold sweeper and its chores: old idempotency records and webhook events purged, undelivered
 * projections' holds ended as simulations' are.
 */
function makeSweeper(
  config: Config,
  deps: { sql: Database['sql']; ledger: Ledger; clock: () => Date; idempotency: IdempotencyStore },
) {
  const { sql, ledger, clock, idempotency } = deps;
  const holdEndedBefore = (now: Date) => new Date(now.getTime() - config.HOLD_TTL_SECONDS * 1000);
  return makeHoldSweeper({
    sql,
    ledger,
    clock,
    holdTtlSeconds: config.HOLD_TTL_SECONDS,
    chores: [
      (now) => idempotency.purgeExpired(now),
      (now) => purgeOldEvents({ sql }, now),
      (now) => expireUndeliveredProjections(sql, holdEndedBefore(now), (ids) => ledger.releasedHoldIds(ids)),
    ],
  });
}

/**
 * The job system every kind shares: the waits (news of jobs queued wakes this process's workers, a job
 * finished the requests waiting for it; src/jobs/waits.ts) and the simulation jobs' queue on them, which
 * closes them.
 */
function makeJobSystem(
  config: Config,
  db: Database,
  deps: { ledger: Ledger; clock: () => Date; events: JobQueueDeps['events'] },
) {
  const notifications = db.kind === 'server';
  const waits = makeJobWaits({ sql: db.sql, notifications, pollMs: JOB_WAIT_POLL_MS });
  const queue = makeJobQueue({
    sql: db.sql,
    ...deps,
    holdTtlSeconds: config.HOLD_TTL_SECONDS,
    notifications,
    waits,
  });
  // The concurrent-jobs limit counts every kind's open jobs (docs/api.md §8): the counts sent together,
  // one round trip, in the admission's transaction.
  const openJobGroups: OpenJobGroups = async (tx, orgId) => {
    const [jobs, projections] = await Promise.all([
      queue.openJobCount(orgId, { tx }),
      countOpenProjectionJobs(tx, orgId),
    ]);
    return jobs + projections;
  };
  return { waits, queue, openJobGroups };
}

/**
 * The projection job kind: its use cases, and its worker for processes that run work (roles worker and
 * all, src/server.ts), both on the job system's waits.
 */
function makeProjectionParts(
  config: Config,
  deps: Omit<ProjectionDeps, 'attachJob' | 'holdTtlSeconds' | 'waits'> & {
    waits: JobWaits;
    idempotency: IdempotencyStore;
    events: ProjectionEvents;
  },
) {
  const { idempotency, ...shared } = deps;
  const projections = makeProjectionService({
    ...shared,
    attachJob: idempotency.attachJob,
    holdTtlSeconds: config.HOLD_TTL_SECONDS,
  });
  const startWorker = (options: {
    runSeasons: RunSeasons;
    workerId: string;
    logger?: WorkerLogger | undefined;
  }) =>
    startProjectionWorker({
      sql: deps.sql,
      ledger: deps.ledger,
      events: deps.events,
      clock: deps.clock,
      holdTtlSeconds: config.HOLD_TTL_SECONDS,
      waits: deps.waits,
      ...options,
    });
  return { projections, startProjectionWorker: startWorker };
}

export function makeServiceGraph(options: ServiceGraphOptions) {
  const { config, db, clock, counters, metrics } = options;
  const sql = db.sql;
  const { outbox, webhooks, startDeliverer, projectionEvents } = makeWebhookParts(config, sql, clock);
  const ledger = makeLedger({ sql, clock, balanceWatch: outbox });
  const { waits, queue, openJobGroups } = makeJobSystem(config, db, { ledger, clock, events: outbox });
  // The results rows this process has read or written: its deliveries and its worker share them.
  const knownResults = makeKnownResults();
  const usage = makeUsageLimits({ sql, counters, clock });
  const idempotency = makeIdempotencyStore({ sql, clock });
  const sweeper = makeSweeper(config, { sql, ledger, clock, idempotency });
  const fixtureCache = lazyFixtureCache(db, options.fixtureCacheTtlMs);
  const simulations = makeSimulationService({
    sql,
    ledger,
    queue,
    knownResults,
    usage,
    fixtures: {
      fixture: async (fixtureId) => (await fixtureCache.get()).fixture(fixtureId),
      freshnessFacts: async (fixtureIds) => (await fixtureCache.get()).freshnessFacts(fixtureIds),
    },
    attachJob: idempotency.attachJob,
    engine: engineGate(config.ENGINE, options.engine, queue.queuedDraws),
    clock,
    onCharged: (milli) => metrics.addCreditsCharged(milli, 'simulation'),
    onSummariesChanged: () => fixtureCache.made()?.summariesChanged(),
    openJobGroups,
    queueBound: options.queueBound ?? QUEUE_BOUND,
  });
  const { projections, startProjectionWorker } = makeProjectionParts(config, {
    sql,
    ledger,
    openJobGroups,
    usage,
    idempotency,
    clock,
    waits,
    events: projectionEvents,
    onCharged: (milli) => metrics.addCreditsCharged(milli, 'projection'),
  });
  const services: Services = {
    ledger,
    simulations,
    projections,
    usage,
    idempotency,
    expectedLineups: makeExpectedLineupSales({
      sql,
      ledger,
      clock,
      onCharged: (milli) => metrics.addCreditsCharged(milli, 'expected_lineup'),
    }),
    operator: makeOperator({ sql, ledger, clock }),
    webhooks,
    fixtureCache: fixtureCache.get,
    ...(options.engine ? { engineHealth: () => options.engine!.health() } : {}),
  };
  metrics.watch({
    queueDepth: queue.depth,
    holdsOpen: ledger.openHolds,
    ...(options.engine ? { engine: () => options.engine!.health() } : {}),
  });
  const onJobFinished = observeFinishedJobs(metrics);
  return {
    ledger,
    queue,
    knownResults,
    usage,
    idempotency,
    sweeper,
    simulations,
    services,
    onJobFinished,
    startDeliverer,
    startProjectionWorker,
    projectionEvents,
  };
}

export type ServiceGraph = ReturnType<typeof makeServiceGraph>;

/** What a worker reports of each finished job, into the job metrics. */
function observeFinishedJobs(metrics: Metrics) {
  return ({ job, outcome, run }: JobFinished) =>
    metrics.observeJob(
      outcome,
      run && {
        engine: run.engine,
        runSeconds: run.runMs / 1000,
        gpuSeconds: run.gpuMs / 1000,
        draws: job.draws,
      },
    );
}
