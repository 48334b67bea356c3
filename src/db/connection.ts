// Storage: a PostgreSQL server when DATABASE_URL is set, else an embedded PGlite under DATA_DIR served
// on a loopback socket so that the same `postgres` client, SQL and migrations run on both.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { withCommitHooks } from './commit-hooks.js';
import { assertDriverFixed } from './driver-fixes.js';
import { lockEmbeddedDatabase } from './embedded-lock.js';

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;

export interface Database {
  sql: Sql;
  /** `server` for a PostgreSQL server, `embedded` for PGlite (one connection, no LISTEN/NOTIFY). */
  kind: 'server' | 'embedded';
  /** The embedded database's files as a tar, for `loadDataDir` (absent on a server). */
  dumpDataDir?: () => Promise<Blob>;
  close(): Promise<void>;
}

// Rows come back with camelCase keys (`org_id` → `orgId`) and objects given to `sql(…)` insert into
// snake_case columns: one mapping for every table instead of a mapper per table. Only column names are
// transformed, never the keys inside json columns (documents keep their own field names).
// int8 (milli-credits, counters) as a JS number: every amount we keep stays far below 2^53.
// A database that does not accept a connection within CONNECT_TIMEOUT_SECONDS fails the statement
// waiting for it (a 503 with retry advice, src/db/transactions.ts) instead of holding the request for the
// client's default 30 s; reconnects back off at most MAX_RECONNECT_DELAY_SECONDS (the client's default
// grows to 20 s), so a database that is back serves the next request within a couple of seconds.
const CONNECT_TIMEOUT_SECONDS = 10;
const MAX_RECONNECT_DELAY_SECONDS = 2;
const reconnectDelaySeconds = (retries: number) =>
  (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, MAX_RECONNECT_DELAY_SECONDS);

const clientOptions = {
  connect_timeout: CONNECT_TIMEOUT_SECONDS,
  backoff: reconnectDelaySeconds,
  transform: {
    undefined: null,
    column: { from: postgres.toCamel, to: postgres.fromCamel },
  },
  connection: { TimeZone: 'UTC', application_name: 'matchsim' },
  types: {
    int8: {
      to: 20,
      from: [20] as number[],
      serialize: (value: number) => String(value),
      parse: (value: string) => Number(value),
    },
  },
  onnotice: () => {},
};

export interface OpenDatabaseOptions {
  databaseUrl?: string | undefined;
  /** Directory of the embedded database; `memory://` keeps it in memory (tests). */
  dataDir?: string;
  /** Pool size against a server. */
  max?: number;
  /**
   * The embedded database's files to start from, a `dumpDataDir()` of another (tests: one migrated
   * database copied for each test file, test/helpers/database.ts), instead of a new, empty one.
   */
  loadDataDir?: Blob;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  // An unpatched driver answers wrongly under faults without a word: refuse to start (src/db/driver-fixes.ts).
  assertDriverFixed();
  if (options.databaseUrl) {
    const sql = withCommitHooks(postgres(options.databaseUrl, { ...clientOptions, max: options.max ?? 10 }));
    return { sql, kind: 'server', close: () => sql.end({ timeout: 5 }) };
  }
  return openEmbedded(options.dataDir ?? './data', options.loadDataDir);
}

async function openEmbedded(dataDir: string, loadDataDir: Blob | undefined): Promise<Database> {
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-socket'),
  ]);
  let location = dataDir;
  let unlock = () => {};
  if (dataDir !== 'memory://') {
    unlock = lockEmbeddedDatabase(dataDir);
    location = path.resolve(dataDir, 'pglite');
    mkdirSync(location, { recursive: true });
  }
  const pglite = await PGlite.create(location, loadDataDir ? { loadDataDir } : {});
  const server = new PGLiteSocketServer({ db: pglite, port: 0, host: '127.0.0.1' });
  await server.start();
  const address = server.getServerConn();
  const port = Number(address.split(':').pop());
  // PGlite through the socket serves exactly one client connection: a second one fails with
  // `portal "" does not exist` (electric-sql/pglite#1046).
  const sql = withCommitHooks(
    postgres({
      ...clientOptions,
      host: '127.0.0.1',
      port,
      database: 'postgres',
      username: 'postgres',
      max: 1,
    }),
  );
  return {
    sql,
    kind: 'embedded',
    async dumpDataDir() {
      // Every page written to the files first, so that the copy starts without replaying the log.
      await sql`CHECKPOINT`;
      return pglite.dumpDataDir('none');
    },
    async close() {
      await sql.end({ timeout: 5 });
      await server.stop();
      await pglite.close();
      unlock();
    },
  };
}
