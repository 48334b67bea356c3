// Delivers one job through the result path in a process of its own, for settlement-fault.test.ts: the
// postgres client can throw from a deferred write after its connection is terminated (porsager/postgres
// #1154, #1208), so the fault must not happen inside the test runner. Prints one JSON line: the outcome.
// Usage: node --import tsx test/faults/fault-deliverer.ts URL ORG_ID JOB_ID RESERVATION_ID REQUEST_ID
import { makeLedger } from '../../src/billing/ledger.js';
import { openDatabase } from '../../src/db/connection.js';
import { ApiError } from '../../src/errors.js';
import { makeResultStore } from '../../src/sim/results.js';
import { buildTestResponse } from '../sim/setup.js';

const [url, orgId, jobId, reservationId, requestId] = process.argv.slice(2);
if (!url || !orgId || !jobId || !reservationId || !requestId) throw new Error('usage: URL ORG JOB RES REQ');

// The client's stray TypeError from a closed socket is not the outcome we report.
process.on('uncaughtException', (error) => process.stderr.write(`uncaught: ${String(error)}\n`));

const db = await openDatabase({ databaseUrl: url, max: 2 });
const ledger = makeLedger({ sql: db.sql });
const results = makeResultStore({ sql: db.sql, ledger });
let outcome: string;
try {
  const delivered = await results.deliverJob({
    orgId,
    jobId,
    reservationId,
    requestId,
    buildResponse: buildTestResponse,
  });
  outcome = delivered.status;
} catch (error) {
  outcome = error instanceof ApiError ? error.code : `error: ${String(error)}`;
}
process.stdout.write(`${JSON.stringify({ outcome })}\n`);
process.exit(0);
