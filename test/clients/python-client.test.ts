// The Python client (clients/python) against the running service, over HTTP: its pytest suite
// (clients/python/tests: every operation of /openapi.json, errors, retries, the results stream, frames,
// a webhook delivery, the README's and docs/python.md's examples) run by Debian's pytest against the demo
// service this file starts. On one back end (vitest.config.ts ONE_BACKEND), as the TypeScript client's:
// the client reads the wire contract, which the HTTP tests check on both. Skipped, saying so, where
// Debian's python3-pytest is not installed (.ci/run installs it).
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoService, startDemoService } from '../helpers/demo-service.js';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
/** Debian's interpreter: its python3-pytest and python3-mypy are found by it, not by another python3. */
const PYTHON = '/usr/bin/python3';
const hasPytest = spawnSync(PYTHON, ['-c', 'import pytest'], { stdio: 'ignore' }).status === 0;
if (!hasPytest) {
  console.warn(`skipped: ${PYTHON} has no pytest (apt-get install python3-pytest, as .ci/run does)`);
}
const ADMIN_TOKEN = 'python-client-admin-token';

let demo: DemoService;

/** A live key of a new organisation allowed one open job, for the retry test (docs/api.md §8). */
async function limitedKey(baseUrl: string): Promise<string> {
  const admin = async (url: string, body: object) => {
    const response = await fetch(`${baseUrl}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBeLessThan(300);
    return (await response.json()) as { org_id: string; secret: string };
  };
  const org = await admin('/admin/v1/orgs', {
    name: 'one open job',
    plan: 'pro',
    limits: { concurrent_simulations: 1 },
  });
  return (await admin(`/admin/v1/orgs/${org.org_id}/keys`, { mode: 'live' })).secret;
}

describe.skipIf(!hasPytest)('the Python client against the service', () => {
  beforeAll(async () => {
    // On the host's day whatever DEMO_CLOCK_OFFSET_SECONDS says (test/helpers/demo-day.ts): the client's
    // own clock takes part here (a webhook's timestamp tolerance, the fixture list's default window), and
    // a client's clock and a service's agree.
    demo = await startDemoService({ ADMIN_TOKEN, CLOCK_OFFSET_SECONDS: '0' });
  }, 120_000);
  afterAll(() => demo?.close());

  it('passes its pytest suite', async () => {
    const env = {
      ...process.env,
      MATCHSIM_BASE_URL: demo.baseUrl,
      MATCHSIM_API_KEY: demo.liveKey,
      MATCHSIM_LIMITED_KEY: await limitedKey(demo.baseUrl),
      PYTHONPATH: path.join(root, 'clients/python/src'),
      PYTHONDONTWRITEBYTECODE: '1',
    };
    const args = ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'clients/python/tests'];
    const outcome = await run(PYTHON, args, { cwd: root, env, maxBuffer: 16 * 1024 * 1024 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ ...error, code: error.code ?? 1 }),
    );
    const output = `${outcome.stdout ?? ''}${outcome.stderr ?? ''}`;
    expect(outcome.code, output).toBe(0); // pytest's status: 0 only when every test passed
    expect(output, output).toMatch(/\d+ passed/);
  }, 400_000);
});
