// `npm start` on a fresh clone (docs/decisions.md §8): migrate, demo organisation with a live and a test key,
// an admin token in DATA_DIR, printed once; a second start reuses them.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-start-'));
let serverDb: TestDatabase | undefined;
afterAll(async () => {
  await serverDb?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start() {
  if (process.env.DATABASE_URL && !serverDb) serverDb = await createTestDatabase({ max: 2 });
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '0', // no back-pressure 503s on a loaded test machine
    ...(serverDb?.url ? { DATABASE_URL: serverDb.url } : {}),
  });
  const lines: string[] = [];
  const service = await startService(config, 'api', { terminal: (line) => lines.push(line) });
  const address = service.app!.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { service, lines, baseUrl: `http://127.0.0.1:${port}` };
}

describe('first and second start', () => {
  it('prints working demo keys and an admin token once, then reuses them', async () => {
    const first = await start();
    const text = first.lines.join('\n');
    const live = /live key: (ms_live_\w+)/.exec(text)?.[1];
    const test = /test key: (ms_test_\w+)/.exec(text)?.[1];
    const token = /Admin token .*: (\S+)/.exec(text)?.[1];
    expect(live && test && token).toBeTruthy();
    expect(readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim()).toBe(token);

    const balance = await fetch(`${first.baseUrl}/v1/credits`, {
      headers: { authorization: `Bearer ${live}` },
    });
    expect(balance.status).toBe(200);
    expect(await balance.json()).toMatchObject({
      object: 'credit_balance',
      livemode: true,
      total: 2500,
      usage_tier: 2,
    });
    const testBalance = await fetch(`${first.baseUrl}/v1/credits`, {
      headers: { authorization: `Bearer ${test}` },
    });
    expect((await testBalance.json()).livemode).toBe(false);
    const admin = await fetch(`${first.baseUrl}/admin/v1/orgs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Second', plan: 'plus' }),
    });
    expect(admin.status).toBe(201);
    await first.service.stop();

    const second = await start();
    const again = second.lines.join('\n');
    expect(again).not.toMatch(/ms_live_|ms_test_|Admin token/);
    expect(again).toMatch(/exists/);
    const reused = await fetch(`${second.baseUrl}/v1/credits`, {
      headers: { authorization: `Bearer ${live}` },
    });
    expect(reused.status).toBe(200);
    await second.service.stop();
  });
});
