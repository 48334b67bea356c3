// The Fastify application: cross-cutting concerns (request ids, auth, rate limits, errors, metrics,
// OpenAPI) live here and in their plugins; each resource's routes live in routes/<resource>.ts.

import type { IncomingMessage, ServerResponse } from 'node:http';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  LogController,
  type RawServerDefault,
} from 'fastify';
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Redis } from 'ioredis';
import { makeKeyCache } from '../accounts/key-cache.js';
import type { Scope } from '../accounts/keys.js';
import type { Config } from '../config.js';
import type { Database } from '../db/connection.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { type LimitName, limitsFor } from '../limits/plans.js';
import type { WindowCounter } from '../limits/window-counter.js';
import { type AuthContext, makeAuthenticator } from './auth.js';
import { installErrorHandling } from './error-handler.js';
import type { Metrics } from './metrics.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerCreditRoutes } from './routes/credits.js';
import { registerDocsRoutes } from './routes/docs.js';
import { registerFixtureRoutes } from './routes/fixtures.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerSimulationRoutes } from './routes/simulations.js';
import type { Services } from './services.js';

export type RateGroup = 'data' | 'simulations';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
    /** The JSON body as received: idempotency and the loop guard compare exact bytes. */
    rawBody: string | undefined;
  }
  interface FastifyContextConfig {
    /** Who may call: anyone (docs, health), an API key, or an operator with ADMIN_TOKEN. */
    access?: 'public' | 'api' | 'admin';
    /** Scope the API key must hold; none for credits and fixtures (decisions 1). */
    scope?: Scope;
    /** Which per-minute limit the route counts against (decisions 3). */
    rateGroup?: RateGroup;
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
  /** Shared store of the per-minute limits when several API processes run (REDIS_URL). */
  redis?: Redis | undefined;
  logger?: boolean | { level: string };
}

/** Bodies larger than this are refused before parsing. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

const RATE_LIMIT_BY_GROUP: Record<RateGroup, LimitName> = {
  data: 'data_rpm',
  simulations: 'simulations_rpm',
};

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config } = deps;
  const app = Fastify({
    logger: deps.logger ?? { level: config.LOG_LEVEL },
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY,
    genReqId: () => newId('req', 24),
    requestIdHeader: false,
    // One structured line per request comes from the onResponse hook below.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('auth', null);
  app.decorateRequest('rawBody', undefined);
  // JSON only (decisions 9): any other content type is refused as parameter_invalid.
  app.removeContentTypeParser(['text/plain', 'application/json']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    request.rawBody = text;
    if (text.trim() === '') {
      done(
        new ApiError('parameter_missing', { message: 'The body is empty; send a JSON object.' }),
        undefined,
      );
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ApiError('parameter_invalid', { message: 'The body is not valid JSON.' }), undefined);
    }
  });
  installErrorHandling(app, config.docsUrl);

  const keyCache = await makeKeyCache(deps.db);
  app.addHook('onClose', () => keyCache.close());
  const authenticator = makeAuthenticator({
    keys: keyCache,
    counters: deps.counters,
    clock: deps.clock,
    adminToken: config.ADMIN_TOKEN,
  });

  app.addHook('onRequest', async (request) => {
    const routeConfig = request.routeOptions.config;
    if (routeConfig.access === 'api') {
      request.auth = await authenticator.authenticate(request, routeConfig.scope ?? null);
    } else if (routeConfig.access === 'admin') {
      authenticator.authenticateAdmin(request);
    }
  });

  app.addHook('onSend', async (request, reply) => {
    reply.header('Request-Id', request.id);
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.observeRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    request.log.info(
      {
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        org_id: request.auth?.org.id,
      },
      'request',
    );
  });

  // Per-minute limits keyed by organisation, after authentication (STACK.md: preHandler-side hook).
  await app.register(rateLimit, {
    global: true,
    hook: 'preValidation',
    timeWindow: 60_000,
    ...(deps.redis ? { redis: deps.redis, nameSpace: 'matchsim:rpm:' } : {}),
    allowList: (request) => !request.auth || !request.routeOptions.config.rateGroup,
    keyGenerator: (request) => `${request.auth?.org.id}:${request.routeOptions.config.rateGroup}`,
    max: (request) => {
      const group = request.routeOptions.config.rateGroup;
      if (!request.auth || !group) return Number.MAX_SAFE_INTEGER;
      return limitsFor(request.auth.org)[RATE_LIMIT_BY_GROUP[group]];
    },
    addHeadersOnExceeding: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
    },
    errorResponseBuilder: (request, context) => {
      const group = request.routeOptions.config.rateGroup ?? 'data';
      const rule = RATE_LIMIT_BY_GROUP[group];
      const error = new ApiError('rate_limited', {
        message: `More than ${context.max} requests per minute (${rule}).`,
        rule,
        reason: `${rule} is ${context.max} per minute for this organisation`,
        retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)),
      });
      return Object.assign(error, { statusCode: 429 });
    },
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'matchsim',
        version: '2.0.0',
        description: 'Credit-metered football match simulation. See /docs for every endpoint and error code.',
      },
      servers: [{ url: config.baseUrl }],
      components: {
        securitySchemes: {
          ApiKeyAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'Authorization: Bearer ms_live_… or ms_test_…',
          },
        },
      },
      security: [{ ApiKeyAuth: [] }],
    },
    transform: jsonSchemaTransform,
  });

  registerHealthRoutes(app, deps);
  registerDocsRoutes(app, deps);
  registerCreditRoutes(app, deps);
  registerAdminRoutes(app, deps, keyCache);
  registerSimulationRoutes(app, deps, deps.services.simulations);
  registerFixtureRoutes(app, deps);

  await app.ready();
  return app;
}
