// A server process for the HTTP benchmark: `bare` is a plain Fastify JSON route (the reference);
// `service` is the real app over the configured database with one demo organisation.
import Fastify from 'fastify';
import { makeOperator } from '../src/accounts/operations.js';
import { makeLedger } from '../src/billing/ledger.js';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { makeMetrics } from '../src/http/metrics.js';
import { makeMemoryWindowCounter } from '../src/limits/window-counter.js';
import { openServiceDatabase } from '../src/server.js';

const mode = process.argv[2];
if (mode === 'bare') {
  const app = Fastify({ logger: false });
  app.get('/v1/credits', async () => ({
    object: 'credit_balance',
    livemode: true,
    total: 2500,
    usage_tier: 2,
  }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
} else {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1' });
  const db = await openServiceDatabase(config);
  const clock = () => new Date();
  const ledger = makeLedger({ sql: db.sql, clock });
  const operator = makeOperator({ sql: db.sql, ledger, clock });
  // A benchmark organisation whose per-minute limits do not cap the measurement.
  const org = await operator.createOrg({
    name: 'Benchmark',
    plan: 'pro',
    limits: { data_rpm: 1_000_000_000, simulations_rpm: 1_000_000_000 },
  });
  const key = await operator.createKey({ orgId: org.org_id, mode: 'live' });
  const app = await buildApp({
    config,
    db,
    clock,
    counters: makeMemoryWindowCounter(),
    metrics: makeMetrics(),
    services: { ledger },
    logger: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  process.send?.({
    port: typeof address === 'object' && address ? address.port : 0,
    secret: key.secret,
    database: db.kind,
  });
}
