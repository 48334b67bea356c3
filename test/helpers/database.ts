// A fresh, migrated database per test file: a new database on the PostgreSQL server when
// DATABASE_URL is set (CI), else an in-memory PGlite. Each is a copy of one migrated database that the
// run makes once (test/helpers/database-template.ts); a database migrated only up to a version is
// migrated on its own.
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import postgres from 'postgres';
import { inject } from 'vitest';
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
  const partly = options.migrateUpTo !== undefined;
  const migrations = readMigrations().filter((m) => m.version <= (options.migrateUpTo ?? Infinity));
  if (!serverUrl) {
    if (partly) {
      const db = await openDatabase({ dataDir: 'memory://' });
      await runMigrations(db.sql, migrations);
      return { ...db, url: undefined };
    }
    const db = await openDatabase({ dataDir: 'memory://', loadDataDir: await migratedEmbeddedFiles() });
    return { ...db, url: undefined };
  }
  const name = `matchsim_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  if (partly) {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } else {
    await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${await migratedServerTemplate(serverUrl)}`);
  }
  const url = databaseUrl(serverUrl, name);
  const db = await openDatabase({ databaseUrl: url, max: options.max ?? 20 });
  if (partly) await runMigrations(db.sql, migrations);
  return {
    ...db,
    url,
    async close() {
      await db.close();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
}

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * This run's migrated PGlite data directory, as a tar: read from its file, or made and written there by
 * the first test file that needs it (two at once each make it and write it whole, under its final name
 * only when written).
 */
async function migratedEmbeddedFiles(): Promise<Blob> {
  const file = inject('databaseTemplate').embeddedFile;
  try {
    return new Blob([await readFile(file)]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const db = await openDatabase({ dataDir: 'memory://' });
  let files: Blob;
  try {
    await runMigrations(db.sql);
    files = await db.dumpDataDir!();
  } finally {
    await db.close();
  }
  const written = `${file}.${process.pid}`;
  await writeFile(written, new Uint8Array(await files.arrayBuffer()));
  await rename(written, file);
  return files;
}

/**
 * This run's migrated template database on the server, made by the first test file that needs it while
 * the others wait on an advisory lock. Nothing stays connected to it: CREATE DATABASE … TEMPLATE
 * refuses a template in use.
 */
let serverTemplate: Promise<string> | undefined;
function migratedServerTemplate(serverUrl: string): Promise<string> {
  serverTemplate ??= (async () => {
    const name = inject('databaseTemplate').serverName;
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    try {
      await admin`SELECT pg_advisory_lock(hashtext(${name}))`;
      const [made] = await admin`SELECT 1 FROM pg_database WHERE datname = ${name}`;
      if (!made) {
        // Migrated under another name, so that a failed migration leaves no template to copy.
        const migrating = `${name}_migrating`;
        await admin.unsafe(`DROP DATABASE IF EXISTS ${migrating}`);
        await admin.unsafe(`CREATE DATABASE ${migrating}`);
        const db = await openDatabase({ databaseUrl: databaseUrl(serverUrl, migrating), max: 1 });
        try {
          await runMigrations(db.sql);
        } finally {
          await db.close();
        }
        await admin.unsafe(`ALTER DATABASE ${migrating} RENAME TO ${name}`);
      }
      await admin`SELECT pg_advisory_unlock(hashtext(${name}))`;
    } finally {
      await admin.end({ timeout: 5 });
    }
    return name;
  })();
  return serverTemplate;
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
