// Operators' probes: liveness (/healthz), readiness (/readyz) and Prometheus metrics (/metrics). On the
// API port /metrics needs the admin token; with METRICS_PORT the probes and metrics are also served, without
// authentication, on that separate listener (src/http/operations-app.ts) and /metrics leaves the API port.
import { z } from 'zod';
import type { Database } from '../../db/connection.js';
import type { App } from '../app-types.js';
import type { Metrics } from '../metrics.js';
import { checkReadiness, type ReadinessDeps } from '../readiness.js';

const livenessSchema = z.object({
  status: z.literal('ok'),
  database_kind: z.enum(['server', 'embedded']),
  engine: z.record(z.string(), z.unknown()),
});

const readinessSchema = z.object({
  status: z.enum(['ready', 'not_ready']),
  database: z.enum(['ok', 'unavailable']),
  migrations: z.enum(['current', 'pending', 'unknown']),
  engine: z.enum(['ready', 'starting', 'unavailable', 'not_run']),
  limits: z.enum(['in_process', 'shared', 'process_fallback']),
  draining: z.boolean(),
});

export interface ProbeDeps extends ReadinessDeps {
  db: Database;
  metrics: Metrics;
}

/** How /metrics is served on this app: behind the admin token, without it, or not at all. */
export type MetricsAccess = 'admin' | 'public' | 'off';

export function registerHealthRoutes(app: App, deps: ProbeDeps, metricsAccess: MetricsAccess) {
  // Liveness answers while the process does, whatever the database or the load: a restart would not help.
  app.get(
    '/healthz',
    {
      config: { access: 'public', probe: true },
      schema: { hide: true, response: { 200: livenessSchema } },
    },
    async () => ({
      status: 'ok' as const,
      database_kind: deps.db.kind,
      engine: deps.services.engineHealth?.() ?? { state: 'not_run' },
    }),
  );

  app.get(
    '/readyz',
    {
      config: { access: 'public', probe: true },
      schema: { hide: true, response: { 200: readinessSchema, 503: readinessSchema } },
    },
    async (_request, reply) => {
      const { ready, ...checks } = await checkReadiness(deps);
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', ...checks });
    },
  );

  if (metricsAccess === 'off') return;
  app.get(
    '/metrics',
    { config: { access: metricsAccess, probe: true }, schema: { hide: true } },
    async (_request, reply) => reply.type(deps.metrics.contentType).send(await deps.metrics.render()),
  );
}
