// Delivers one job through the result path in a process of its own, for settlement-fault.test.ts: the
// postgres client can throw from a deferred write after its connection is terminated (porsager/postgres
// #1154, #1208), so the fault must not happen inside the test runner. Prints one JSON line: the outcome.
// Usage: node --import tsx test/faults/fault-deliverer.ts URL ORG_ID JOB_ID RESERVATION_ID REQUEST_ID
import { makeLedger } from '../../src/billing/ledger.js';
import { openDatabase } from '../../src/db/connection.js';
import { ApiError } from '../../src/errors.js';
import { makeJobQueue } from '../../src/jobs/queue.js';
import { makeKnownResults } from '../../src/results/known-results.js';
import { deliverJob } from '../../src/simulations/deliver.js';

const [url, orgId, jobId, reservationId, requestId] = process.argv.slice(2);
if (!url || !orgId || !jobId || !reservationId || !requestId) throw new Error('usage: URL ORG JOB RES REQ');

// The client's stray TypeError from a closed socket is not the outcome we report.
process.on('uncaughtException', (error) => process.stderr.write(`uncaught: ${String(error)}\n`));

const db = await openDatabase({ databaseUrl: url, max: 2 });
const ledger = makeLedger({ sql: db.sql });
const clock = () => new Date();
const engine = { estimateSeconds: (draws: number) => draws * 1e-6, assertAvailable() {} };
const queue = makeJobQueue({ sql: db.sql, ledger, clock, holdTtlSeconds: 3600, notifications: false });
let outcome: string;
try {
  const job = await queue.get(jobId);
  if (!job || job.orgId !== orgId || job.reservationId !== reservationId) throw new Error('no such job');
  const delivered = await deliverJob(
    { sql: db.sql, ledger, queue, knownResults: makeKnownResults(), clock, engine },
    { requestId, idempotencyKey: null },
    job,
  );
  outcome = delivered.kind;
} catch (error) {
  outcome = error instanceof ApiError ? error.code : `error: ${String(error)}`;
}
process.stdout.write(`${JSON.stringify({ outcome })}\n`);
process.exit(0);
