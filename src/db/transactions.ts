// How the ledger runs its transactions, and the one place where PostgreSQL errors are translated:
// lock conflicts are retried a bounded number of times; a lost connection becomes an ApiError whose code
// tells the client that the money effect is unknown (docs/decisions.md §7: settlement_unknown).
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

export type DatabaseFailure = 'retry' | 'connection_lost' | 'other';

export function classifyDatabaseError(error: unknown): DatabaseFailure {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return 'other';
  if (RETRY_SQLSTATES.has(code)) return 'retry';
  // Class 08: connection exception.
  if (CONNECTION_LOST_CODES.has(code) || code.startsWith('08')) return 'connection_lost';
  return 'other';
}

export const MAX_TRANSACTION_ATTEMPTS = 5;

export interface TransactionOptions {
  /** A caller's open transaction: the work joins it, and a retry is the caller's business. */
  tx?: TransactionSql | undefined;
  /** The code a lost connection turns into: what the client should be told about the money. */
  onConnectionLost: ErrorCode;
}

/** Run `work` in the caller's transaction, or in a new one retried on lock conflicts. */
export async function inTransaction<T>(
  sql: Sql,
  options: TransactionOptions,
  work: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  if (options.tx) {
    try {
      return await work(options.tx);
    } catch (error) {
      throw translate(error, options.onConnectionLost);
    }
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return (await sql.begin(work)) as T;
    } catch (error) {
      if (classifyDatabaseError(error) === 'retry' && attempt < MAX_TRANSACTION_ATTEMPTS) {
        // Jittered backoff so the transactions that collided do not collide again.
        await sleep(Math.random() * 5 * 2 ** attempt);
        continue;
      }
      throw translate(error, options.onConnectionLost);
    }
  }
}

function translate(error: unknown, onConnectionLost: ErrorCode): unknown {
  switch (classifyDatabaseError(error)) {
    case 'connection_lost':
      return new ApiError(onConnectionLost, { internal: error });
    case 'retry':
      return new ApiError('dependency_unavailable', { internal: error });
    default:
      return error;
  }
}
