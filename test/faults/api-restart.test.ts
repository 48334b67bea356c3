// The API process restarted while jobs are queued: the jobs wait in PostgreSQL, and once a process with
// a worker runs again they complete and are delivered through their result paths, charged once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type Role, startService } from '../../src/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-restart-'));
let serverDb: TestDatabase | undefined;
afterAll(async () => {
  await serverDb?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(role: Role) {
  if (process.env.DATABASE_URL && !serverDb) serverDb = await createTestDatabase({ max: 2 });
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ENGINE: 'cpu',
    CPU_THREADS: '1',
    MAX_EVENT_LOOP_DELAY_MS: '0', // no back-pressure 503s on a loaded test machine
    ...(serverDb?.url ? { DATABASE_URL: serverDb.url } : {}),
  });
  const lines: string[] = [];
  const service = await startService(config, role, { terminal: (line) => lines.push(line) });
  const address = service.app?.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { service, lines, base: `http://127.0.0.1:${port}` };
}

describe('API restart with queued jobs', () => {
  it('completes and delivers the jobs after the restart, each charged once', async () => {
    const api = await start('api');
    const secret = /live key: (ms_live_\w+)/.exec(api.lines.join('\n'))![1]!;
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    const list = (await (await fetch(`${api.base}/v1/fixtures?limit=50`, { headers })).json()) as {
      data: Array<{ fixture_id: number; freshness: { status: string } }>;
    };
    const onSale = list.data.filter((f) => f.freshness.status === 'fresh').slice(0, 3);
    expect(onSale.length).toBe(3);
    const jobs = [];
    for (const fixture of onSale) {
      const response = await fetch(`${api.base}/v1/simulations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ fixture_id: fixture.fixture_id, draws: 1500, wait_seconds: 0 }),
      });
      expect(response.status).toBe(202);
      jobs.push((await response.json()) as { result_url: string; status: string });
    }
    await api.service.stop();

    const restarted = await start('all');
    try {
      const auth = { authorization: headers.authorization };
      for (const job of jobs) {
        let status = 202;
        let body: { credits_charged?: number } = {};
        for (let i = 0; i < 400 && status === 202; i++) {
          const poll = await fetch(`${restarted.base}${job.result_url}`, { headers: auth });
          status = poll.status;
          body = (await poll.json()) as typeof body;
          if (status === 202) await new Promise((r) => setTimeout(r, 25));
        }
        expect(status).toBe(200);
        expect(body.credits_charged).toBe(1.5);
      }
      const credits = (await (await fetch(`${restarted.base}/v1/credits`, { headers: auth })).json()) as {
        total: number;
        held: number;
      };
      expect(credits).toMatchObject({ total: 2500 - 4.5, held: 0 });
    } finally {
      await restarted.service.stop();
    }
  }, 120_000);
});
