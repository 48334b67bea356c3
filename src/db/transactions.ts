// The one place where PostgreSQL failures are classified and translated, and the three ways the domain
// reaches the database: `inTransaction` (a transaction, retried on lock conflicts), `databaseRead` (plain
// reads, run once more after a transient failure) and `databaseWrite` (a statement outside a transaction,
// never repeated). A lost connection, repeated lock conflicts and timeouts leave as 503 ApiErrors with
// retry advice (docs/api.md §7: dependency_unavailable), or as the code the caller names when the money
// effect of a lost connection is unknown (docs/decisions.md §7: settlement_unknown).
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, type ErrorCode } from '../errors.js';
import type { Sql, TransactionSql } from './connection.js';

// serialization_failure, deadlock_detected: the transaction did nothing and may simply run again.
const RETRY_SQLSTATES = new Set(['40001', '40P01']);

// admin_shutdown (pg_terminate_backend), crash_shutdown, cannot_connect_now, and the postgres client's
// own codes for a socket that closed, reset or never opened.
const CONNECTION_LOST_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
]);

// query_canceled (statement_timeout, a cancel), lock_not_available (lock_timeout), idle session and
// transaction timeouts: the server gave up on the statement, which did nothing.
const TIMEOUT_SQLSTATES = new Set(['57014', '55P03', '25P03', '57P05']);

// Values PostgreSQL cannot store, which only a request can have put there: NUL and untranslatable
// characters, dates and numbers out of range, text that is not the column's type. Validation keeps them
// out (src/http/schemas/primitives.ts); this is the net below it.
const INVALID_VALUE_SQLSTATES = new Set(['22021', '22P05', '22008', '22007', '22003', '22001', '22P02']);

export type DatabaseFailure = 'retry' | 'connection_lost' | 'unavailable' | 'invalid_value' | 'other';

export function classifyDatabaseError(error: unknown): DatabaseFailure {
  if (error instanceof ApiError) return 'other';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return 'other';
  if (RETRY_SQLSTATES.has(code)) return 'retry';
  // Class 08: connection exception.
  if (CONNECTION_LOST_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return 'connection_lost';
  // Class 53: insufficient resources (too many connections, out of memory, disk full).
  if (TIMEOUT_SQLSTATES.has(code) || /^53[0-9A-Z]{3}$/.test(code)) return 'unavailable';
  if (INVALID_VALUE_SQLSTATES.has(code)) return 'invalid_value';
  return 'other';
}

/** A failure the same work may not meet again a moment later. */
export function isTransientDatabaseError(error: unknown): boolean {
  const kind = classifyDatabaseError(error);
  return kind === 'retry' || kind === 'connection_lost' || kind === 'unavailable';
}

export const MAX_TRANSACTION_ATTEMPTS = 5;
/** Retry-After of the 503s a database failure becomes. */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

const MESSAGES: Record<'retry' | 'connection_lost' | 'unavailable', string> = {
  retry: 'The database could not admit the request (repeated lock conflicts); retry shortly.',
  connection_lost: 'The connection to the database was lost; retry shortly.',
  unavailable: 'The database did not answer in time; retry shortly.',
};

/**
 * The ApiError a transient database failure becomes: `onConnectionLost` for a lost connection (what the
 * client must be told about the money), dependency_unavailable otherwise. Any other error is returned
 * unchanged.
 */
export function translateDatabaseError(
  error: unknown,
  onConnectionLost: ErrorCode = 'dependency_unavailable',
): unknown {
  const kind = classifyDatabaseError(error);
  if (kind !== 'retry' && kind !== 'connection_lost' && kind !== 'unavailable') return error;
  const code = kind === 'connection_lost' ? onConnectionLost : 'dependency_unavailable';
  return new ApiError(code, {
    ...(code === 'dependency_unavailable' ? { message: MESSAGES[kind] } : {}),
    retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
    internal: error,
  });
}

export interface TransactionOptions {
  /** A caller's open transaction: the work joins it, and a retry is the caller's business. */
  tx?: TransactionSql | undefined;
  /**
   * The code a lost connection turns into once `work` has started: what the client should be told about
   * the money. The default, dependency_unavailable, says `not_charged`: a transaction that may charge
   * names settlement_unknown (or its caller finds out what committed before answering, as a cache hit
   * does: src/simulations/submit.ts), since its COMMIT may have gone through (docs/decisions.md §7).
   */
  onConnectionLost?: ErrorCode;
  /**
   * A read-only snapshot (repeatable read): nothing can be half done, so a lost connection or a timeout
   * is retried once as well.
   */
  readOnly?: boolean;
}

/**
 * Run `work` in the caller's transaction, or in a new one retried on lock conflicts. A lost connection
 * or a timeout is retried once where nothing can have happened: before `work` started (BEGIN went to a
 * connection the server had closed) or in a read-only transaction. Once `work` has started, the
 * transaction may have committed, so the caller's `onConnectionLost` code is answered.
 */
export async function inTransaction<T>(
  sql: Sql,
  options: TransactionOptions,
  work: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  const onConnectionLost = options.onConnectionLost ?? 'dependency_unavailable';
  if (options.tx) {
    try {
      return await work(options.tx);
    } catch (error) {
      throw translateDatabaseError(error, onConnectionLost);
    }
  }
  let transientRetries = 1;
  for (let attempt = 1; ; attempt++) {
    let started = false;
    const run = (tx: TransactionSql) => {
      started = true;
      return work(tx);
    };
    try {
      const result = options.readOnly
        ? sql.begin('isolation level repeatable read read only', run)
        : sql.begin(run);
      return (await result) as T;
    } catch (error) {
      const kind = classifyDatabaseError(error);
      if (kind === 'retry' && attempt < MAX_TRANSACTION_ATTEMPTS) {
        // Jittered backoff so the transactions that collided do not collide again.
        await sleep(Math.random() * 5 * 2 ** attempt);
        continue;
      }
      const transient = kind === 'connection_lost' || kind === 'unavailable';
      if (transient && transientRetries > 0 && (!started || options.readOnly)) {
        transientRetries--;
        continue;
      }
      throw translateDatabaseError(error, onConnectionLost);
    }
  }
}

/**
 * Plain reads outside a transaction: repeating them is safe, so a transient failure runs `work` once
 * more (the pool replaces a terminated connection); a second failure leaves as a 503.
 */
export async function databaseRead<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isTransientDatabaseError(error)) throw error;
  }
  try {
    return await work();
  } catch (error) {
    throw translateDatabaseError(error);
  }
}

/**
 * A statement that changes something, outside a transaction: never repeated here (it may have been
 * applied before the connection was lost), only translated.
 */
export async function databaseWrite<T>(
  work: () => Promise<T>,
  options: { onConnectionLost?: ErrorCode } = {},
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw translateDatabaseError(error, options.onConnectionLost);
  }
}
