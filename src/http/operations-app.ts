// The operators' listener on METRICS_PORT: /metrics without authentication (keep the port off the
// public network), /healthz and /readyz. Every role serves it when METRICS_PORT is set, so worker
// processes, which have no API, expose their metrics and probes too.
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { App } from './app-types.js';
import { type ProbeDeps, registerHealthRoutes } from './routes/health.js';

export async function buildOperationsApp(deps: ProbeDeps, logger: FastifyBaseLogger): Promise<App> {
  const app = Fastify({
    // Scrapes and probes every few seconds would drown the request log; failures still log.
    loggerInstance: logger.child({ listener: 'operations' }, { level: 'warn' }),
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerHealthRoutes(app, deps, 'public');
  await app.ready();
  return app;
}
