// The service as `npm start` runs it (role all: API and CPU worker), listening on a free port of
// 127.0.0.1 with the first-start demo: fixtures on sale, a live and a test key. For the tests that call it
// over real HTTP: the typed client and the browser.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { type RunningService, startService } from '../../src/server.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { demoClockOffset } from './demo-day.js';

export interface DemoService {
  service: RunningService;
  baseUrl: string;
  liveKey: string;
  testKey: string;
  /** The admin API's bearer token, generated into DATA_DIR/admin-token at the first start. */
  adminToken: string;
  close(): Promise<void>;
}

export async function startDemoService(env: Record<string, string> = {}): Promise<DemoService> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-demo-'));
  const database: TestDatabase | undefined = process.env.DATABASE_URL
    ? await createTestDatabase({ max: 4 })
    : undefined;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ENGINE: 'cpu',
    CPU_THREADS: '1',
    MATCHSIM_DEMO: 'on',
    MAX_EVENT_LOOP_DELAY_MS: '0', // no back-pressure 503s on a loaded test machine
    // CI runs the demo's readers on another day too (.ci/run); the demo is the same but its dates.
    CLOCK_OFFSET_SECONDS: demoClockOffset(),
    ...(database?.url ? { DATABASE_URL: database.url } : {}),
    ...env,
  });
  const lines: string[] = [];
  const service = await startService(config, 'all', { terminal: (line) => lines.push(line) });
  const address = service.app!.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const text = lines.join('\n');
  return {
    service,
    baseUrl: `http://127.0.0.1:${port}`,
    liveKey: /live key: (ms_live_\w+)/.exec(text)?.[1] ?? '',
    testKey: /test key: (ms_test_\w+)/.exec(text)?.[1] ?? '',
    adminToken: config.ADMIN_TOKEN ?? readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim(),
    async close() {
      await service.stop();
      await database?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
