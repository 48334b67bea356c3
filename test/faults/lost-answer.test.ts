// Fault test: a connection terminated while the server is sending a query's rows (pg_terminate_backend
// sends FATAL 57P01, then closes). The lost query is rejected, and the client's next queries, on the same
// pool connection reconnected, get exactly their own answers: postgres.js 3.4.9 kept the lost answer's
// rows, result and error for the next query (patches/postgres+3.4.9.patch, "nothing of a lost answer"),
// which then resolved with another query's rows or holes, or was rejected with the old error.
// Real PostgreSQL only: PGlite has one in-process connection that cannot be terminated.
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { usingServer } from '../helpers/database.js';

if (!usingServer) {
  console.info(
    'lost answer: skipped, it needs a PostgreSQL server (set DATABASE_URL); PGlite cannot lose a connection',
  );
}

describe.skipIf(!usingServer)('a connection lost in the middle of an answer', () => {
  it('rejects the lost query and answers the next ones with their own rows only', async () => {
    const url = process.env.DATABASE_URL!;
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const admin = postgres(url, { max: 1 });
    try {
      const [backend] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      const pid = backend!.pid;
      // Rows 1..2999 leave the server (its output buffer flushes every 8 KB) before row 3000 sleeps; the
      // connection is terminated during the sleep, with part of the answer received.
      const lost = sql`SELECT g, CASE WHEN g = 3000 THEN pg_sleep(5) END AS pause FROM generate_series(1, 5000) g`;
      const outcome = lost.then(
        () => 'answered',
        () => 'rejected',
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      await admin`SELECT pg_terminate_backend(${pid})`;
      expect(await outcome).toBe('rejected');
      expect(await sql`SELECT 1 AS x`).toEqual([{ x: 1 }]);
      const rows = await sql<{ g: number }[]>`SELECT g FROM generate_series(1, 10) g`;
      expect(rows.map((row) => row.g)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    } finally {
      await Promise.all([sql.end(), admin.end()]);
    }
  });
});
