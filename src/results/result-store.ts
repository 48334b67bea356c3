// Finished documents (the result cache) and their deliveries (docs/decisions.md §2, §5, §6): the only
// code that touches the results and deliveries tables.
//
// A shared result (neither side custom) is reusable by every organisation; a private one only by the
// organisation that ran it. A document is stored once; every delivery of it gets its own `sim_…` id,
// receipt and charge, and keeps the facts of that delivery (when, to which request, what it charged,
// the balance it left), so that the result path can give the same delivery again.
import type { KeyMode, Owner } from '../accounts/keys.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { type DocumentSummary, documentWireText } from '../engine/document-schema.js';
import { type StoredDocument, storedDocument } from '../engine/stored-document.js';

/** `shared`: reusable by every organisation; `private`: by the organisation that ran it alone. */
export type ResultScope = 'shared' | 'private';

/** What finds a cached result: its cache key and owner (a shared result has none). */
export interface ResultLookup {
  cacheKey: string;
  scope: ResultScope;
  orgId: string | null;
}

/**
 * The results rows a process has read or written (known-results.ts makes one per database): a row
 * known once is known for good, since a stored row never changes and is never deleted.
 */
export interface KnownResults {
  byId(resultId: number): SimulationResult | undefined;
  byLookup(lookup: ResultLookup): SimulationResult | undefined;
  /** Keeps a row read or written, its document being the wire text. */
  remember(result: SimulationResult): void;
}

/** The figures of a document that a fixture's summary shows (docs/api.md §2.2), kept beside it. */
export type ResultSummary = DocumentSummary;

interface ResultFacts {
  cacheKey: string;
  scope: ResultScope;
  /** The owner of a private result; ignored (stored as NULL) for a shared one. */
  orgId: string | null;
  fixtureId: number;
  dataVersion: string;
  draws: number;
  engine: string;
  runMs: number;
  gpuMs: number;
}

export interface NewResult extends ResultFacts {
  /** The document's figures its fixture summary shows (documentSummary, src/engine/document.ts). */
  summary: ResultSummary;
  /**
   * The same document as the wire carries it (documentWireText), in its stored form (deflated on the job
   * thread, src/engine/stored-document.ts): stored, and spliced into responses.
   */
  document: StoredDocument;
}

/**
 * A results row. The document is its wire text (serialised through its schema) in the stored form: a
 * response splices it in as it is, so a delivery neither parses nor serialises it.
 */
export interface SimulationResult extends ResultFacts {
  id: number;
  document: StoredDocument;
  summary: ResultSummary;
  createdAt: Date;
}

/**
 * A results row as read: the stored form (migration 0021), or, in rows stored before it, the text; rows
 * stored before migration 0010 hold the engine's text, not the wire text.
 */
interface ResultRow extends ResultFacts, ResultSummary {
  id: number;
  documentDeflated: Uint8Array | null;
  documentCrc32: number | null;
  documentBytes: number | null;
  documentText: string | null;
  wireText: boolean;
  createdAt: Date;
}

function resultColumns(db: Sql | TransactionSql) {
  return db`id, cache_key, scope, org_id, fixture_id, data_version, draws, engine, run_ms, gpu_ms, created_at,
            document_deflated, document_crc32, document_bytes, document AS document_text, wire_text, home_win,
            draw, away_win, expected_goals_home, expected_goals_away`;
}

/**
 * The result of a row read with resultColumns. A row stored before migration 0021 has its text put in
 * the stored form (through the schema first where it was stored before migration 0010), and stored so
 * once: the same bytes its deliveries always sent, now without the work (an UPDATE that only such a row
 * takes, once).
 */
async function resultOfRow(
  db: Sql | TransactionSql,
  row: ResultRow,
  known: KnownResults | undefined,
): Promise<SimulationResult> {
  const {
    documentDeflated,
    documentCrc32,
    documentBytes,
    documentText,
    wireText,
    homeWin,
    draw,
    awayWin,
    expectedGoalsHome,
    expectedGoalsAway,
    ...facts
  } = row;
  let document: StoredDocument;
  if (documentDeflated !== null) {
    // A plain view of the driver's Buffer: the form a job thread's message gives (stored-document.ts).
    const deflated = new Uint8Array(
      documentDeflated.buffer,
      documentDeflated.byteOffset,
      documentDeflated.byteLength,
    );
    document = { deflated, crc32: documentCrc32!, bytes: documentBytes! };
  } else {
    const text = wireText ? documentText! : documentWireText(JSON.parse(documentText!));
    document = storedDocument(text);
    await db`
      UPDATE results
      SET document = NULL, document_deflated = ${Buffer.from(document.deflated)},
          document_crc32 = ${document.crc32}, document_bytes = ${document.bytes}, wire_text = true
      WHERE id = ${row.id} AND document_deflated IS NULL`;
  }
  const result = {
    ...facts,
    document,
    summary: { homeWin, draw, awayWin, expectedGoalsHome, expectedGoalsAway },
  };
  known?.remember(result);
  return result;
}

/** A deliveries row: one delivery of a result to an organisation. */
export interface Delivery {
  id: string;
  orgId: string;
  jobId: string | null;
  resultId: number;
  mode: KeyMode;
  creditsChargedMilli: number;
  /** The organisation's available credits right after the charge; null for test keys. */
  creditsRemainingMilli: number | null;
  /** The request that delivered it. */
  requestId: string | null;
  idempotencyKey: string | null;
  createdAt: Date;
}

export type NewDelivery = Omit<Delivery, 'requestId' | 'idempotencyKey'> & {
  requestId?: string | null | undefined;
  idempotencyKey?: string | null | undefined;
};

/**
 * Stores a finished document; when one with the same cache key and owner exists, returns that one. The
 * caller may remember the row (known-results.ts) once its transaction has committed, not before: a
 * rolled-back row must not be found by its cache key.
 */
export async function storeResult(
  tx: TransactionSql,
  result: NewResult,
  now: Date,
): Promise<SimulationResult> {
  return (await storeResults(tx, [result], now))[0]!;
}

const ownerKey = (scope: ResultScope, orgId: string | null, cacheKey: string) =>
  `${scope}:${orgId ?? ''}:${cacheKey}`;

/**
 * storeResult for many documents in one statement (a worker's pack of outcomes), in the order given.
 * The rows travel as one JSON document; a cache key stored before (or twice in `results`) gives the row
 * that holds it.
 */
/** The values of a stored result, in the order of storeResults' `AS r(…)`. */
const RESULT_VALUES = [
  'cache_key',
  'scope',
  'org_id',
  'fixture_id',
  'data_version',
  'draws',
  'document_deflated',
  'document_crc32',
  'document_bytes',
  'engine',
  'run_ms',
  'gpu_ms',
  'home_win',
  'draw',
  'away_win',
  'expected_goals_home',
  'expected_goals_away',
] as const;

export async function storeResults(
  tx: TransactionSql,
  results: readonly NewResult[],
  now: Date,
): Promise<SimulationResult[]> {
  return (await insertResults(tx, results, now)).results;
}

/** What insertResults stored: the rows in the order given, and which of them this statement inserted. */
export interface InsertedResults {
  results: SimulationResult[];
  /** Ids of the rows made here; the others were stored before (the same cache key and owner). */
  newIds: ReadonlySet<number>;
}

/** storeResults, saying which rows it made (a caller may take them back: takeBackResults). */
export async function insertResults(
  tx: TransactionSql,
  results: readonly NewResult[],
  now: Date,
): Promise<InsertedResults> {
  if (results.length === 0) return { results: [], newIds: new Set() };
  const rows = results.map((result) => {
    const owner = result.scope === 'private' ? result.orgId : null;
    if (result.scope === 'private' && !owner) throw new Error('a private result needs its organisation');
    const { summary } = result;
    const values: Record<(typeof RESULT_VALUES)[number], unknown> = {
      cache_key: result.cacheKey,
      scope: result.scope,
      org_id: owner,
      fixture_id: result.fixtureId,
      data_version: result.dataVersion,
      draws: result.draws,
      // A Buffer goes as bytea's hex text: some 22 KB for a document's 11 KB of deflate.
      document_deflated: Buffer.from(
        result.document.deflated.buffer,
        result.document.deflated.byteOffset,
        result.document.deflated.byteLength,
      ),
      document_crc32: result.document.crc32,
      document_bytes: result.document.bytes,
      engine: result.engine,
      run_ms: result.runMs,
      gpu_ms: result.gpuMs,
      home_win: summary.homeWin,
      draw: summary.draw,
      away_win: summary.awayWin,
      expected_goals_home: summary.expectedGoalsHome,
      expected_goals_away: summary.expectedGoalsAway,
    };
    // Rows as arrays: the values builder reads objects' keys through no column transform. (Its types
    // allow strings and numbers only; null is a value too.)
    return RESULT_VALUES.map((name) => values[name]);
  });
  // One parameter per value (VALUES ($1, …), (…)), so each document travels as its own parameter, as it
  // is (migration 0015: as json, the server parsed each one again). Inside one JSON parameter
  // (json_to_recordset) every quote of a 60 KB document was escaped by the service and unescaped by the
  // server: a pack of 100 cost the service about 1.3 ms and PostgreSQL 1.5 ms a document, against 0.6
  // and 0.3 ms as text parameters; the stored form (migration 0021) is a seventh of the text's size. The
  // column keeps the bytes as given, so every delivery of it reads the same.
  const inserted = await tx<
    Array<{ id: number; cacheKey: string; scope: ResultScope; orgId: string | null; createdAt: Date }>
  >`
    INSERT INTO results (cache_key, scope, org_id, fixture_id, data_version, draws, document_deflated,
                         document_crc32, document_bytes, wire_text, engine, run_ms, gpu_ms, created_at, home_win,
                         draw, away_win, expected_goals_home, expected_goals_away)
    SELECT cache_key, scope, org_id, fixture_id::bigint, data_version, draws::integer, document_deflated::bytea,
           document_crc32::bigint, document_bytes::integer, true, engine, run_ms::float8, gpu_ms::float8, ${now},
           home_win::float8, draw::float8, away_win::float8, expected_goals_home::float8,
           expected_goals_away::float8
    FROM (VALUES ${tx(rows as never)}) AS r(
      cache_key, scope, org_id, fixture_id, data_version, draws, document_deflated, document_crc32,
      document_bytes, engine, run_ms, gpu_ms, home_win, draw, away_win, expected_goals_home,
      expected_goals_away)
    ON CONFLICT DO NOTHING
    RETURNING id, cache_key, scope, org_id, created_at`;
  const stored = new Map(inserted.map((row) => [ownerKey(row.scope, row.orgId, row.cacheKey), row]));
  const answers: SimulationResult[] = [];
  for (const result of results) {
    const owner = result.scope === 'private' ? result.orgId : null;
    const row = stored.get(ownerKey(result.scope, owner, result.cacheKey));
    // The caller has the document: reading back what it just wrote would cost the wire a copy per
    // finished job.
    if (row) {
      answers.push({ ...result, orgId: owner, id: row.id, createdAt: row.createdAt });
      continue;
    }
    const existing = await findCachedResult(tx, {
      cacheKey: result.cacheKey,
      scope: result.scope,
      orgId: owner,
    });
    if (!existing) throw new Error(`result ${result.cacheKey} conflicted but cannot be found`);
    answers.push(existing);
  }
  return { results: answers, newIds: new Set(inserted.map((row) => row.id)) };
}

/**
 * Deletes rows that insertResults made in this same transaction and that nothing came to reference (a
 * worker's documents for jobs it no longer held: src/jobs/job-outcomes.ts): the transaction commits as
 * if they had never been stored.
 */
export async function takeBackResults(tx: TransactionSql, resultIds: readonly number[]): Promise<void> {
  if (resultIds.length === 0) return;
  await tx`DELETE FROM results WHERE id = ANY(${tx.array([...resultIds])}::bigint[])`;
}

/** The stored result of a cache key and owner; with `known`, from memory when this process has seen it. */
export async function findCachedResult(
  db: Sql | TransactionSql,
  lookup: ResultLookup,
  known?: KnownResults,
): Promise<SimulationResult | null> {
  const seen = known?.byLookup(lookup);
  if (seen) return seen;
  const [row] =
    lookup.scope === 'shared'
      ? await db<ResultRow[]>`
          SELECT ${resultColumns(db)} FROM results WHERE scope = 'shared' AND cache_key = ${lookup.cacheKey}`
      : await db<ResultRow[]>`
          SELECT ${resultColumns(db)} FROM results
          WHERE scope = 'private' AND org_id = ${lookup.orgId} AND cache_key = ${lookup.cacheKey}`;
  return row ? resultOfRow(db, row, known) : null;
}

/**
 * The stored results of many cache keys at once (a batch's items), without their documents: cache key →
 * result id. A shared key finds a shared result; a private key only this organisation's. Each half reads
 * its scope's unique index (results_shared_cache_key, results_private_cache_key): a condition that
 * spans both scopes matches neither partial index, and the table, which only grows, was read whole.
 */
export async function findCachedResultIds(
  db: Sql | TransactionSql,
  orgId: string,
  lookups: readonly { cacheKey: string; scope: ResultScope }[],
): Promise<Map<string, number>> {
  if (lookups.length === 0) return new Map();
  const keysOf = (scope: ResultScope) =>
    db.array(lookups.filter((l) => l.scope === scope).map((l) => l.cacheKey));
  const rows = await db<{ id: number; cacheKey: string }[]>`
    SELECT id, cache_key FROM results
    WHERE scope = 'shared' AND cache_key = ANY(${keysOf('shared')}::text[])
    UNION ALL
    SELECT id, cache_key FROM results
    WHERE scope = 'private' AND org_id = ${orgId} AND cache_key = ANY(${keysOf('private')}::text[])`;
  return new Map(rows.map((row) => [row.cacheKey, row.id]));
}

/**
 * Which of these lookups (jobs of several organisations) have a stored result, in one statement: a
 * shared key finds a shared result, a private key only its organisation's. Returns their cache keys.
 * Each half reads its scope's unique index, as findCachedResultIds does.
 */
export async function cachedKeysAmong(
  db: Sql | TransactionSql,
  lookups: readonly { cacheKey: string; scope: ResultScope; orgId: string }[],
): Promise<Set<string>> {
  if (lookups.length === 0) return new Set();
  const shared = lookups.filter((l) => l.scope === 'shared');
  const owned = lookups.filter((l) => l.scope === 'private');
  const rows = await db<{ cacheKey: string }[]>`
    SELECT cache_key FROM results
    WHERE scope = 'shared' AND cache_key = ANY(${db.array(shared.map((l) => l.cacheKey))}::text[])
    UNION ALL
    SELECT r.cache_key
    FROM unnest(${db.array(owned.map((l) => l.orgId))}::text[],
                ${db.array(owned.map((l) => l.cacheKey))}::text[]) AS k(org_id, cache_key)
    JOIN results r ON r.scope = 'private' AND r.org_id = k.org_id AND r.cache_key = k.cache_key`;
  return new Set(rows.map((row) => row.cacheKey));
}

/** A stored result by id; with `known`, from memory when this process has seen it. */
export async function getResult(
  db: Sql | TransactionSql,
  resultId: number,
  known?: KnownResults,
): Promise<SimulationResult | null> {
  const seen = known?.byId(resultId);
  if (seen) return seen;
  const [row] = await db<ResultRow[]>`SELECT ${resultColumns(db)} FROM results WHERE id = ${resultId}`;
  return row ? resultOfRow(db, row, known) : null;
}

/** getResult for many ids in one statement (none when `known` has them all); by id, those that exist. */
export async function getResults(
  db: Sql | TransactionSql,
  resultIds: readonly number[],
  known?: KnownResults,
): Promise<Map<number, SimulationResult>> {
  const found = new Map<number, SimulationResult>();
  const unknown: number[] = [];
  for (const id of new Set(resultIds)) {
    const seen = known?.byId(id);
    if (seen) found.set(id, seen);
    else unknown.push(id);
  }
  if (unknown.length === 0) return found;
  const rows = await db<ResultRow[]>`
    SELECT ${resultColumns(db)} FROM results WHERE id = ANY(${db.array(unknown)}::bigint[])`;
  // Rows read back here are not remembered: a page's documents are delivered once, and remembering them
  // (as the most recent) evicted the oldest rows, which on a stream longer than the cache are exactly
  // the ones its next pages need: over two 1,000-item streams, 1,286 of 2,000 documents were read back.
  for (const row of rows) found.set(row.id, await resultOfRow(db, row, undefined));
  return found;
}

/** insertDelivery for many deliveries in one statement; in the order given. */
export async function insertDeliveries(
  tx: TransactionSql,
  deliveries: readonly NewDelivery[],
): Promise<Delivery[]> {
  if (deliveries.length === 0) return [];
  const rows = deliveries.map((delivery, ordinal) => ({
    ordinal,
    id: delivery.id,
    org_id: delivery.orgId,
    job_id: delivery.jobId,
    result_id: delivery.resultId,
    mode: delivery.mode,
    credits_charged_milli: delivery.creditsChargedMilli,
    credits_remaining_milli: delivery.creditsRemainingMilli,
    request_id: delivery.requestId ?? null,
    idempotency_key: delivery.idempotencyKey ?? null,
    created_at: delivery.createdAt.toISOString(),
  }));
  const inserted = await tx<Delivery[]>`
    INSERT INTO deliveries (id, org_id, job_id, result_id, mode, credits_charged_milli, credits_remaining_milli,
                            request_id, idempotency_key, created_at)
    SELECT id, org_id, job_id, result_id, mode, credits_charged_milli, credits_remaining_milli, request_id,
           idempotency_key, created_at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) AS r(
      ordinal integer, id text, org_id text, job_id text, result_id bigint, mode text,
      credits_charged_milli bigint, credits_remaining_milli bigint, request_id text, idempotency_key text,
      created_at timestamptz)
    ORDER BY ordinal
    RETURNING *`;
  const byId = new Map(inserted.map((delivery) => [delivery.id, delivery]));
  return deliveries.map((delivery) => byId.get(delivery.id)!);
}

/** findDeliveryForJob for many jobs in one statement; by job id. */
export async function findDeliveriesForJobs(
  db: Sql | TransactionSql,
  jobIds: readonly string[],
): Promise<Map<string, Delivery>> {
  if (jobIds.length === 0) return new Map();
  const rows = await db<Delivery[]>`
    SELECT * FROM deliveries WHERE job_id = ANY(${db.array([...jobIds])}::text[])`;
  return new Map(rows.map((row) => [row.jobId!, row]));
}

export async function insertDelivery(tx: TransactionSql, delivery: NewDelivery): Promise<Delivery> {
  const [row] = await tx<Delivery[]>`
    INSERT INTO deliveries (id, org_id, job_id, result_id, mode, credits_charged_milli, credits_remaining_milli,
                            request_id, idempotency_key, created_at)
    VALUES (${delivery.id}, ${delivery.orgId}, ${delivery.jobId}, ${delivery.resultId}, ${delivery.mode},
            ${delivery.creditsChargedMilli}, ${delivery.creditsRemainingMilli}, ${delivery.requestId ?? null},
            ${delivery.idempotencyKey ?? null}, ${delivery.createdAt})
    RETURNING *`;
  return row!;
}

export async function findDeliveryForJob(db: Sql | TransactionSql, jobId: string): Promise<Delivery | null> {
  const [row] = await db<Delivery[]>`SELECT * FROM deliveries WHERE job_id = ${jobId}`;
  return row ?? null;
}

/** A delivery by its `sim_…` id when it belongs to `owner`; anyone else's costs what an unknown id costs. */
export async function findOwnedDelivery(
  db: Sql | TransactionSql,
  deliveryId: string,
  owner: Owner,
): Promise<Delivery | null> {
  const [row] = await db<Delivery[]>`
    SELECT * FROM deliveries WHERE id = ${deliveryId} AND org_id = ${owner.orgId} AND mode = ${owner.mode}`;
  return row ?? null;
}
