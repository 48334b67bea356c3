// Fault test: the database connection is terminated (pg_terminate_backend) while the result path settles
// a delivery. The answer is settlement_unknown; the hold, the delivery and the job change together or not
// at all; a retry (same job, or the same Idempotency-Key) gives the one true outcome; the ledger balances.
// The delivery whose connection is terminated runs in a child process (fault-deliverer.ts): the postgres
// client can throw an uncaught TypeError from a deferred write after its socket closes
// (porsager/postgres#1154, #1208), and the test runner must not be the process that suffers it.
// Real PostgreSQL only: PGlite has one in-process connection that cannot be terminated.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentSummary } from '../../src/engine/document-schema.js';
import { storedDocument } from '../../src/engine/stored-document.js';
import { requestBodyHash } from '../../src/http/idempotent.js';
import { makeIdempotencyStore } from '../../src/idempotency/store.js';
import type { Job } from '../../src/jobs/types.js';
import { findDeliveryForJob, storeResult } from '../../src/results/result-store.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase, usingServer } from '../helpers/database.js';
import { chargeRows, deliver, documentFor, makeSimParts, type SimParts, submitJob } from '../jobs/setup.js';

if (!usingServer) {
  console.info(
    'settlement faults: skipped, they need a PostgreSQL server (set DATABASE_URL); PGlite cannot lose a connection',
  );
}

const here = path.dirname(fileURLToPath(import.meta.url));
const repositoryRoot = path.resolve(here, '../..');

let db: TestDatabase;
let parts: SimParts;
let admin: postgres.Sql;

beforeAll(async () => {
  if (!usingServer) return;
  db = await createTestDatabase();
  parts = makeSimParts(db);
  admin = postgres(db.url!, { max: 1, onnotice: () => {} });
});

afterAll(async () => {
  if (!usingServer) return;
  await admin.end({ timeout: 5 });
  await parts.queue.close();
  await db.close();
});

async function succeededJob(orgId: string, draws: number): Promise<Job> {
  const job = await submitJob(parts, orgId, { draws, inputs: { fault: Math.random() } });
  await parts.queue.claim('w', 10, 60_000);
  const done = await parts.sql.begin(async (tx) => {
    const result = await storeResult(
      tx,
      {
        cacheKey: job.cacheKey,
        scope: 'shared',
        orgId: null,
        fixtureId: job.fixtureId,
        dataVersion: job.dataVersion,
        draws,
        summary: documentSummary(documentFor(job)),
        document: storedDocument(JSON.stringify(documentFor(job))),
        engine: 'cpu',
        runMs: 1,
        gpuMs: 0,
      },
      new Date(),
    );
    return parts.queue.complete(job.id, {
      resultId: result.id,
      gpuSecondsUsed: 0,
      engine: 'cpu',
      workerId: 'w',
      tx,
    });
  });
  return done!;
}

/** The delivery in a child process; resolves with its outcome: a status or an error code. */
async function deliverElsewhere(job: Job, requestId: string): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(here, 'fault-deliverer.ts'),
      db.url!,
      job.orgId,
      job.id,
      job.reservationId,
      requestId,
    ],
    { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise((resolve) => child.on('exit', resolve));
  const line = output.split('\n').find((text) => text.startsWith('{'));
  return line ? (JSON.parse(line) as { outcome: string }).outcome : 'no outcome reported';
}

async function waitForBlockedBackend(table: string): Promise<number> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const [row] = await admin<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ${`%INSERT INTO ${table}%`}`;
    if (row) return row.pid;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no backend blocked on ${table}`);
}

/**
 * Holds an uncommitted row that the settlement's insert into `table` conflicts with, so the settlement
 * waits there; terminates the waiting backend; then rolls the blocking row back.
 */
async function terminateWhileBlocked(
  table: 'credit_ledger' | 'deliveries',
  block: (tx: postgres.TransactionSql) => Promise<unknown>,
  settle: () => Promise<string>,
): Promise<string> {
  let unblock!: () => void;
  let blocked!: () => void;
  const blocking = new Promise<void>((resolve) => {
    blocked = resolve;
  });
  const blockerSql = postgres(db.url!, { max: 1, onnotice: () => {} });
  const blocker = blockerSql.begin(async (tx) => {
    await block(tx);
    blocked();
    await new Promise<void>((resolve) => {
      unblock = resolve;
    });
    throw new Error('roll back the blocker');
  });
  await blocking;
  const outcome = settle();
  const pid = await waitForBlockedBackend(table);
  await admin.unsafe('SELECT pg_terminate_backend($1)', [pid]).catch(() => {});
  const error = await outcome;
  unblock();
  await blocker.catch(() => {});
  await blockerSql.end({ timeout: 5 });
  return error;
}

async function expectUntouched(job: Job): Promise<void> {
  expect((await parts.queue.get(job.id))?.status).toBe('succeeded');
  expect((await parts.ledger.getHold(job.reservationId))?.status).toBe('pending');
  expect(await chargeRows(db.sql, job.reservationId)).toBe(0);
  expect(await findDeliveryForJob(db.sql, job.id)).toBeNull();
  expect((await parts.ledger.checkBalanced(job.orgId)).balanced).toBe(true);
}

describe.skipIf(!usingServer)('connection terminated during a delivery settlement', () => {
  it('at the charge row: settlement_unknown, nothing settled, the retry settles once', async () => {
    const org = await insertOrg(db.sql);
    const job = await succeededJob(org, 4000);
    const error = await terminateWhileBlocked(
      'credit_ledger',
      (tx) => tx`
        INSERT INTO credit_ledger (org_id, kind, amount, monthly_delta, monthly_held_delta, period_start, hold_id,
                                   created_at)
        VALUES (${org}, 'charge', 4000, -4000, -4000, now(), ${job.reservationId}, now())`,
      () => deliverElsewhere(job, 'req_first'),
    );
    expect(error).toBe('settlement_unknown');
    await expectUntouched(job);

    const retry = await deliver(parts, job, 'req_retry');
    expect(retry).toMatchObject({ kind: 'delivered', delivered: { replayed: false } });
    expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    expect(await parts.ledger.balance(org)).toMatchObject({ held: 0, spentThisMonth: 4000 });
    expect((await parts.ledger.checkBalanced(org)).balanced).toBe(true);
  });

  it('after the charge, at the delivery row: the charge rolls back with it; a same-key retry delivers once', async () => {
    const org = await insertOrg(db.sql);
    const job = await succeededJob(org, 2000);
    const idempotency = makeIdempotencyStore({ sql: db.sql });
    const request = {
      orgId: org,
      mode: 'live' as const,
      method: 'GET',
      path: `/v1/simulations/jobs/${job.id}`,
      key: 'deliver-once',
      bodyHash: requestBodyHash(''),
    };
    const first = await idempotency.begin(request);
    if (first.kind !== 'new') throw new Error('expected a new request');
    await db.sql.begin((tx) => idempotency.attachJob(tx, first.record, { jobId: job.id }));

    const [result] = await db.sql<{ id: number }[]>`SELECT result_id AS id FROM jobs WHERE id = ${job.id}`;
    const error = await terminateWhileBlocked(
      'deliveries',
      (tx) => tx`
        INSERT INTO deliveries (id, org_id, job_id, result_id, mode, created_at)
        VALUES ('sim_blocker', ${org}, ${job.id}, ${result!.id}, 'live', now())`,
      () => deliverElsewhere(job, 'req_first'),
    );
    expect(error).toBe('settlement_unknown');
    await expectUntouched(job);
    // A 5xx is not stored; the record keeps the job for the retry.
    await idempotency.complete(first.record, { status: 503, headers: {}, body: '{"error":{}}' });

    const retry = await idempotency.begin(request);
    expect(retry).toMatchObject({ kind: 'new', record: { jobId: job.id } });
    if (retry.kind !== 'new') return;
    const outcome = await deliver(parts, job, 'req_retry');
    if (outcome.kind !== 'delivered') throw new Error('expected a delivery');
    const { delivered } = outcome;
    const body = JSON.stringify({ object: 'simulation', id: delivered.delivery.id });
    await idempotency.complete(retry.record, { status: 200, headers: {}, body });
    expect(await idempotency.begin(request)).toMatchObject({
      kind: 'replay',
      response: { status: 200, body },
    });

    expect(await chargeRows(db.sql, job.reservationId)).toBe(1);
    expect(delivered.delivery.creditsChargedMilli).toBe(2000);
    expect((await parts.ledger.checkBalanced(org)).balanced).toBe(true);
  });
});
