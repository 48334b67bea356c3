// Numbered, forward-only SQL migrations from migrations/NNNN_name.sql, each applied once in its own
// transaction. An advisory lock serialises processes that start together against one server.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import { type Database, openDatabase, type Sql } from './connection.js';

/** migrations/ at the repository root, from src/db (tsx) or dist/src/db (compiled). */
function migrationsDirectory(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../../migrations'), path.resolve(here, '../../../migrations')];
  for (const candidate of candidates) {
    try {
      readdirSync(candidate);
      return candidate;
    } catch {}
  }
  throw new Error(`migrations directory not found near ${here}`);
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function readMigrations(directory = migrationsDirectory()): Migration[] {
  return readdirSync(directory)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(path.join(directory, file), 'utf8'),
    }));
}

// Arbitrary constant shared by every matchsim process: "ms" in ASCII.
const MIGRATION_LOCK_KEY = 0x6d73;

/** Apply pending migrations; returns the versions applied now. */
export async function runMigrations(sql: Sql, migrations = readMigrations()): Promise<number[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`;
    const rows = await tx<{ version: number }[]>`SELECT version FROM schema_migrations`;
    const done = new Set(rows.map((row) => row.version));
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await tx.unsafe(migration.sql);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})`;
      applied.push(migration.version);
    }
    return applied;
  });
}

let knownVersions: number[] | null = null;

/** Versions this code has that the database has not applied (empty = migrations current; /readyz). */
export async function pendingMigrations(sql: Sql): Promise<number[]> {
  knownVersions ??= readMigrations().map((migration) => migration.version);
  const [table] = await sql<{ name: string | null }[]>`SELECT to_regclass('schema_migrations')::text AS name`;
  if (!table?.name) return [...knownVersions];
  const rows = await sql<{ version: number }[]>`SELECT version FROM schema_migrations`;
  const done = new Set(rows.map((row) => row.version));
  return knownVersions.filter((version) => !done.has(version));
}

/**
 * The service's database, migrated: what `serve` opens (src/server.ts) and the CLI's commands on the
 * database (src/cli/operations.ts). Here, not in src/server.ts, so that a CLI command loads the database
 * and no HTTP server: each `matchsim` process starts in a fraction of the time.
 */
export async function openServiceDatabase(config: Config): Promise<Database> {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  await runMigrations(db.sql);
  return db;
}
