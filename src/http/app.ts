// The Fastify application: cross-cutting concerns (request ids, auth, rate limits, errors, metrics,
// OpenAPI) live here and in their plugins; each resource's routes live in routes/<resource>.ts.

import { constants as zlib } from 'node:zlib';
import compress from '@fastify/compress';
import rateLimit from '@fastify/rate-limit';
import swagger, { type SwaggerOptions } from '@fastify/swagger';
import Fastify, { LogController } from 'fastify';
import {
  createJsonSchemaTransform,
  createJsonSchemaTransformObject,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { type KeyCache, makeKeyCache } from '../accounts/key-cache.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { type LimitName, limitsFor } from '../limits/plans.js';
import type { App, AppDeps, RateGroup } from './app-types.js';
import { makeAuthenticator } from './auth.js';
import { installBackPressure } from './back-pressure.js';
import { ONE_OFF_GZIP_LEVEL } from './document-gzip.js';
import { installErrorHandling } from './error-handler.js';
import { requestBodyHash } from './idempotent.js';
import { recordDocumentedRoutes } from './openapi/documents.js';
import { isPagePath, setPageSecurityHeaders } from './page-security.js';
import { perMinuteStore } from './per-minute-store.js';
import { makeLifecycle } from './readiness.js';
import { routeOf } from './route-of.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerCreditRoutes } from './routes/credits.js';
import { registerDocsRoutes } from './routes/docs.js';
import { registerFixtureRoutes } from './routes/fixtures.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerOddsRoutes } from './routes/odds.js';
import { registerPlaygroundRoutes } from './routes/playground.js';
import { registerProjectionRoutes } from './routes/projections.js';
import { registerSimulationPathRoutes } from './routes/simulation-path.js';
import { registerSimulationReadRoutes } from './routes/simulation-reads.js';
import { registerSimulationRoutes } from './routes/simulations.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { wireSchemas } from './schemas/registry.js';
import { responseSerializerCompiler } from './serialize.js';
import { refuseTunnels, serverBounds } from './server-bounds.js';

export type { App, AppDeps } from './app-types.js';

/** Bodies larger than this are refused before parsing. */
const BODY_LIMIT_BYTES = 1024 * 1024;
/** How much of an unmatched request's path its log line keeps. */
const UNMATCHED_PATH_CHARS = 200;
/**
 * The content types compressed (docs/api.md §1: every body of 1 KiB or more): @fastify/compress's own
 * list (text but event streams, JSON, XML, octet streams) and the batch results stream's NDJSON, which
 * neither that list nor mime-db names.
 */
const COMPRESSIBLE_TYPES =
  /^text\/(?!event-stream)|[+/](?:json|x-ndjson|text|xml)(?:;|$)|octet-stream(?:;|$)/u;

const RATE_LIMIT_BY_GROUP: Record<RateGroup, LimitName> = {
  data: 'data_rpm',
  simulations: 'simulations_rpm',
};

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config } = deps;
  const lifecycle = deps.lifecycle ?? makeLifecycle();
  const app = Fastify({
    ...(deps.loggerInstance
      ? { loggerInstance: deps.loggerInstance }
      : { logger: deps.logger ?? { level: config.LOG_LEVEL } }),
    // A closing listener's requests get the error object with retry advice (back-pressure.ts).
    return503OnClosing: false,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY,
    genReqId: () => newId('req', 24),
    requestIdHeader: false,
    // One structured line per request comes from the onResponse hook (installRequestHooks).
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // Timeouts, path parameter length and framework refusals as error objects (docs/decisions.md §10).
    ...serverBounds(config),
  }).withTypeProvider<ZodTypeProvider>();
  refuseTunnels(app.server, config.docsUrl);

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializerCompiler);
  app.decorateRequest('auth', null);
  app.decorateRequest('rawBody', undefined);
  app.decorateRequest('route', null);
  installJsonParser(app);
  installErrorHandling(app, config.docsUrl);
  const keyCache = await makeKeyCache(deps.db);
  app.addHook('onClose', () => keyCache.close());
  const fixtureCache = await deps.services.fixtureCache();
  app.addHook('onClose', () => fixtureCache.close());
  await installBackPressure(app, deps, lifecycle);
  installRequestHooks(app, deps, keyCache);
  await installRateLimits(app, deps);
  installLoopGuard(app, deps);
  await app.register(swagger, openApiOptions());
  // Bodies of 1 KiB and more leave compressed when the client accepts it (docs/api.md §1): brotli at a
  // quality cheap enough to run per response, else gzip at a level chosen the same way (docs/decisions.md
  // §6, "Compression"): these bodies are compressed once each (a batch status, a result delivered once, a
  // page of NDJSON results), and zlib's default level 6 cost 2.2–2.7 times level 3 for 4–16% fewer bytes.
  // A GET carries no body, so its requests skip @fastify/compress's request-decompression hook.
  app.addHook('onRoute', (route) => {
    if (route.method === 'GET' || route.method === 'HEAD') route.decompress = false;
  });
  await app.register(compress, {
    encodings: ['br', 'gzip'],
    threshold: 1024,
    customTypes: COMPRESSIBLE_TYPES,
    brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } },
    zlibOptions: { level: ONE_OFF_GZIP_LEVEL },
  });
  const documentedRoutes = recordDocumentedRoutes(app);

  // With METRICS_PORT, /metrics is served on that listener only (src/http/operations-app.ts).
  registerHealthRoutes(app, { ...deps, lifecycle }, config.METRICS_PORT === undefined ? 'admin' : 'off');
  registerDocsRoutes(app, deps, documentedRoutes);
  registerPlaygroundRoutes(app);
  registerCreditRoutes(app, deps);
  registerAdminRoutes(app, deps, keyCache);
  registerSimulationRoutes(app, deps);
  registerSimulationReadRoutes(app, deps);
  registerSimulationPathRoutes(app, deps);
  registerProjectionRoutes(app, deps);
  registerWebhookRoutes(app, deps);
  registerFixtureRoutes(app, deps, fixtureCache);
  registerOddsRoutes(app);

  await app.ready();
  return app;
}

/** JSON only (docs/decisions.md §9): any other content type is refused as parameter_invalid. */
function installJsonParser(app: App): void {
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
}

/** Authentication by route access, the Request-Id header, and one log line and metric per request. */
function installRequestHooks(app: App, deps: AppDeps, keyCache: KeyCache): void {
  const authenticator = makeAuthenticator({
    keys: keyCache,
    counters: deps.counters,
    clock: deps.clock,
    adminToken: deps.config.ADMIN_TOKEN,
  });
  app.addHook('onRequest', async (request) => {
    const { config } = routeOf(request);
    if (config.access === 'api') {
      request.auth = await authenticator.authenticate(request, config.scope ?? null);
    } else if (config.access === 'admin') {
      await authenticator.authenticateAdmin(request);
    }
  });

  // Callback hooks where nothing is awaited: no promise per request.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('Request-Id', request.id);
    const path = request.url.split('?')[0]!;
    if (isPagePath(path)) setPageSecurityHeaders(reply, path, payload);
    done(null, payload);
  });

  app.addHook('onResponse', (request, reply, done) => {
    const { url, config } = routeOf(request);
    const route = url ?? 'unmatched';
    deps.metrics.observeRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    const line = {
      method: request.method,
      route,
      // An unmatched request's own path (no query: it may carry secrets), cut to a length any route has;
      // a matched one is named by its route.
      ...(url === undefined ? { path: request.url.split('?')[0]!.slice(0, UNMATCHED_PATH_CHARS) } : {}),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      org_id: request.auth?.org.id,
    };
    // Probes come every few seconds from load balancers and scrapers: debug, not info.
    if (config.probe) request.log.debug(line, 'request');
    else request.log.info(line, 'request');
    done();
  });
}

/** Per-minute limits keyed by organisation, after authentication (docs/decisions.md §3). */
async function installRateLimits(app: App, deps: AppDeps): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    hook: 'preValidation',
    timeWindow: 60_000,
    ...(deps.counters.store() === 'in_process' ? {} : { store: perMinuteStore(deps.counters) }),
    allowList: (request) => !request.auth || !routeOf(request).config.rateGroup,
    keyGenerator: (request) => `${request.auth?.org.id}:${routeOf(request).config.rateGroup}`,
    max: (request) => {
      const group = routeOf(request).config.rateGroup;
      if (!request.auth || !group) return Number.MAX_SAFE_INTEGER;
      return limitsFor(request.auth.org)[RATE_LIMIT_BY_GROUP[group]];
    },
    addHeadersOnExceeding: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
    },
    errorResponseBuilder: (request, context) => {
      const group = routeOf(request).config.rateGroup ?? 'data';
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
}

/**
 * docs/decisions.md §3: the same request (organisation, method, path, body bytes) repeated too often within
 * seconds is refused, on the routes whose config says loopGuard. After validation, as a handler would be,
 * and before idempotency and the use case, so a refused repeat holds and replays nothing.
 */
function installLoopGuard(app: App, deps: AppDeps): void {
  const { usage } = deps.services;
  app.addHook('preHandler', (request, _reply, done) => {
    if (!routeOf(request).config.loopGuard) return done();
    usage
      .checkLoopGuard({
        orgId: request.auth!.org.id,
        method: request.method,
        path: request.url,
        bodyHash: requestBodyHash(request.rawBody),
      })
      .then(() => done(), done);
  });
}

/**
 * @fastify/swagger builds one document from the routes' zod schemas, named ones as components
 * (src/http/schemas/registry.ts); src/http/openapi/documents.ts finishes it into the customer and admin
 * documents, with their info, servers and security.
 */
function openApiOptions(): SwaggerOptions {
  return {
    openapi: { openapi: '3.1.0', info: { title: 'matchsim', version: '2.0.0' } },
    transform: createJsonSchemaTransform({ schemaRegistry: wireSchemas }),
    transformObject: createJsonSchemaTransformObject({ schemaRegistry: wireSchemas }),
  };
}
