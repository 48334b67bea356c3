// A worker process for the crash test (worker-crash.test.ts): it claims jobs from the database named by
// DATABASE_URL and "runs" each until it is killed, printing `running <job id>` once a job is in hand.
// Run with `node --import tsx test/faults/worker-process.ts`.
import { makeLedger } from '../../src/billing/ledger.js';
import { openDatabase } from '../../src/db/connection.js';
import { makeJobQueue } from '../../src/jobs/queue.js';
import { startWorker } from '../../src/jobs/worker.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required');
const leaseMs = Number(process.env.LEASE_MS ?? 1500);

const db = await openDatabase({ databaseUrl, max: 4 });
const ledger = makeLedger({ sql: db.sql });
const queue = makeJobQueue({ sql: db.sql, ledger, holdTtlSeconds: 3600, notifications: true });
startWorker({
  queue,
  sql: db.sql,
  workerId: `crash-test-${process.pid}`,
  concurrency: 1,
  pollMs: 20,
  leaseMs,
  runBatch: async (jobs) => {
    for (const job of jobs) process.stdout.write(`running ${job.id}\n`);
    // Never finishes: the test kills this process mid-job.
    await new Promise(() => {});
    return [];
  },
});
process.stdout.write('ready\n');
