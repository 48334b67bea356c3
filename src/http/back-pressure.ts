// Refusals that protect the process rather than judge the request, answered before authentication so
// they cost almost nothing: 503 `dependency_unavailable` with Retry-After (docs/api.md §7) when the event
// loop lags past MAX_EVENT_LOOP_DELAY_MS (@fastify/under-pressure), and while the listener closes during a
// shutdown (with `Connection: close`, so the client's next try opens a connection to another instance).
// Operators' probes are never refused. The queue's own bound is the admission check of
// src/simulations/admission.ts (`engine_overloaded`), because only submissions add to the queue.
import underPressure from '@fastify/under-pressure';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { App, AppDeps } from './app-types.js';
import type { Lifecycle } from './readiness.js';
import { routeOf } from './route-of.js';

/** Retry advice of a refusal for event-loop delay: a second or two lets a burst pass. */
const PRESSURE_RETRY_AFTER_SECONDS = 2;
/** Retry advice while closing: another instance (or this one's successor) takes the retry at once. */
const CLOSING_RETRY_AFTER_SECONDS = 1;

export async function installBackPressure(app: App, deps: AppDeps, lifecycle: Lifecycle): Promise<void> {
  app.addHook('onRequest', (request, reply, done) => {
    if (!lifecycle.closing || routeOf(request).config.probe) return done();
    deps.metrics.countRefusal('shutting_down');
    reply.header('Connection', 'close');
    done(
      new ApiError('dependency_unavailable', {
        message: 'This instance is shutting down; retry the request.',
        retryAfterSeconds: CLOSING_RETRY_AFTER_SECONDS,
      }),
    );
  });
  // From the readiness flip on, every answer ends its connection: clients then hold no idle keep-alive
  // connection to this instance when the listener closes, which would race a request sent on it just
  // as the server drops idle connections (the client would see a reset, not an answer).
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (lifecycle.draining) reply.header('Connection', 'close');
    done(null, payload);
  });

  const maxEventLoopDelay = deps.config.MAX_EVENT_LOOP_DELAY_MS;
  if (maxEventLoopDelay <= 0) return;
  await app.register(underPressure, {
    maxEventLoopDelay,
    ...(deps.pressureSampleMs ? { sampleInterval: deps.pressureSampleMs } : {}),
    // Returning a rejected promise hands the refusal to the error handler (the error object of §7).
    pressureHandler: (request: FastifyRequest, _reply: FastifyReply, type: string, value?: number) => {
      if (routeOf(request).config.probe) return undefined;
      deps.metrics.countRefusal('event_loop_delay');
      request.log.warn({ pressure: type, value }, 'refused under pressure');
      return Promise.reject(
        new ApiError('dependency_unavailable', {
          message: 'The service is overloaded; retry shortly.',
          retryAfterSeconds: PRESSURE_RETRY_AFTER_SECONDS,
        }),
      );
    },
  });
}
