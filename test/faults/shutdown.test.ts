// SIGTERM to `matchsim serve` while a 1,000,000-draw job runs and 50 requests are in flight: every
// request is answered (200/202) or refused with retry advice (503 + Retry-After), the job either finishes
// within the drain or goes back to the queue, and after a restart every job is delivered and charged
// exactly once, with the ledger balanced. The in-process ordering (readiness before the listener) is
// test/http/readiness.test.ts; the worker's release at the timeout is test/jobs/worker.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { openDatabase } from '../../src/db/connection.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { parseLine, type ServiceProcess, startServiceProcess } from '../helpers/service-process.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-shutdown-'));
let serverDb: TestDatabase | undefined;
afterAll(async () => {
  await serverDb?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const BIG_DRAWS = 1_000_000;
const WAITING_SUBMISSIONS = 10;
const READS = 40;

function env(shutdownDelaySeconds = '0'): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    ENGINE: 'cpu',
    CPU_THREADS: '1',
    LOG_LEVEL: 'info',
    MAX_EVENT_LOOP_DELAY_MS: '0', // refusals here come from the shutdown alone
    // Requests sent just before the signal are read while the listener is still open, even on a loaded
    // machine (a request written on a keep-alive connection but not yet read when the listener closes
    // would be reset); jobs get a short drain.
    SHUTDOWN_DELAY_SECONDS: shutdownDelaySeconds,
    SHUTDOWN_TIMEOUT_SECONDS: '1',
    ...(serverDb?.url ? { DATABASE_URL: serverDb.url } : {}),
  };
}

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { result_url?: string; error?: { retry?: { retryable?: boolean } } };
}

async function call(url: string, init: RequestInit): Promise<Answer> {
  const response = await fetch(url, init);
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as Answer['body'],
  };
}

/** Polls a job's result path until it is delivered; the delivery's credits_charged. */
async function deliver(service: ServiceProcess, auth: Record<string, string>, resultUrl: string) {
  for (let attempt = 0; attempt < 2000; attempt++) {
    const response = await fetch(`${service.baseUrl}${resultUrl}`, { headers: auth });
    const body = (await response.json()) as { credits_charged?: number };
    if (response.status === 200) return body.credits_charged;
    // Polling a slow run (a loaded machine) can meet the per-minute limit: wait as advised.
    const waitMs = response.status === 429 ? Number(response.headers.get('retry-after')) * 1000 : 250;
    expect([202, 429]).toContain(response.status);
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  throw new Error(`${resultUrl} was not delivered`);
}

async function startedBigJob(service: ServiceProcess, headers: Record<string, string>, fixtureId: number) {
  const big = await call(`${service.baseUrl}/v1/simulations`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ fixture_id: fixtureId, draws: BIG_DRAWS, wait_seconds: 0 }),
  });
  expect(big.status).toBe(202);
  const resultUrl = big.body.result_url!;
  for (let attempt = 0; attempt < 400; attempt++) {
    const job = (await (await fetch(`${service.baseUrl}${resultUrl}`, { headers })).json()) as {
      status: string;
    };
    if (job.status === 'running') return resultUrl;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the big job never started');
}

/** 10 submissions that wait for their jobs and 40 reads, all sent at once. */
function inFlight(service: ServiceProcess, headers: Record<string, string>, fixtures: number[]) {
  const submissions = Array.from({ length: WAITING_SUBMISSIONS }, (_, i) =>
    call(`${service.baseUrl}/v1/simulations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        fixture_id: fixtures[i % fixtures.length],
        draws: 1000 + 100 * i,
        wait_seconds: 25,
      }),
    }),
  );
  const reads = Array.from({ length: READS }, (_, i) =>
    call(`${service.baseUrl}${i % 2 ? '/v1/credits' : '/v1/fixtures?limit=5'}`, { headers }),
  );
  return { submissions: Promise.all(submissions), reads: Promise.all(reads) };
}

/** Every job delivered and charged exactly once; nothing held; the account equals its ledger. */
async function auditLedger(jobCount: number): Promise<void> {
  const db = serverDb ?? (await openDatabase({ dataDir }));
  try {
    const [org] = await db.sql<{ id: string }[]>`SELECT id FROM orgs`;
    const jobs = await db.sql<{ status: string; priceMilli: number }[]>`
      SELECT status, price_milli FROM jobs WHERE org_id = ${org!.id} AND mode = 'live'`;
    expect(jobs).toHaveLength(jobCount);
    expect(jobs.every((job) => job.status === 'delivered')).toBe(true);
    const [charges] = await db.sql<{ n: number; milli: number }[]>`
      SELECT count(*)::int AS n, COALESCE(sum(amount), 0)::bigint AS milli
      FROM credit_ledger WHERE org_id = ${org!.id} AND kind = 'charge'`;
    expect(charges).toEqual({ n: jobCount, milli: jobs.reduce((sum, job) => sum + job.priceMilli, 0) });
    const ledger = makeLedger({ sql: db.sql });
    expect((await ledger.balance(org!.id)).held).toBe(0);
    expect((await ledger.checkBalanced(org!.id)).balanced).toBe(true);
  } finally {
    if (!serverDb) await db.close();
  }
}

describe('SIGTERM during a running 1M-draw job and 50 in-flight requests', () => {
  it('answers or refuses every request with retry advice; the job finishes or is queued again; each job charged once', async () => {
    if (process.env.DATABASE_URL) serverDb = await createTestDatabase({ max: 2 });
    const first = await startServiceProcess(env('5'));
    const secret = /live key: (ms_live_\w+)/.exec(first.stderr.join('\n'))![1]!;
    const auth = { authorization: `Bearer ${secret}` };
    const headers = { ...auth, 'content-type': 'application/json' };
    const list = (await (await fetch(`${first.baseUrl}/v1/fixtures?limit=50`, { headers: auth })).json()) as {
      data: Array<{ fixture_id: number; freshness: { status: string } }>;
    };
    const onSale = list.data.filter((f) => f.freshness.status === 'fresh').map((f) => f.fixture_id);
    expect(onSale.length).toBeGreaterThan(1);

    const bigResult = await startedBigJob(first, headers, onSale[0]!);
    const requests = inFlight(first, headers, onSale.slice(1));
    first.child.kill('SIGTERM');
    const submissions = await requests.submissions;
    const answers = [...submissions, ...(await requests.reads)];
    expect(await first.exited).toBe(0);

    expect(answers).toHaveLength(WAITING_SUBMISSIONS + READS);
    for (const answer of answers) {
      if (answer.status === 503) {
        expect(Number(answer.retryAfter)).toBeGreaterThan(0);
        expect(answer.body.error?.retry?.retryable).toBe(true);
      } else {
        expect([200, 202], JSON.stringify(answer.body)).toContain(answer.status);
      }
    }
    const logged = first.stdout.map(parseLine);
    // The request log names the request, organisation, route, status, duration and the job.
    expect(logged.find((line) => line?.msg === 'request' && line.route === '/v1/simulations')).toMatchObject({
      request_id: expect.stringMatching(/^req_/),
      org_id: expect.stringMatching(/^org_/),
      status: 202,
      ms: expect.any(Number),
      job_id: expect.stringMatching(/^job_/),
    });
    const stopped = logged.find((line) => line?.msg === 'stopped')!;
    const bigJobId = bigResult.split('/').pop()!.split('?')[0]!;
    const released = stopped.released_job_ids as string[];
    // Either outcome is correct; which one happened depends on the machine's speed.
    const fate = released.includes(bigJobId) ? 'queued again' : 'finished or running at exit';
    expect(['queued again', 'finished or running at exit']).toContain(fate);

    const db = serverDb ?? (await openDatabase({ dataDir }));
    try {
      const [job] = await db.sql<{ status: string; leaseOwner: string | null; attempts: number }[]>`
        SELECT status, lease_owner, attempts FROM jobs WHERE id = ${bigJobId}`;
      if (fate === 'queued again') expect(job).toEqual({ status: 'queued', leaseOwner: null, attempts: 0 });
      else expect(job!.status).toBe('succeeded');
      const [running] = await db.sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM jobs WHERE status = 'running'`;
      expect(running!.n).toBe(0);
    } finally {
      if (!serverDb) await db.close();
    }

    const second = await startServiceProcess(env());
    try {
      const pending = answers
        .filter((answer) => answer.status === 202)
        .map((answer) => answer.body.result_url!);
      for (const url of [bigResult, ...pending]) await deliver(second, auth, url);
      // A second delivery replays: nothing more is charged.
      expect(await deliver(second, auth, bigResult)).toBe(0);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
    await auditLedger(submissions.filter((answer) => answer.status !== 503).length + 1);
    if (process.env.TEST_LOG) {
      const count = (status: number) => answers.filter((answer) => answer.status === status).length;
      console.log({ fate, answered200: count(200), answered202: count(202), refused503: count(503) });
    }
  }, 240_000);
});
