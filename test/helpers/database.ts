// A fresh, migrated database per test file: a new database on the PostgreSQL server when
// DATABASE_URL is set (CI), else an in-memory PGlite.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { type Database, openDatabase } from '../../src/db/connection.js';
import { readMigrations, runMigrations } from '../../src/db/migrations.js';

export const usingServer = Boolean(process.env.DATABASE_URL);

export interface TestDatabase extends Database {
  /** Connection string of the test database (server only), for child processes. */
  url: string | undefined;
}

/** `migrateUpTo`: apply the migrations up to that version only (a migration's own test applies the rest). */
export async function createTestDatabase(
  options: { max?: number; migrateUpTo?: number } = {},
): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  const migrations = readMigrations().filter((m) => m.version <= (options.migrateUpTo ?? Infinity));
  if (!serverUrl) {
    const db = await openDatabase({ dataDir: 'memory://' });
    await runMigrations(db.sql, migrations);
    return { ...db, url: undefined };
  }
  const name = `matchsim_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ databaseUrl: url.toString(), max: options.max ?? 20 });
  await runMigrations(db.sql, migrations);
  return {
    ...db,
    url: url.toString(),
    async close() {
      await db.close();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
}

/**
 * The test database `direct` reached through a proxy at `proxy.url` with a pool of `max` connections;
 * closing it closes the pool, then the proxy, then the database.
 */
export async function throughProxy(
  direct: TestDatabase,
  proxy: { url: string; close(): Promise<void> },
  max: number,
): Promise<TestDatabase> {
  const proxied = await openDatabase({ databaseUrl: proxy.url, max });
  return {
    ...proxied,
    url: proxy.url,
    async close() {
      await proxied.close();
      await proxy.close();
      await direct.close();
    },
  };
}
