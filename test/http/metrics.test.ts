// Prometheus metrics as a scraper sees them: after a simulation runs and is delivered, the scrape holds
// the process and runtime metrics and every family of src/http/metrics.ts with the values of that run,
// and `promtool check metrics` finds nothing wrong with it. promtool comes from Debian's prometheus
// package (.ci/install-promtool.sh puts it in .tools/bin); CI fails without it, elsewhere the check is
// skipped and says so. Also: /metrics needs the admin token on the API port, and with METRICS_PORT it is
// served, public, on its own listener, by worker processes too.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/server.js';
import { createTestContext, type TestContext } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

function findPromtool(): string | null {
  const candidates = [process.env.PROMTOOL, path.resolve('.tools/bin/promtool')].filter(Boolean) as string[];
  for (const candidate of candidates) if (existsSync(candidate)) return candidate;
  const onPath = spawnSync('promtool', ['--version'], { stdio: 'ignore' });
  return onPath.status === 0 ? 'promtool' : null;
}

const promtool = findPromtool();
const checkWithPromtool = promtool !== null || Boolean(process.env.CI);

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ worker: true });
});
afterAll(async () => t.close());

async function scrape(): Promise<string> {
  const response = await t.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${t.adminToken}` },
  });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toContain('text/plain; version=0.0.4');
  return response.body;
}

async function deliveredSimulation(): Promise<void> {
  const org = await t.newOrg();
  const list = await t.app.inject({ method: 'GET', url: '/v1/fixtures?limit=50', headers: org.auth });
  const fixture = list
    .json()
    .data.find((f: { freshness: { status: string } }) => f.freshness.status === 'fresh') as {
    fixture_id: number;
  };
  const run = await t.app.inject({
    method: 'POST',
    url: '/v1/simulations',
    headers: org.auth,
    payload: { fixture_id: fixture.fixture_id, draws: 2000, wait_seconds: 25 },
  });
  expect(run.statusCode).toBe(200);
  expect(run.json().credits_charged).toBe(2);
}

describe('metrics', () => {
  it('is refused without the admin token on the API port', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
  });

  it('exports runtime metrics and the service families with the values of a delivered run', async () => {
    const { loadDemoData } = await import('../../src/fixtures/demo-data.js');
    await loadDemoData(t.db.sql, { seed: 'metrics-test', now: new Date() });
    await deliveredSimulation();
    const text = await scrape();
    for (const family of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_gc_duration_seconds',
      'matchsim_gpu_restarts_total',
      'matchsim_gpu_cpu_fallbacks_total',
      'matchsim_http_refusals_total',
    ]) {
      expect(text).toContain(`# TYPE ${family} `);
    }
    expect(text).toMatch(
      /^matchsim_http_requests_total\{route="\/v1\/simulations",method="POST",status="200"\} 1$/m,
    );
    expect(text).toMatch(
      /^matchsim_http_request_duration_seconds_count\{route="\/v1\/simulations",method="POST"\} 1$/m,
    );
    expect(text).toMatch(/^matchsim_credits_charged_total\{item="simulation"\} 2$/m);
    expect(text).toMatch(/^matchsim_jobs_finished_total\{outcome="completed"\} 1$/m);
    expect(text).toMatch(/^matchsim_job_run_seconds_count\{engine="cpu"\} 1$/m);
    expect(text).toMatch(/^matchsim_job_draws_per_second_count\{engine="cpu"\} 1$/m);
    expect(text).toMatch(/^matchsim_engine_draws_total\{engine="cpu"\} 2000$/m);
    // A CPU run adds no GPU time.
    expect(text).toMatch(/^matchsim_gpu_seconds_total 0$/m);
    expect(text).toMatch(/^matchsim_engine_ready\{engine="cpu",state="ready"\} 1$/m);
    expect(text).toMatch(/^matchsim_queue_jobs\{state="queued"\} 0$/m);
    expect(text).toMatch(/^matchsim_queue_jobs\{state="running"\} 0$/m);
    expect(text).toMatch(/^matchsim_credit_holds_open 0$/m);
  }, 60_000);

  it("sums the GPU time of the jobs the GPU ran, each job's own share", async () => {
    const { makeMetrics } = await import('../../src/http/metrics.js');
    const metrics = makeMetrics();
    metrics.observeJob('completed', { engine: 'gpu', runSeconds: 0.02, gpuSeconds: 0.0085, draws: 1e6 });
    metrics.observeJob('completed', { engine: 'gpu', runSeconds: 0.01, gpuSeconds: 0.0015, draws: 1e5 });
    metrics.observeJob('completed', { engine: 'cpu', runSeconds: 0.3, gpuSeconds: 0, draws: 1e5 });
    const text = await metrics.render();
    expect(text).toMatch(/^matchsim_gpu_seconds_total 0\.01$/m);
    expect(text).toMatch(/^matchsim_job_run_seconds_count\{engine="gpu"\} 2$/m);
  });

  // Outside CI without promtool this is skipped, and its name says why.
  it.runIf(checkWithPromtool)(
    'passes promtool check metrics (outside CI: needs .ci/install-promtool.sh)',
    async () => {
      if (!promtool)
        throw new Error('promtool not found: run .ci/install-promtool.sh (CI must check metrics)');
      const text = await scrape();
      expect(text.split('\n').filter((line) => line.startsWith('# TYPE')).length).toBeGreaterThan(30);
      const checked = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(checked.stdout + checked.stderr).toBe('');
      expect(checked.status).toBe(0);
      // The checker is not a rubber stamp: a gauge named like a counter fails it.
      const broken = `${text}# HELP bad_total a gauge\n# TYPE bad_total gauge\nbad_total 1\n`;
      expect(spawnSync(promtool, ['check', 'metrics'], { input: broken, encoding: 'utf8' }).status).not.toBe(
        0,
      );
    },
  );
});

describe('METRICS_PORT', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-metrics-port-'));
  let serverDb: TestDatabase | undefined;
  afterAll(async () => {
    await serverDb?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves metrics and probes on their own listener, also for a worker process', async () => {
    if (process.env.DATABASE_URL) serverDb = await createTestDatabase({ max: 4 });
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'production',
      ENGINE: 'cpu',
      CPU_THREADS: '1',
      ...(serverDb?.url ? { DATABASE_URL: serverDb.url } : {}),
    });
    const service = await startService(config, 'worker');
    try {
      expect(service.app).toBeNull();
      const address = service.operations!.server.address();
      const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      const metrics = await fetch(`${base}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('matchsim_engine_ready{engine="cpu",state="ready"} 1');
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect(await (await fetch(`${base}/readyz`)).json()).toMatchObject({
        status: 'ready',
        engine: 'ready',
      });
    } finally {
      await service.stop();
    }
  }, 60_000);

  it('takes /metrics off the API port', async () => {
    const other = await createTestContext({ env: { METRICS_PORT: '9464' } });
    try {
      const response = await other.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${other.adminToken}` },
      });
      expect(response.statusCode).toBe(404);
    } finally {
      await other.close();
    }
  });
});
