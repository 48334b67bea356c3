// A Redis outage under `matchsim serve --role api` with REDIS_URL (issue 33, item 4): the test starts its
// own redis-server on a free port, kills it with SIGKILL and starts it again. While it is away every
// keyed request is still answered (never 500), the limits count in the process (a per-minute limit of 3
// still refuses the fourth request, wrong keys are still limited), /readyz names the fallback, and the
// client's error events are handled (nothing on stderr); once Redis is back the limits are shared again.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { AUTH_FAILURES_PER_MINUTE } from '../../src/http/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { parseLine, type ServiceProcess, startServiceProcess } from '../helpers/service-process.js';

const REDIS_SERVER = '/usr/bin/redis-server';
const ADMIN_TOKEN = 'redis-outage-admin-token-0123456789';
const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-redis-outage-'));
let serverDb: TestDatabase | undefined;
let redisProcess: ChildProcess | undefined;
let service: ServiceProcess | undefined;

afterAll(async () => {
  service?.child.kill('SIGKILL');
  redisProcess?.kill('SIGKILL');
  await serverDb?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A redis-server of the test's own, without persistence; resolves once it answers PING. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return child;
      } catch (error) {
        if (attempt > 200) throw error;
        probe.disconnect();
        await sleep(50);
      }
    }
  } finally {
    probe.disconnect();
  }
}

async function countedKeys(port: number): Promise<string[]> {
  const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  try {
    return await redis.keys('matchsim:*rpm:*');
  } finally {
    redis.disconnect();
  }
}

async function readiness(baseUrl: string) {
  const response = await fetch(`${baseUrl}/readyz`);
  return { status: response.status, body: (await response.json()) as { status: string; limits: string } };
}

describe('a Redis outage', () => {
  it('keeps answering keyed requests with limits per process, says so in /readyz, and shares again after', async () => {
    if (process.env.DATABASE_URL) serverDb = await createTestDatabase({ max: 2 });
    const port = await freePort();
    redisProcess = await startRedis(port);
    service = await startServiceProcess(
      {
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        MATCHSIM_DEMO: 'off',
        ADMIN_TOKEN,
        REDIS_URL: `redis://127.0.0.1:${port}`,
        MAX_EVENT_LOOP_DELAY_MS: '0',
        ...(serverDb?.url ? { DATABASE_URL: serverDb.url } : {}),
      },
      ['--role', 'api'],
    );
    const base = service.baseUrl;
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const org = (await (
      await fetch(`${base}/admin/v1/orgs`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'Redis outage', plan: 'pro', limits: { data_rpm: 3 } }),
      })
    ).json()) as { org_id: string };
    const key = (await (
      await fetch(`${base}/admin/v1/orgs/${org.org_id}/keys`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ mode: 'live' }),
      })
    ).json()) as { secret: string };
    const auth = { authorization: `Bearer ${key.secret}` };
    const credits = () => fetch(`${base}/v1/credits`, { headers: auth });

    expect((await readiness(base)).body).toMatchObject({ status: 'ready', limits: 'shared' });
    expect((await credits()).status).toBe(200);
    expect(await countedKeys(port)).toHaveLength(1);

    redisProcess.kill('SIGKILL');
    await once(redisProcess, 'exit');
    // Three requests in this process's own window, then the per-minute limit refuses with retry advice.
    const during = await Promise.all([credits(), credits(), credits(), credits()]);
    const statuses = during.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = during.find((response) => response.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { error: { rule: string } }).error.rule).toBe('data_rpm');
    // Wrong keys are limited too, and the right one is not refused by them.
    const wrong = { authorization: `Bearer ms_live_${'w'.repeat(40)}` };
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) {
      expect((await fetch(`${base}/v1/credits`, { headers: wrong })).status).toBe(401);
    }
    expect((await fetch(`${base}/v1/credits`, { headers: wrong })).status).toBe(429);
    const ready = await readiness(base);
    expect(ready).toEqual({
      status: 200,
      body: expect.objectContaining({ status: 'ready', limits: 'process_fallback' }),
    });
    await service.logLine('Redis unavailable: limits count in this process until it returns');

    redisProcess = await startRedis(port);
    // ioredis reconnects on its own schedule (at most 2 s apart): wait for it, however long it takes.
    while ((await readiness(base)).body.limits !== 'shared') await sleep(100);
    await service.logLine('Redis available again: limits are shared');
    expect((await credits()).status).toBe(200);
    expect(await countedKeys(port)).toHaveLength(1);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    const logged = service.stdout.map(parseLine);
    expect(logged.filter((line) => line?.msg === 'request failed')).toEqual([]);
    expect(service.stderr.join('\n')).not.toMatch(/Unhandled error event/);
  });
});
