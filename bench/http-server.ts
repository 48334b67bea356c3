// A server process for the HTTP benchmarks: `bare` is a plain Fastify JSON route (the reference);
// `select` is a Fastify route that runs the credit balance's one-row SELECT through postgres.js on the
// configured database (the reference of GET /v1/credits);
// `service` is the real service (`matchsim serve --role all`: API, worker, CPU or GPU engine) over the
// configured database, with one benchmark organisation whose per-minute and daily limits do not cap
// the measurement.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { readAccount } from '../src/billing/credit-accounts.js';
import { makeLedger } from '../src/billing/ledger.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/connection.js';
import { runMigrations } from '../src/db/migrations.js';
import { ingestFeed } from '../src/fixtures/feed-loader.js';
import { makeOperator } from '../src/operations/operator.js';
import { startService } from '../src/server.js';
import { benchFeed } from './bench-feed.js';

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
} else if (mode === 'select') {
  await startSelectReference();
} else {
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: process.env.DATABASE_URL ? './data' : mkdtempSync(path.join(tmpdir(), 'matchsim-bench-')),
  });
  // BENCH_ROLE=api: a second API process beside one that already runs the worker; BENCH_ROLE=second: a
  // second API and worker process on the same PostgreSQL database as the first (it makes no data).
  const role = process.env.BENCH_ROLE;
  const service = await startService(config, role === 'api' ? 'api' : 'all');
  // A PostgreSQL database keeps what earlier runs left: jobs still open there (a run stopped before its
  // batch finished) are run beside this run's and timed as its work. Said, not refused: a section may
  // start a service while the one before winds down.
  const [open] = await service.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'running')`;
  if (open!.n > 0 && role !== 'api' && role !== 'second') {
    console.error(
      `bench: ${open!.n} jobs are queued or running in this database, left by an earlier run; ` +
        "their work is timed with this run's. Let a service finish them, or use a fresh database.",
    );
  }
  const clock = () => new Date();
  const benchFixtures = Number(process.env.BENCH_FIXTURES ?? 0);
  let fixtureIds: number[] = [];
  if (benchFixtures > 0) {
    const feed = benchFeed(benchFixtures, clock());
    await ingestFeed(service.db.sql, feed.feed, { clock });
    fixtureIds = feed.onSale;
  }
  const operator = makeOperator({
    sql: service.db.sql,
    ledger: makeLedger({ sql: service.db.sql, clock }),
    clock,
  });
  // BENCH_ORGS organisations (default 1), each with its own live key: one organisation's submissions
  // queue on its own ledger rows, so a row spread over several shows the service's rate.
  const secrets: string[] = [];
  for (let i = 0; i < Number(process.env.BENCH_ORGS ?? 1); i++) {
    secrets.push(await benchmarkOrganisation(operator, i));
  }
  const address = service.app!.server.address();
  process.send?.({
    port: typeof address === 'object' && address ? address.port : 0,
    secret: secrets[0],
    secrets,
    database: service.db.kind,
    fixtureIds,
  });
  process.on('SIGTERM', () => void service.stop().then(() => process.exit(0)));
}

/** An organisation whose per-minute and daily limits do not cap the measurement; returns a live key. */
async function benchmarkOrganisation(operator: ReturnType<typeof makeOperator>, index: number) {
  const unlimited = 1_000_000_000;
  const org = await operator.createOrg({
    name: index === 0 ? 'Benchmark' : `Benchmark ${index + 1}`,
    plan: 'pro',
    // Three 1,000 × 10,000-draw batches (30,000 credits) pass the default spend cap.
    spendCapCredits: 1_000_000,
    limits: {
      data_rpm: unlimited,
      simulations_rpm: unlimited,
      submissions_per_day: unlimited,
      batches_per_day: unlimited,
      gpu_seconds_per_day: unlimited,
      concurrent_simulations: unlimited,
    },
  });
  await operator.topUp(org.id, 1_000_000);
  return (await operator.createKey({ orgId: org.id, mode: 'live' })).secret;
}

/**
 * The reference of GET /v1/credits: the same one-row SELECT (src/billing/credit-accounts.ts readAccount)
 * through postgres.js on the same kind of database, behind a bare Fastify route with no authentication.
 */
async function startSelectReference() {
  const db = await openDatabase({
    databaseUrl: process.env.DATABASE_URL,
    dataDir: mkdtempSync(path.join(tmpdir(), 'matchsim-bench-select-')),
  });
  await runMigrations(db.sql);
  const clock = () => new Date();
  const operator = makeOperator({ sql: db.sql, ledger: makeLedger({ sql: db.sql, clock }), clock });
  const org = await operator.createOrg({ name: 'Benchmark reference', plan: 'pro' });
  await operator.topUp(org.id, 1);
  const app = Fastify({ logger: false });
  app.get('/v1/credits', async () => {
    const account = await readAccount(db.sql, org.id);
    return { object: 'credit_balance', total: Number(account?.monthlyRemaining ?? 0) / 1000 };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0, database: db.kind });
}
