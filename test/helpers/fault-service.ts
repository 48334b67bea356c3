// The service of the statement-cutting fault tests (test/faults/one-commit.test.ts, batch-reservation.test.ts):
// a test database reached through the wire-protocol proxy (test/helpers/statement-proxy.ts) on one pooled
// connection, so a request's statements pass the proxy in a fixed order, the small feed loaded at NOW, and
// a connection of the test's own (`admin`) that bypasses the proxy to read what a request left behind.
// Real PostgreSQL only: PGlite's one connection cannot be lost.
import postgres from 'postgres';
import { expect } from 'vitest';
import { createFeedTestContext, type TestContext } from './app.js';
import { createTestDatabase, type TestDatabase, throughProxy } from './database.js';
import { type StatementProxy, startStatementProxy } from './statement-proxy.js';

export interface FaultService {
  t: TestContext;
  proxy: StatementProxy;
  /** The database itself, not through the proxy. */
  direct: TestDatabase;
  /** A connection of the test's own to `direct`. */
  admin: postgres.Sql;
  /** A fresh organisation whose key the authenticator has cached, so that only the request under test remains. */
  freshOrg(): ReturnType<TestContext['newOrg']>;
  close(): Promise<void>;
}

export async function startFaultService(options: { worker: boolean }): Promise<FaultService> {
  const direct = await createTestDatabase();
  const proxy = await startStatementProxy(direct.url!);
  const database = await throughProxy(direct, proxy, 1);
  // No fixture read cache: a request's statements must be the same in every run, whatever its timing.
  const t = await createFeedTestContext({ worker: options.worker, database, fixtureCacheTtlMs: 0 });
  const admin = postgres(direct.url!, { max: 1, onnotice: () => {} });
  return {
    t,
    proxy,
    direct,
    admin,
    async freshOrg() {
      const org = await t.newOrg();
      const credits = await t.app.inject({ method: 'GET', url: '/v1/credits', headers: org.auth });
      expect(credits.statusCode).toBe(200);
      return org;
    },
    async close() {
      await admin.end({ timeout: 5 });
      await t.close();
    },
  };
}
