// Probes, shutdown order and back-pressure: /healthz is liveness, /readyz readiness; on shutdown readiness
// flips while the listener still serves, then the listener closes; requests that arrive while it closes
// and requests under event-loop pressure are refused with 503 and retry advice; probes never are.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { makeLifecycle } from '../../src/http/readiness.js';
import { startService } from '../../src/server.js';
import { createTestContext } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-readiness-'));
let serverDb: TestDatabase | undefined;
afterAll(async () => {
  await serverDb?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('shutdown order', () => {
  it('flips readiness first, keeps serving for SHUTDOWN_DELAY_SECONDS, then closes the listener', async () => {
    if (process.env.DATABASE_URL) serverDb = await createTestDatabase({ max: 2 });
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'production',
      SHUTDOWN_DELAY_SECONDS: '0.5',
      ...(serverDb?.url ? { DATABASE_URL: serverDb.url } : {}),
    });
    const service = await startService(config, 'api');
    const address = service.app!.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const ready = await fetch(`${base}/readyz`);
    expect(await ready.json()).toEqual({
      status: 'ready',
      database: 'ok',
      migrations: 'current',
      engine: 'not_run',
      limits: 'in_process',
      draining: false,
    });

    const stopping = service.stop();
    expect(service.lifecycle.draining).toBe(true);
    const draining = await fetch(`${base}/readyz`);
    expect(draining.status).toBe(503);
    expect(await draining.json()).toMatchObject({ status: 'not_ready', draining: true, database: 'ok' });
    // The listener is still open and serves: load balancers get time to notice the flip.
    expect(service.lifecycle.closing).toBe(false);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const served = await fetch(`${base}/openapi.json`);
    expect(served.status).toBe(200);
    // Clients are told to let go of their connections before the listener closes.
    expect(served.headers.get('connection')).toBe('close');

    await stopping;
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  }, 60_000);
});

describe('refusals with retry advice', () => {
  it('refuses requests while the listener closes, with Retry-After and Connection: close; probes still answer', async () => {
    const lifecycle = makeLifecycle();
    const t = await createTestContext({ lifecycle });
    try {
      const org = await t.newOrg();
      expect((await t.app.inject({ method: 'GET', url: '/v1/credits', headers: org.auth })).statusCode).toBe(
        200,
      );
      lifecycle.draining = true;
      lifecycle.closing = true;
      const refused = await t.app.inject({ method: 'GET', url: '/v1/credits', headers: org.auth });
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers.connection).toBe('close');
      expect(refused.json().error).toMatchObject({
        code: 'dependency_unavailable',
        retry: { retryable: true, after_seconds: 1 },
      });
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      const readyz = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(readyz.statusCode).toBe(503);
      expect(readyz.json()).toMatchObject({ draining: true });
    } finally {
      await t.close();
    }
  });

  it('refuses requests while the event loop lags past MAX_EVENT_LOOP_DELAY_MS, and serves again after', async () => {
    const t = await createTestContext({ env: { MAX_EVENT_LOOP_DELAY_MS: '50' }, pressureSampleMs: 100 });
    try {
      const app = t.app as typeof t.app & { isUnderPressure(): boolean };
      // Block the event loop until the sampler sees the delay (it reports a mean per sample interval).
      for (let attempt = 0; attempt < 20 && !app.isUnderPressure(); attempt++) {
        const until = Date.now() + 400;
        while (Date.now() < until) {
          // busy: nothing runs on the event loop meanwhile
        }
        for (let tick = 0; tick < 50 && !app.isUnderPressure(); tick++) {
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      }
      expect(app.isUnderPressure()).toBe(true);
      const refused = await t.app.inject({ method: 'GET', url: '/v1/credits' });
      const probe = await t.app.inject({ method: 'GET', url: '/healthz' });
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('2');
      expect(refused.json().error).toMatchObject({
        code: 'dependency_unavailable',
        retry: { retryable: true },
      });
      expect(probe.statusCode).toBe(200);
      for (let attempt = 0; attempt < 100 && app.isUnderPressure(); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Unauthenticated, so answered by the authentication step again: 401, no longer 503.
      expect((await t.app.inject({ method: 'GET', url: '/v1/credits' })).statusCode).toBe(401);
    } finally {
      await t.close();
    }
  });
});
