// Idempotency-Key records (docs/decisions.md §7): the scope is organisation + key mode + method + path + key,
// kept 24 hours. The first response is stored as sent and replayed byte for byte (a simulation document
// in it is stored once, in results: the record keeps the rest of the body and names the result, and the
// HTTP layer puts the document's text back); the same key with a different body is a conflict; the same key while the first request runs is a retryable conflict.
//
// A 429 or 5xx is never stored: a retry runs again. If the first attempt had already created a job or
// batch (attachJob, in the transaction that created it), the record stays with that reference so the
// retry continues with what exists (e.g. after settlement_unknown) instead of reserving again.
//
// Beginning, completing and releasing a record are each safe to run twice (an attempt's token finds its
// own record again; completion and release change only a record this attempt still has in flight), so
// each runs again after a lost connection: a request that has ended frees its key at once or leaves
// its answer to replay, instead of leaving it in flight until the lease runs out (docs/decisions.md §7).
// The HTTP layer (src/http/idempotent.ts) reads the header, replays with `Idempotent-Replayed: true` and
// decides what is storable; this module is the only code that touches the idempotency_keys table.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Owner } from '../accounts/keys.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { inTransaction, isTransientDatabaseError, translateDatabaseError } from '../db/transactions.js';
import { ApiError } from '../errors.js';

/** docs/decisions.md §7: records are kept 24 hours. */
const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/**
 * How long a first attempt may stay in flight before a retry may take its record over: longer than
 * any request runs (wait_seconds is at most 25), so only a crashed process leaves one this long.
 */
export const IN_FLIGHT_LEASE_MS = 60_000;
/**
 * Runs of a record's own statement after lost connections: beginning (the request then answers 503 with
 * nothing done) and ending it (completion or release: the request has ended, and its key must not stay
 * in flight), with a backoff of 25, 50, 100 ms between them.
 */
const BEGIN_RUNS = 2;
const END_RUNS = 4;
const RECORD_RETRY_BACKOFF_MS = 25;
/** Retry-After of an in-flight conflict. */
const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

export interface IdempotencyScope extends Owner {
  method: string;
  path: string;
  key: string;
}

export interface IdempotencyRecord extends IdempotencyScope {
  bodyHash: string;
  /** This attempt's token: only it may complete or release the record. */
  attempt: string;
  /** What an earlier attempt of the same request created, if anything. */
  jobId: string | null;
  batchId: string | null;
  createdAt: Date;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** The body exactly as sent, or, with `document`, as sent without that document's text. */
  body: string;
  /**
   * The stored result whose document text goes back into `body` at offset `at` (one stored copy per
   * document: the results row keeps it, the record only names it).
   */
  document?: { resultId: number; at: number } | undefined;
}

export type IdempotencyStart =
  | { kind: 'new'; record: IdempotencyRecord }
  | { kind: 'replay'; response: StoredResponse };

export interface IdempotencyStore {
  begin(request: IdempotencyScope & { bodyHash: string }): Promise<IdempotencyStart>;
  /** Call in the transaction that creates the job or batch. */
  attachJob(
    tx: TransactionSql,
    record: IdempotencyRecord,
    created: { jobId: string } | { batchId: string },
  ): Promise<void>;
  /** Stores the response for replays; a 429 or 5xx releases the record instead. True when stored. */
  complete(record: IdempotencyRecord, response: StoredResponse): Promise<boolean>;
  /** Ends this attempt without a stored response (an error was answered): a retry runs again. */
  release(record: IdempotencyRecord): Promise<void>;
  /** Deletes records older than 24 hours; returns how many. */
  purgeExpired(now?: Date): Promise<number>;
}

export interface IdempotencyStoreDeps {
  sql: Sql;
  clock?: () => Date;
  inFlightLeaseMs?: number;
}

/** An idempotency_keys row. */
interface RecordRow extends IdempotencyRecord {
  state: 'in_flight' | 'complete' | 'open';
  lockedUntil: Date | null;
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  responseResultId: number | null;
  responseDocumentAt: number | null;
  expiresAt: Date;
}

/** Responses that must not be replayed: a 429 or a 5xx deserves a fresh attempt on retry. */
function isStorableStatus(status: number): boolean {
  return status !== 429 && status < 500;
}

interface StoreDeps {
  sql: Sql;
  clock: () => Date;
  leaseMs: number;
}

/** This attempt's claim on a record: its token, its lease and the record's lifetime. */
interface Attempt {
  scope: IdempotencyScope;
  bodyHash: string;
  attempt: string;
  now: Date;
  lockedUntil: Date;
  expiresAt: Date;
}

function whereScope(db: Sql | TransactionSql, scope: IdempotencyScope) {
  return db`org_id = ${scope.orgId} AND mode = ${scope.mode} AND method = ${scope.method}
    AND path = ${scope.path} AND key = ${scope.key}`;
}

function whereRecord(db: Sql | TransactionSql, record: IdempotencyRecord) {
  return db`${whereScope(db, record)} AND attempt = ${record.attempt}`;
}

async function begin(
  deps: StoreDeps,
  request: IdempotencyScope & { bodyHash: string },
): Promise<IdempotencyStart> {
  const now = deps.clock();
  const { bodyHash, ...scope } = request;
  const attempt: Attempt = {
    scope: { orgId: scope.orgId, mode: scope.mode, method: scope.method, path: scope.path, key: scope.key },
    bodyHash,
    attempt: randomUUID(),
    now,
    lockedUntil: new Date(now.getTime() + deps.leaseMs),
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
  };
  return repeatedIfLost(() => inTransaction(deps.sql, {}, (tx) => beginAttempt(tx, attempt)), BEGIN_RUNS);
}

/**
 * `work` run again after a transient failure, up to `runs` times in all with a short backoff: for the
 * record's own statements, which may be run twice. A lost commit of `begin` leaves the record in flight
 * under this attempt's token, and the next run finds it as its own.
 */
async function repeatedIfLost<T>(work: () => Promise<T>, runs: number): Promise<T> {
  for (let run = 1; ; run++) {
    try {
      return await work();
    } catch (error) {
      const transient = isTransientDatabaseError(error) || isTransientDatabaseError(internalOf(error));
      if (!transient || run >= runs) throw translateDatabaseError(error);
    }
    await sleep(RECORD_RETRY_BACKOFF_MS * 2 ** (run - 1));
  }
}

/** The database failure an ApiError was made from (translateDatabaseError keeps it as `internal`). */
function internalOf(error: unknown): unknown {
  return error instanceof ApiError ? error.options.internal : undefined;
}

async function beginAttempt(tx: TransactionSql, attempt: Attempt): Promise<IdempotencyStart> {
  const { now, bodyHash } = attempt;
  const [inserted] = await tx<RecordRow[]>`
    INSERT INTO idempotency_keys (org_id, mode, method, path, key, body_hash, state, attempt, locked_until,
                                  created_at, expires_at)
    VALUES (${attempt.scope.orgId}, ${attempt.scope.mode}, ${attempt.scope.method}, ${attempt.scope.path},
            ${attempt.scope.key}, ${bodyHash}, 'in_flight', ${attempt.attempt}, ${attempt.lockedUntil},
            ${now}, ${attempt.expiresAt})
    ON CONFLICT DO NOTHING
    RETURNING *`;
  if (inserted) return { kind: 'new', record: recordFromRow(inserted) };
  const [row] = await tx<RecordRow[]>`
    SELECT * FROM idempotency_keys WHERE ${whereScope(tx, attempt.scope)} FOR UPDATE`;
  if (!row) throw new Error('idempotency record vanished under its lock');
  return continueExisting(tx, row, attempt);
}

// The key was used before: free again after 24 hours, a conflict on another body, a replay when
// complete, a retryable conflict while in flight, else this attempt takes the record over.
async function continueExisting(
  tx: TransactionSql,
  row: RecordRow,
  attempt: Attempt,
): Promise<IdempotencyStart> {
  const { now, scope } = attempt;
  if (row.expiresAt.getTime() <= now.getTime()) {
    const [fresh] = await tx<RecordRow[]>`
      UPDATE idempotency_keys
      SET body_hash = ${attempt.bodyHash}, state = 'in_flight', attempt = ${attempt.attempt},
          locked_until = ${attempt.lockedUntil}, job_id = NULL, batch_id = NULL, response_status = NULL,
          response_headers = NULL, response_body = NULL, response_result_id = NULL,
          response_document_at = NULL, created_at = ${now}, expires_at = ${attempt.expiresAt}
      WHERE ${whereScope(tx, scope)}
      RETURNING *`;
    return { kind: 'new', record: recordFromRow(fresh!) };
  }
  if (row.bodyHash !== attempt.bodyHash) {
    throw new ApiError('idempotency_conflict', {
      message: 'This Idempotency-Key was used with a different request body.',
      recovery: { idempotency_key: scope.key },
    });
  }
  if (row.state === 'complete') {
    const response: StoredResponse = {
      status: row.responseStatus!,
      headers: row.responseHeaders ?? {},
      body: row.responseBody!,
    };
    if (row.responseResultId !== null && row.responseDocumentAt !== null) {
      response.document = { resultId: Number(row.responseResultId), at: row.responseDocumentAt };
    }
    return { kind: 'replay', response };
  }
  // This attempt's own record: its first begin committed but the acknowledgement was lost.
  if (row.state === 'in_flight' && row.attempt === attempt.attempt)
    return { kind: 'new', record: recordFromRow(row) };
  if (row.state === 'in_flight' && row.lockedUntil && row.lockedUntil.getTime() > now.getTime()) {
    throw new ApiError('idempotency_conflict', {
      message: 'A request with this Idempotency-Key is still in flight.',
      fix: 'Retry with the same Idempotency-Key after a short wait.',
      retryable: true,
      strategy: 'backoff_with_jitter',
      idempotencyKey: 'same',
      retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS,
    });
  }
  // Released after an error, or in flight in a process that stopped: this attempt takes over and
  // inherits what the earlier one created.
  const [taken] = await tx<RecordRow[]>`
    UPDATE idempotency_keys
    SET state = 'in_flight', attempt = ${attempt.attempt}, locked_until = ${attempt.lockedUntil}
    WHERE ${whereScope(tx, scope)}
    RETURNING *`;
  return { kind: 'new', record: recordFromRow(taken!) };
}

async function attachJob(
  tx: TransactionSql,
  record: IdempotencyRecord,
  created: { jobId: string } | { batchId: string },
): Promise<void> {
  const jobId = 'jobId' in created ? created.jobId : null;
  const batchId = 'batchId' in created ? created.batchId : null;
  await tx`
    UPDATE idempotency_keys
    SET job_id = COALESCE(${jobId}, job_id), batch_id = COALESCE(${batchId}, batch_id)
    WHERE ${whereRecord(tx, record)}`;
  if (jobId) record.jobId = jobId;
  if (batchId) record.batchId = batchId;
}

async function complete(
  deps: StoreDeps,
  record: IdempotencyRecord,
  response: StoredResponse,
): Promise<boolean> {
  if (!isStorableStatus(response.status)) {
    await release(deps, record);
    return false;
  }
  const rows = await repeatedIfLost(
    () => deps.sql`
      UPDATE idempotency_keys
      SET state = 'complete', locked_until = NULL, response_status = ${response.status},
          response_headers = ${JSON.stringify(response.headers)}::text::jsonb, response_body = ${response.body},
          response_result_id = ${response.document?.resultId ?? null},
          response_document_at = ${response.document?.at ?? null}
      WHERE ${whereRecord(deps.sql, record)} AND state = 'in_flight'
      RETURNING key`,
    END_RUNS,
  );
  return rows.length === 1;
}

async function release(deps: StoreDeps, record: IdempotencyRecord): Promise<void> {
  await repeatedIfLost(
    () =>
      inTransaction(deps.sql, {}, async (tx) => {
        const deleted = await tx`
          DELETE FROM idempotency_keys
          WHERE ${whereRecord(tx, record)} AND state = 'in_flight' AND job_id IS NULL AND batch_id IS NULL
          RETURNING key`;
        if (deleted.length > 0) return;
        await tx`
          UPDATE idempotency_keys SET state = 'open', locked_until = NULL
          WHERE ${whereRecord(tx, record)} AND state = 'in_flight'`;
      }),
    END_RUNS,
  );
}

async function purgeExpired(deps: StoreDeps, now: Date): Promise<number> {
  const rows = await deps.sql`DELETE FROM idempotency_keys WHERE expires_at <= ${now} RETURNING key`;
  return rows.length;
}

export function makeIdempotencyStore(options: IdempotencyStoreDeps): IdempotencyStore {
  const deps: StoreDeps = {
    sql: options.sql,
    clock: options.clock ?? (() => new Date()),
    leaseMs: options.inFlightLeaseMs ?? IN_FLIGHT_LEASE_MS,
  };
  return {
    begin: (request) => begin(deps, request),
    attachJob,
    complete: (record, response) => complete(deps, record, response),
    release: (record) => release(deps, record),
    purgeExpired: (now = deps.clock()) => purgeExpired(deps, now),
  };
}

function recordFromRow(row: RecordRow): IdempotencyRecord {
  const { orgId, mode, method, path, key, bodyHash, attempt, jobId, batchId, createdAt } = row;
  return { orgId, mode, method, path, key, bodyHash, attempt, jobId, batchId, createdAt };
}
