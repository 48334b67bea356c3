// Liveness/readiness and Prometheus metrics for operators; no authentication.
import { z } from 'zod';
import type { App, AppDeps } from '../app-types.js';

const healthSchema = z.object({
  status: z.enum(['ok', 'degraded', 'unavailable']),
  database: z.enum(['ok', 'unavailable']),
  database_kind: z.enum(['server', 'embedded']),
  engine: z.record(z.string(), z.unknown()),
});

export function registerHealthRoutes(app: App, deps: AppDeps) {
  app.get(
    '/healthz',
    {
      config: { access: 'public' },
      schema: {
        hide: true,
        response: { 200: healthSchema, 503: healthSchema },
      },
    },
    async (_request, reply) => {
      let database: 'ok' | 'unavailable' = 'ok';
      try {
        await deps.db.sql`SELECT 1`;
      } catch {
        database = 'unavailable';
      }
      const engine = deps.services.engineHealth?.() ?? { state: 'not_started' };
      const engineOk = engine.state !== 'unavailable';
      const status = database !== 'ok' ? 'unavailable' : engineOk ? 'ok' : 'degraded';
      return reply.code(database === 'ok' ? 200 : 503).send({
        status,
        database,
        database_kind: deps.db.kind,
        engine,
      });
    },
  );

  app.get('/metrics', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(deps.metrics.render());
  });
}
