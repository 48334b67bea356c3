// Child process of ledger-faults.test.ts: settles the holds named on the command line through its own
// connections (the test tags them with an application_name in DATABASE_URL to terminate them), and prints one JSON line per
// outcome as it happens. It runs apart from the test runner because a terminated connection can take
// the whole process down inside the postgres client (porsager/postgres#1154, #1208): the test must
// still be able to judge the database afterwards, whatever became of this process.
import { makeLedger } from '../../src/billing/ledger.js';
import { openDatabase } from '../../src/db/connection.js';
import { ApiError } from '../../src/errors.js';

const SETTLING_LANES = 4;

async function main(): Promise<void> {
  const [databaseUrl, ...holdIds] = process.argv.slice(2);
  if (!databaseUrl || holdIds.length === 0) throw new Error('usage: fault-settler DATABASE_URL HOLD_ID…');
  const db = await openDatabase({ databaseUrl, max: SETTLING_LANES });
  const ledger = makeLedger({ sql: db.sql });
  const queue = [...holdIds];
  // A few lanes, each settling one hold after another, so that terminations land among settlements.
  await Promise.all(
    Array.from({ length: SETTLING_LANES }, async () => {
      for (let holdId = queue.shift(); holdId !== undefined; holdId = queue.shift()) {
        const outcome = await ledger.settle(holdId, { requestId: `req_fault_${holdId}` }).then(
          (charge) => (charge.replayed ? 'replayed' : 'charged'),
          (error: unknown) => (error instanceof ApiError ? error.code : `unexpected: ${String(error)}`),
        );
        process.stdout.write(`${JSON.stringify({ holdId, outcome })}\n`);
      }
    }),
  );
  process.stdout.write(`${JSON.stringify({ done: true })}\n`);
  // Connections may be dead or poisoned; do not wait for a graceful end.
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(2);
});
