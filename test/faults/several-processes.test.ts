// Several processes on one PostgreSQL and one Redis, as production runs them: two `serve --role api`
// and two `serve --role worker`. The per-minute limits and the open-job limit are the organisation's,
// whichever API process answers; every job runs once (one claim) though two workers poll; every charge
// is exact and the ledger balances. Real PostgreSQL and Redis only (PGlite serves one process).
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { createTestDatabase, type TestDatabase, usingServer } from '../helpers/database.js';
import { type ServiceProcess, startServiceProcess } from '../helpers/service-process.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_TOKEN = 'several-processes-admin-token';

if (!usingServer) {
  console.info('several processes: skipped, they need a PostgreSQL server (set DATABASE_URL) and Redis');
}

let db: TestDatabase;
const processes: ServiceProcess[] = [];
let apis: [string, string];

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: db.url!,
    REDIS_URL,
    ADMIN_TOKEN,
    ENGINE: 'cpu',
    CPU_THREADS: '1',
    LOG_LEVEL: 'info',
    MATCHSIM_DEMO: 'off',
    ...extra,
  };
}

beforeAll(async () => {
  if (!usingServer) return;
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  expect(await redis.ping()).toBe('PONG');
  redis.disconnect();
  db = await createTestDatabase({ max: 2 });
  // The first API loads the demo data set (fixtures on sale); the rest start on a migrated database.
  const first = await startServiceProcess(env({ MATCHSIM_DEMO: 'on' }), ['--role', 'api']);
  processes.push(first);
  const second = await startServiceProcess(env(), ['--role', 'api']);
  processes.push(second);
  apis = [first.baseUrl, second.baseUrl];
}, 180_000);

afterAll(async () => {
  if (!usingServer) return;
  for (const service of processes) service.child.kill('SIGTERM');
  await Promise.all(processes.map((service) => service.exited));
  await db.close();
});

async function startWorkers(): Promise<void> {
  const workers = await Promise.all([
    startServiceProcess(env(), ['--role', 'worker'], 'worker running'),
    startServiceProcess(env(), ['--role', 'worker'], 'worker running'),
  ]);
  processes.push(...workers);
}

async function admin(method: string, path: string, body: object) {
  const response = await fetch(`${apis[0]}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

async function newOrg(limits: Record<string, number>) {
  const org = (await admin('POST', '/admin/v1/orgs', { name: 'Several', plan: 'pro', limits })) as {
    org_id: string;
  };
  const key = (await admin('POST', `/admin/v1/orgs/${org.org_id}/keys`, { mode: 'live' })) as {
    secret: string;
  };
  return {
    orgId: org.org_id,
    headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
  };
}

/** Request `i` goes to API process i mod 2. */
function call(i: number, headers: Record<string, string>, method: string, path: string, body?: object) {
  return fetch(`${apis[i % 2]}${path}`, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
}

let onSale: number[] = [];
async function fixturesOnSale(headers: Record<string, string>): Promise<number[]> {
  if (onSale.length > 0) return onSale;
  const list = (await (await call(0, headers, 'GET', '/v1/fixtures?limit=200')).json()) as {
    data: Array<{ fixture_id: number; freshness: { status: string } }>;
  };
  onSale = list.data.filter((f) => f.freshness.status === 'fresh').map((f) => f.fixture_id);
  expect(onSale.length).toBeGreaterThan(3);
  return onSale;
}

describe.skipIf(!usingServer)('two API and two worker processes on one PostgreSQL and Redis', () => {
  it('share the per-minute limit: the sixth request across both APIs is refused, whichever answers', async () => {
    const { headers } = await newOrg({ simulations_rpm: 5 });
    const fixtures = await fixturesOnSale(headers);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const response = await call(i, headers, 'POST', '/v1/simulations/quote', { fixture_id: fixtures[0] });
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
  });

  it('share the open-job limit: a third open job is refused, whichever API it reaches', async () => {
    const { headers } = await newOrg({ concurrent_simulations: 2 });
    const fixtures = await fixturesOnSale(headers);
    // No worker runs yet: the accepted jobs stay open.
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const response = await call(i, headers, 'POST', '/v1/simulations', {
        fixture_id: fixtures[i],
        draws: 500 + i,
        wait_seconds: 0,
      });
      answers.push({
        status: response.status,
        body: (await response.json()) as { error?: { code: string } },
      });
    }
    expect(answers.map((a) => a.status)).toEqual([202, 202, 429]);
    expect(answers[2]!.body.error?.code).toBe('concurrency_limited');
  });

  it('run every job once across two workers and charge each delivery exactly once', async () => {
    const { orgId, headers } = await newOrg({});
    const fixtures = await fixturesOnSale(headers);
    const jobs: Array<{ result_url: string; job_id: string }> = [];
    for (let i = 0; i < 12; i++) {
      const response = await call(i, headers, 'POST', '/v1/simulations', {
        fixture_id: fixtures[i % fixtures.length],
        draws: 1000 + i,
        wait_seconds: 0,
      });
      expect(response.status).toBe(202);
      jobs.push((await response.json()) as { result_url: string; job_id: string });
    }
    await startWorkers();
    // Each result path read through both APIs until delivered; the second read is a free replay.
    let charged = 0;
    for (const [i, job] of jobs.entries()) {
      for (let attempt = 0; ; attempt++) {
        const response = await call(i, headers, 'GET', job.result_url);
        const body = (await response.json()) as { credits_charged?: number };
        if (response.status === 200) {
          charged += Math.round(body.credits_charged! * 1000);
          break;
        }
        expect(response.status).toBe(202);
        expect(attempt).toBeLessThan(600);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const replay = await call(i + 1, headers, 'GET', job.result_url);
      expect(((await replay.json()) as { credits_charged: number }).credits_charged).toBe(0);
    }
    const expected = jobs.reduce((sum, _job, i) => sum + 1000 + i, 0);
    expect(charged).toBe(expected);
    const [row] = await db.sql<{ claims: number; delivered: number; charges: number; milli: number }[]>`
      SELECT (SELECT sum(attempts)::int FROM jobs WHERE org_id = ${orgId}) AS claims,
             (SELECT count(*)::int FROM jobs WHERE org_id = ${orgId} AND status = 'delivered') AS delivered,
             (SELECT count(*)::int FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'charge') AS charges,
             (SELECT sum(amount)::int FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'charge') AS milli`;
    expect(row).toEqual({ claims: 12, delivered: 12, charges: 12, milli: expected });
    const ledger = makeLedger({ sql: db.sql });
    expect((await ledger.balance(orgId)).held).toBe(0);
    expect((await ledger.checkBalanced(orgId)).balanced).toBe(true);
  }, 240_000);
});
