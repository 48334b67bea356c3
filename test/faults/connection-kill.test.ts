// Fault test: the database goes away under the API (issue 17). Every route answers 503 with the error
// object and retry advice (Retry-After, docs/api.md §7), never 500, while the database is unreachable, and
// works again once it is back; pg_terminate_backend under load gives 503s or answers, never a 500, and
// the ledger balances; a delivery whose connection is terminated answers settlement_unknown naming its
// job and result URL, and that URL then delivers once; keyed cache hits under pg_terminate_backend are
// charged exactly what their answers report, and a retry with the same key never meets a request that
// has already ended still in flight (issue 33, items 1 and 2).
// The service reaches its database through a TCP proxy the test can cut. Real PostgreSQL only: PGlite
// has one in-process connection that cannot be cut or terminated.
import { connect, createServer, type Server, type Socket } from 'node:net';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { type Database, openDatabase } from '../../src/db/connection.js';
import { errorResponseSchema } from '../../src/http/schemas/common.js';
import { FX, NOW, smallFeed } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase, throughProxy, usingServer } from '../helpers/database.js';

if (!usingServer) {
  console.info(
    'connection kills: skipped, they need a PostgreSQL server (set DATABASE_URL); PGlite cannot lose a connection',
  );
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

/**
 * A TCP proxy to the database that can go down as a database host does: its connections cut and new
 * ones refused (nothing listens on its port), until it is restored on the same port.
 */
interface DatabaseProxy {
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

async function startProxy(databaseUrl: string): Promise<DatabaseProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  await listen(0);
  const port = (server.address() as { port: number }).port;
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    async cut() {
      const closing = stop();
      for (const socket of sockets) socket.destroy();
      await closing;
    },
    restore: () => listen(port),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}

let t: TestContext;
let proxy: DatabaseProxy;
let direct: TestDatabase;
let admin: postgres.Sql;
let live: { orgId: string; auth: { authorization: string } };
let succeeded: Array<{ job_id: string; reservation_id: string; result_url: string }>;
let batchId: string;

/**
 * The ledger audited over a connection of its own: after terminations the service's pool may still hold
 * connections the server closed, which the next statement on each discovers.
 */
async function auditLedger(check: (ledger: ReturnType<typeof makeLedger>) => Promise<void>) {
  const fresh: Database = await openDatabase({ databaseUrl: direct.url!, max: 1 });
  try {
    await check(makeLedger({ sql: fresh.sql }));
  } finally {
    await fresh.close();
  }
}

async function waitUntil(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 800; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  if (!usingServer) return;
  direct = await createTestDatabase();
  proxy = await startProxy(direct.url!);
  const database = await throughProxy(direct, proxy, 10);
  // Every route's own database work is what fails: no fixture record answered from the read cache.
  t = await createFeedTestContext({ worker: true, database, fixtureCacheTtlMs: 0 });
  live = await t.newOrg();
  admin = postgres(direct.url!, { max: 1, onnotice: () => {} });
  succeeded = [];
  for (const fixture_id of [FX.upcoming, FX.unlabelled, FX.announced]) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations',
      headers: live.auth,
      payload: { fixture_id, draws: 300, wait_seconds: 0 },
    });
    succeeded.push(response.json());
  }
  for (const job of succeeded) {
    await waitUntil(
      async () => (await t.graph.queue.get(job.job_id))?.status === 'succeeded',
      'a finished job',
    );
  }
  await t.stopWorker();
  const batch = await t.app.inject({
    method: 'POST',
    url: '/v1/simulations/batch',
    headers: live.auth,
    payload: { fixtures: [{ fixture_id: FX.upcoming }], draws: 200 },
  });
  batchId = batch.json().batch_id;
}, 120_000);

afterAll(async () => {
  if (!usingServer) return;
  await admin.end({ timeout: 5 });
  await t.close();
});

/** A request of every route, API and admin, as a client would send it. */
function everyRoute(): Array<{
  method: 'GET' | 'POST' | 'PATCH';
  url: string;
  admin?: true;
  payload?: Json;
}> {
  const job = succeeded[1]!;
  return [
    { method: 'GET', url: '/v1/credits' },
    { method: 'GET', url: '/v1/fixtures' },
    { method: 'GET', url: `/v1/fixtures/${FX.upcoming}/squads` },
    { method: 'GET', url: `/v1/fixtures/${FX.upcoming}/expected-lineup` },
    { method: 'POST', url: '/v1/simulations/quote', payload: { fixture_id: FX.upcoming } },
    {
      method: 'POST',
      url: '/v1/simulations',
      payload: { fixture_id: FX.upcoming, draws: 100, wait_seconds: 0 },
    },
    { method: 'POST', url: '/v1/simulations/batch', payload: { fixtures: [{ fixture_id: FX.upcoming }] } },
    { method: 'GET', url: `/v1/simulations/batch/${batchId}` },
    { method: 'GET', url: job.result_url },
    { method: 'POST', url: '/admin/v1/orgs', admin: true, payload: { name: 'Cut', plan: 'pro' } },
    { method: 'GET', url: `/admin/v1/orgs/${live.orgId}`, admin: true },
    { method: 'PATCH', url: `/admin/v1/orgs/${live.orgId}`, admin: true, payload: { name: 'Renamed' } },
    { method: 'POST', url: `/admin/v1/orgs/${live.orgId}/keys`, admin: true, payload: { mode: 'test' } },
    { method: 'POST', url: '/admin/v1/keys/key_none/revoke', admin: true },
    { method: 'POST', url: `/admin/v1/orgs/${live.orgId}/topups`, admin: true, payload: { credits: 1 } },
    { method: 'POST', url: '/admin/v1/feed', admin: true, payload: smallFeed() as unknown as Json },
  ];
}

function send(request: ReturnType<typeof everyRoute>[number], headers: Json = {}) {
  const authorization = request.admin ? `Bearer ${t.adminToken}` : live.auth.authorization;
  return t.app.inject({
    method: request.method,
    url: request.url,
    headers: { authorization, ...headers },
    ...(request.payload ? { payload: request.payload } : {}),
  });
}

function expectUnavailable(response: { statusCode: number; body: string; headers: Json }, where: string) {
  // A 500's cause is in the app's error log, under the request's id.
  const cause = response.statusCode === 503 ? [] : t.serverErrors(String(response.headers['request-id']));
  expect(response.statusCode, [`${where}: ${response.body}`, ...cause].join('\n')).toBe(503);
  const error = errorResponseSchema.parse(JSON.parse(response.body)).error;
  expect(['dependency_unavailable', 'settlement_unknown'], where).toContain(error.code);
  expect(Number(response.headers['retry-after']), where).toBeGreaterThan(0);
  expect(error.retry).toMatchObject({
    retryable: true,
    strategy: 'backoff_with_jitter',
    idempotency_key: 'same',
  });
  expect(error.request_id).toBe(response.headers['request-id']);
  return error;
}

describe.skipIf(!usingServer)('the database connection lost under the API', () => {
  it('every route answers 503 with retry advice while the database is unreachable, then works again', async () => {
    for (const request of everyRoute()) {
      const where = `${request.method} ${request.url}`;
      // The key is in the authenticator's cache, so the route's own database work is what fails.
      expect((await t.app.inject({ method: 'GET', url: '/v1/credits', headers: live.auth })).statusCode).toBe(
        200,
      );
      await proxy.cut();
      try {
        expectUnavailable(await send(request), where);
        expectUnavailable(
          await send(request, { 'idempotency-key': `cut-${request.url}` }),
          `${where} (keyed)`,
        );
      } finally {
        await proxy.restore();
      }
    }
    for (const request of everyRoute()) {
      const response = await send(request);
      expect(response.statusCode, `${request.method} ${request.url} after: ${response.body}`).toBeLessThan(
        500,
      );
    }
    await auditLedger(async (ledger) => expect(await ledger.findUnbalancedAccounts()).toEqual([]));
  }, 120_000);

  it('a delivery whose connection is terminated answers settlement_unknown with its job and result URL', async () => {
    const job = succeeded[2]!;
    const [row] = await admin<{ resultId: number; orgId: string }[]>`
      SELECT result_id AS "resultId", org_id AS "orgId" FROM jobs WHERE id = ${job.job_id}`;
    // An uncommitted delivery row of the same job makes the settlement wait at its own insert.
    let release!: () => void;
    const blocking = new Promise<void>((resolve) => {
      release = resolve;
    });
    let blocked!: () => void;
    const inPlace = new Promise<void>((resolve) => {
      blocked = resolve;
    });
    const blockerSql = postgres(direct.url!, { max: 1, onnotice: () => {} });
    const blocker = blockerSql
      .begin(async (tx) => {
        await tx`
          INSERT INTO deliveries (id, org_id, job_id, result_id, mode, created_at)
          VALUES ('sim_blocker', ${row!.orgId}, ${job.job_id}, ${row!.resultId}, 'live', now())`;
        blocked();
        await blocking;
        throw new Error('roll the blocker back');
      })
      .catch(() => {});
    await inPlace;
    const answer = t.app.inject({ method: 'GET', url: job.result_url, headers: live.auth });
    await waitUntil(async () => {
      const [waiting] = await admin<{ pid: number }[]>`
        SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO deliveries%'`;
      if (waiting) await admin`SELECT pg_terminate_backend(${waiting.pid})`;
      return Boolean(waiting);
    }, 'the settlement to wait at its delivery row');
    const response = await answer;
    release();
    await blocker;
    await blockerSql.end({ timeout: 5 });
    const error = expectUnavailable(response, 'result path');
    expect(error.code).toBe('settlement_unknown');
    expect(error.credit_effect).toBe('unknown');
    expect(error.recovery).toMatchObject({
      job_id: job.job_id,
      reservation_id: job.reservation_id,
      result_url: job.result_url,
    });
    // The result URL gives the one true outcome: delivered now, charged once.
    const retry = await t.app.inject({
      method: 'GET',
      url: error.recovery!.result_url as string,
      headers: live.auth,
    });
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json().credits_charged).toBe(0.3);
    const [charges] = await admin<{ n: number }[]>`
      SELECT count(*)::int AS n FROM credit_ledger WHERE kind = 'charge' AND hold_id = ${job.reservation_id}`;
    expect(charges!.n).toBe(1);
    await auditLedger(async (ledger) => expect((await ledger.checkBalanced(live.orgId)).balanced).toBe(true));
  }, 60_000);

  /** Rounds of terminations under the keyed cache hits, 500 ms apart: about 8 s of them. */
  const KILL_ROUNDS = 16;

  it('pg_terminate_backend under keyed cache hits: every charge is reported by an answer, none said not_charged', async () => {
    // Issue 33, item 1: clients submitting cache hits with distinct Idempotency-Keys while the service's
    // connections are terminated; each retries a 503 with the same key until it gets an answer. What the
    // answers report charged is what the organisations were charged, and a 409 in-flight conflict after
    // the first attempt has ended never comes.
    const clients = await Promise.all(
      Array.from({ length: 6 }, () => t.newOrg({ limits: { simulations_rpm: 100_000 } })),
    );
    // A bounded number of rounds, not "until the clients finish": on a slow, loaded machine a request can
    // take longer than the gap between rounds, and terminations without end would keep every attempt
    // failing (each retry then meets the loop guard's 10-second lock) until the test's timeout.
    let stop = false;
    let terminated = 0;
    const killer = (async () => {
      for (let round = 0; round < KILL_ROUNDS && !stop; round++) {
        const rows = await admin<{ ok: boolean }[]>`
          SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()`;
        terminated += rows.filter((row) => row.ok).length;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    const reported = new Map<string, number>();
    let waited = 0;
    const answers = new Map<string, number>();
    const client = async (org: (typeof clients)[number], c: number) => {
      for (let i = 0; i < 12; i++) {
        const request = {
          method: 'POST' as const,
          url: '/v1/simulations',
          headers: { authorization: org.auth.authorization, 'idempotency-key': `hit-${c}-${i}` },
          // Each body its own (the loop guard counts identical ones); the result is the same cached one.
          payload: { fixture_id: FX.upcoming, draws: 300, metadata: { n: String(i) } },
        };
        const seen: string[] = [];
        for (let attempt = 0; ; attempt++) {
          const hung = setTimeout(() => console.info(`hung: ${c}/${i} after ${seen.join(' | ')}`), 15_000);
          const response = await t.app.inject(request);
          clearTimeout(hung);
          const code = response.statusCode === 200 ? '200' : response.json().error?.code;
          answers.set(code, (answers.get(code) ?? 0) + 1);
          seen.push(`${code}:${response.statusCode === 503 ? response.json().error.message : ''}`);
          expect(code, `${seen.join(' | ')}\n${t.serverErrors().slice(-6).join('\n')}`).not.toBe(
            'idempotency_conflict',
          );
          if (response.statusCode === 200) {
            reported.set(org.orgId, (reported.get(org.orgId) ?? 0) + response.json().credits_charged * 1000);
            break;
          }
          expect(attempt, response.body).toBeLessThan(50);
          if (code === 'loop_guard') {
            // Eight tries of one request within 10 seconds: wait the burst out (Retry-After), as a client
            // would. The service's clock is pinned (createFeedTestContext), so the wait is the clock moved
            // on by it: a real sleep would leave the lock in force for ever.
            waited += Number(response.headers['retry-after']) * 1000 + 1;
            t.setNow(new Date(NOW.getTime() + waited));
            continue;
          }
          expectUnavailable(response, `POST /v1/simulations ${c}/${i}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    };
    await Promise.all(clients.map(client));
    stop = true;
    await killer;
    console.info(
      `connection kills: ${terminated} backends terminated under keyed cache hits; answers ${JSON.stringify(Object.fromEntries(answers))}`,
    );
    expect(terminated).toBeGreaterThan(0);
    for (const org of clients) {
      const [row] = await admin<{ milli: number }[]>`
        SELECT COALESCE(sum(amount), 0)::int AS milli FROM credit_ledger WHERE org_id = ${org.orgId} AND kind = 'charge'`;
      expect(Math.round(reported.get(org.orgId) ?? 0), org.orgId).toBe(row!.milli);
      expect(row!.milli).toBe(12 * 300);
    }
    await auditLedger(async (ledger) => expect(await ledger.findUnbalancedAccounts()).toEqual([]));
  }, 180_000);

  it('pg_terminate_backend under load: answers or 503s, never a 500, and the ledger balances', async () => {
    const requests = everyRoute().filter((request) => !request.url.startsWith('/admin/v1/feed'));
    const statuses = new Map<number, number>();
    let stop = false;
    let terminated = 0;
    const killer = (async () => {
      while (!stop) {
        const rows = await admin<{ ok: boolean }[]>`
          SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()`;
        terminated += rows.filter((row) => row.ok).length;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const client = async (offset: number) => {
      for (let i = 0; i < 60; i++) {
        const request = requests[(offset + i) % requests.length]!;
        const response = await send(request);
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        if (response.statusCode >= 500) expectUnavailable(response, `${request.method} ${request.url}`);
      }
    };
    await Promise.all([0, 3, 6, 9, 12, 15].map(client));
    stop = true;
    await killer;
    console.info(
      `connection kills: ${terminated} backends terminated under load; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(terminated).toBeGreaterThan(0);
    expect(statuses.get(500)).toBeUndefined();
    await auditLedger(async (ledger) => expect(await ledger.findUnbalancedAccounts()).toEqual([]));
  }, 120_000);
});
