// A real app over a fresh test database, with helpers to make organisations and keys.
import type { KeyMode, Scope } from '../../src/accounts/keys.js';
import { makeOperator } from '../../src/accounts/operations.js';
import type { Plan } from '../../src/accounts/orgs.js';
import { makeLedger } from '../../src/billing/ledger.js';
import { loadConfig } from '../../src/config.js';
import { type App, buildApp } from '../../src/http/app.js';
import { makeMetrics } from '../../src/http/metrics.js';
import type { Services } from '../../src/http/services.js';
import { makeMemoryWindowCounter } from '../../src/limits/window-counter.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestContext {
  adminToken: string;
  app: App;
  db: TestDatabase;
  operator: ReturnType<typeof makeOperator>;
  services: Services;
  /** Pin the clock the app sees (null: real time again). */
  setNow(date: Date | null): void;
  newOrg(options?: {
    plan?: Plan;
    mode?: KeyMode;
    scopes?: Scope[];
    ipAllowlist?: string[];
    expiresAt?: Date | null;
    limits?: Record<string, number>;
  }): Promise<{ orgId: string; secret: string; keyId: string; auth: { authorization: string } }>;
  close(): Promise<void>;
}

export async function createTestContext(
  options: { adminToken?: string | null; env?: Record<string, string> } = {},
) {
  const db = await createTestDatabase();
  // Real time unless a test pins it with setNow.
  let pinned: Date | null = null;
  const clock = () => pinned ?? new Date();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    BASE_URL: 'http://api.test',
    ...(options.adminToken === null ? {} : { ADMIN_TOKEN: options.adminToken ?? ADMIN_TOKEN }),
    ...options.env,
  });
  const ledger = makeLedger({ sql: db.sql, clock });
  const services: Services = { ledger };
  const counters = makeMemoryWindowCounter(() => clock().getTime());
  const app = await buildApp({
    config,
    db,
    clock,
    counters,
    metrics: makeMetrics(),
    services,
    logger: false,
  });
  const operator = makeOperator({ sql: db.sql, ledger, clock });
  const context: TestContext = {
    adminToken: options.adminToken ?? ADMIN_TOKEN,
    app,
    db,
    operator,
    services,
    setNow(date) {
      pinned = date;
    },
    async newOrg(o = {}) {
      const org = await operator.createOrg({ name: 'Test org', plan: o.plan ?? 'pro', limits: o.limits });
      const key = await operator.createKey({
        orgId: org.org_id,
        mode: o.mode ?? 'live',
        scopes: o.scopes,
        ipAllowlist: o.ipAllowlist,
        expiresAt: o.expiresAt ?? null,
      });
      return {
        orgId: org.org_id,
        secret: key.secret,
        keyId: key.key_id,
        auth: { authorization: `Bearer ${key.secret}` },
      };
    },
    async close() {
      await app.close();
      await counters.close();
      await db.close();
    },
  };
  return context;
}
