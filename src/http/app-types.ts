// The types every part of the HTTP layer shares: the app, what it is built from, and what a route's
// config says about access, scope and rate group. Kept apart from app.ts so routes do not import it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Caller } from '../accounts/caller.js';
import type { Scope } from '../accounts/keys.js';
import type { Config } from '../config.js';
import type { Database } from '../db/connection.js';
import type { ErrorCode } from '../errors.js';
import type { WindowCounter } from '../limits/window-counter.js';
import type { Metrics } from './metrics.js';
import type { Lifecycle } from './readiness.js';
import type { RouteFacts } from './route-of.js';
import type { Services } from './services.js';

export type RateGroup = 'data' | 'simulations';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller of an `api` route; null elsewhere. */
    auth: Caller | null;
    /** The JSON body as received: idempotency and the loop guard compare exact bytes. */
    rawBody: string | undefined;
    /** The route's url and config, read once (route-of.ts); null until first asked. */
    route: RouteFacts | null;
  }
  interface FastifyContextConfig {
    /** Who may call: anyone (docs, health), an API key, or an operator with ADMIN_TOKEN. */
    access?: 'public' | 'api' | 'admin';
    /** Scope the API key must hold; none for credits and fixtures (docs/decisions.md §1). */
    scope?: Scope;
    /** Which per-minute limit the route counts against (docs/decisions.md §3). */
    rateGroup?: RateGroup;
    /**
     * A route that submits or quotes work: the same request repeated too often within seconds is refused
     * with 429 loop_guard before its handler runs (docs/decisions.md §3; app.ts installLoopGuard).
     */
    loopGuard?: boolean;
    /** An operators' probe (/healthz, /readyz, /metrics): answered under back-pressure and while closing. */
    probe?: boolean;
    /**
     * Error codes this route answers beyond those its access, scope, rate group and input imply
     * (src/http/openapi/route-errors.ts); they become its documented 4xx/5xx responses.
     */
    errors?: readonly ErrorCode[];
  }
}

export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>;

export interface AppDeps {
  config: Config;
  db: Database;
  clock: () => Date;
  counters: WindowCounter;
  metrics: Metrics;
  services: Services;
  logger?: boolean | { level: string };
  /** The process's logger (src/logger.ts); takes precedence over `logger`. */
  loggerInstance?: FastifyBaseLogger | undefined;
  /** Readiness and shutdown state shared with src/server.ts; a fresh one when absent. */
  lifecycle?: Lifecycle | undefined;
  /** How often the event-loop delay is sampled for back-pressure (tests shorten it). */
  pressureSampleMs?: number | undefined;
}
