// `matchsim serve` with NODE_ENV=production on an empty database (docs/decisions.md §8): migrations run,
// but no demo data, no organisation and no key are created, and no secret is printed anywhere; stdout
// carries JSON log lines only. The demo mode's first start is test/http/start.test.ts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { parseLine, startServiceProcess } from '../helpers/service-process.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-production-'));
let serverDb: TestDatabase | undefined;
afterAll(async () => {
  await serverDb?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const SECRET = /ms_live_|ms_test_|msadm_/;

describe('serve in production on an empty database', () => {
  it('creates no organisation, key or demo data, prints no secret and logs JSON lines only', async () => {
    if (process.env.DATABASE_URL) serverDb = await createTestDatabase({ max: 2 });
    const service = await startServiceProcess({
      NODE_ENV: 'production',
      DATA_DIR: dataDir,
      ENGINE: 'cpu',
      CPU_THREADS: '1',
      LOG_LEVEL: 'info',
      ...(serverDb?.url ? { DATABASE_URL: serverDb.url } : {}),
    });
    const ready = await fetch(`${service.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', migrations: 'current', draining: false });
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);

    const logged = service.stdout.filter((line) => line !== '');
    expect(logged.length).toBeGreaterThan(3);
    for (const line of logged) expect(parseLine(line), line).not.toBeNull();
    const messages = logged.map((line) => parseLine(line)!.msg);
    expect(messages).toContain('demo off: no demo data, organisation or keys are created');
    expect(messages).toContain('stopped');
    expect(logged.join('\n')).not.toMatch(SECRET);
    expect(service.stderr.join('\n')).not.toMatch(SECRET);
    expect(service.stderr.join('\n')).not.toMatch(/Demo organisation|live key|Admin token/);
    // The generated admin token exists for the operator to read, and only there.
    const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    expect(token).toMatch(/^msadm_/);
    expect(logged.join('\n')).not.toContain(token);

    const db = serverDb ?? (await openDatabase({ dataDir }));
    try {
      const [counts] = await db.sql<{ orgs: number; keys: number; fixtures: number; ledger: number }[]>`
        SELECT (SELECT count(*)::int FROM orgs) AS orgs, (SELECT count(*)::int FROM api_keys) AS keys,
               (SELECT count(*)::int FROM fixtures) AS fixtures,
               (SELECT count(*)::int FROM credit_ledger) AS ledger`;
      expect(counts).toEqual({ orgs: 0, keys: 0, fixtures: 0, ledger: 0 });
    } finally {
      if (!serverDb) await db.close();
    }
  }, 120_000);
});
