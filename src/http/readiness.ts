// Liveness and readiness for load balancers and orchestrators. Liveness (/healthz) says the process
// answers; readiness (/readyz) says it should get traffic: the database answers, its migrations are
// current, the engine of this process (if it runs one) takes work, and no shutdown has begun. It also
// names where the limits count (`limits`): with Redis away they count per process, which keeps the
// process ready (docs/decisions.md §3, "Without Redis").
import type { Config } from '../config.js';
import type { Database } from '../db/connection.js';
import { pendingMigrations } from '../db/migrations.js';
import type { CounterStore, WindowCounter } from '../limits/window-counter.js';
import type { Services } from './services.js';

/** Where the process is in its life; src/server.ts moves it on SIGTERM. */
export interface Lifecycle {
  /** A shutdown began: /readyz answers 503 while requests and jobs drain. */
  draining: boolean;
  /** The listener is closing: requests that still arrive are refused with 503 and retry advice. */
  closing: boolean;
}

export function makeLifecycle(): Lifecycle {
  return { draining: false, closing: false };
}

export interface ReadinessDeps {
  config: Pick<Config, 'ENGINE'>;
  db: Database;
  services: Pick<Services, 'engineHealth'>;
  lifecycle: Lifecycle;
  counters: Pick<WindowCounter, 'store'>;
}

export interface Readiness {
  ready: boolean;
  database: 'ok' | 'unavailable';
  migrations: 'current' | 'pending' | 'unknown';
  engine: 'ready' | 'starting' | 'unavailable' | 'not_run';
  /** in_process (no REDIS_URL), shared (Redis answers) or process_fallback (Redis is away). */
  limits: CounterStore;
  draining: boolean;
}

/** A database that does not answer within this is unavailable for readiness (a probe must answer). */
const DATABASE_CHECK_MS = 2000;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function engineReadiness(deps: ReadinessDeps): Readiness['engine'] {
  const health = deps.services.engineHealth?.();
  if (!health) return 'not_run';
  if (health.state === 'starting') return 'starting';
  // The same rule as the admission gate (src/wiring.ts engineGate): ENGINE=gpu without a GPU takes no work.
  const gpu = health.gpu as { state?: string } | null | undefined;
  if (deps.config.ENGINE === 'gpu' && gpu?.state === 'unavailable') return 'unavailable';
  return 'ready';
}

export async function checkReadiness(deps: ReadinessDeps): Promise<Readiness> {
  let database: Readiness['database'] = 'ok';
  let migrations: Readiness['migrations'] = 'unknown';
  try {
    const pending = await withTimeout(pendingMigrations(deps.db.sql), DATABASE_CHECK_MS);
    migrations = pending.length === 0 ? 'current' : 'pending';
  } catch {
    database = 'unavailable';
  }
  const engine = engineReadiness(deps);
  const draining = deps.lifecycle.draining;
  const ready =
    database === 'ok' &&
    migrations === 'current' &&
    (engine === 'ready' || engine === 'not_run') &&
    !draining;
  return { ready, database, migrations, engine, limits: deps.counters.store(), draining };
}
