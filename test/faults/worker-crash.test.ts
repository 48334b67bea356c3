// Fault test: a worker PROCESS is killed with SIGKILL while it runs a job. Its lease runs out, another
// worker rescues the job and runs it, and delivery charges the hold exactly once.
// Real PostgreSQL only: an embedded PGlite database belongs to one process.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../src/jobs/worker.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase, usingServer } from '../helpers/database.js';
import {
  chargeRows,
  deliver,
  deterministicEngine,
  makeSimParts,
  type SimParts,
  submitJob,
} from '../jobs/setup.js';

if (!usingServer) {
  console.info(
    'worker crash: skipped, it needs a PostgreSQL server (set DATABASE_URL); PGlite serves one process',
  );
}

const here = path.dirname(fileURLToPath(import.meta.url));

let db: TestDatabase;
let parts: SimParts;

beforeAll(async () => {
  if (!usingServer) return;
  db = await createTestDatabase();
  parts = makeSimParts(db);
});

afterAll(async () => {
  if (!usingServer) return;
  await parts.queue.close();
  await db.close();
});

function spawnWorker(url: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(here, 'worker-process.ts')], {
    cwd: path.resolve(here, '../..'),
    env: { ...process.env, DATABASE_URL: url, LEASE_MS: '1500' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

async function lineMatching(child: ChildProcess, pattern: RegExp): Promise<RegExpMatchArray> {
  let buffered = '';
  for await (const chunk of child.stdout!) {
    buffered += String(chunk);
    const match = buffered.match(pattern);
    if (match) return match;
  }
  throw new Error(`worker process ended without printing ${pattern}`);
}

describe.skipIf(!usingServer)('worker process killed mid-job', () => {
  it('the job runs again elsewhere and is charged once', async () => {
    const org = await insertOrg(db.sql);
    const job = await submitJob(parts, org, { draws: 3000, inputs: { crash: true } });

    const child = spawnWorker(db.url!);
    const [, runningId] = await lineMatching(child, /running (job_\w+)/);
    expect(runningId).toBe(job.id);
    expect(await parts.queue.get(job.id)).toMatchObject({ status: 'running', attempts: 1 });

    child.kill('SIGKILL');
    await once(child, 'exit');
    const killedOwner = (await parts.queue.get(job.id))?.leaseOwner;
    expect(killedOwner).toMatch(/^crash-test-/);

    const survivor = startWorker({
      queue: parts.queue,
      sql: parts.sql,
      runBatch: deterministicEngine(),
      workerId: 'survivor',
      pollMs: 20,
      leaseMs: 30_000,
      maintenanceMs: 100,
    });
    const done = await parts.queue.waitFor(job.id, 20_000);
    await survivor.stop();
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(survivor.stats.completed).toBe(1);

    for (const requestId of ['req_first', 'req_retry']) {
      const outcome = await deliver(parts, job, requestId);
      expect(outcome.kind).toBe('delivered');
    }
    expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    expect(await parts.ledger.balance(org)).toMatchObject({ held: 0, spentThisMonth: 3000 });
    expect((await parts.ledger.checkBalanced(org)).balanced).toBe(true);
  });
});
