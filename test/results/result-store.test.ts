// Stored documents (src/results/result-store.ts, migration 0010): a result keeps its document as the text
// a delivery sends, so responses splice it in unparsed; a row stored before migration 0010 (the engine's
// own text) is put through the schema once when read, and stored so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql, TransactionSql } from '../../src/db/connection.js';
import { documentSummary, documentWireText } from '../../src/engine/document-schema.js';
import { documentText, storedDocument } from '../../src/engine/stored-document.js';
import examples from '../../src/http/openapi/examples.json' with { type: 'json' };
import { makeKnownResults } from '../../src/results/known-results.js';
import {
  cachedKeysAmong,
  findCachedResult,
  findCachedResultIds,
  getResult,
  getResults,
  type SimulationResult,
  storeResult,
} from '../../src/results/result-store.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { recordingPlans } from '../helpers/statements.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.close());

/** A real document (captured from the demo service), with every object's fields in reverse order. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, inner]) => [key, reordered(inner)]),
  );
}
const document = (examples as { Simulation: { simulation: unknown } }).Simulation.simulation;
const facts = (cacheKey: string) => ({
  cacheKey,
  scope: 'shared' as const,
  orgId: null,
  fixtureId: 101,
  dataVersion: 'dv_test',
  draws: 1000,
  engine: 'cpu',
  runMs: 1,
  gpuMs: 0,
});

/** The plans of the statements `run` sends (test/helpers/statements.ts recordingPlans), then sent. */
function plansOf(run: (tx: TransactionSql) => Promise<unknown>): Promise<string[]> {
  return db.sql.begin(async (tx) => {
    const plans: string[] = [];
    await run(recordingPlans(tx, /./, plans));
    return plans;
  });
}

/** A stored document of `bytes` deflated bytes (what the known results count). */
const sized = (bytes: number) => ({ deflated: new Uint8Array(bytes), crc32: 0, bytes: bytes * 8 });

describe('stored documents', () => {
  it('keeps the wire text byte for byte, with the summary figures beside it', async () => {
    const wire = documentWireText(document);
    const stored = await db.sql.begin((tx) =>
      storeResult(
        tx,
        { ...facts('wire'), summary: documentSummary(document), document: storedDocument(wire) },
        new Date(),
      ),
    );
    expect(documentText(stored.document)).toBe(wire);
    const read = await getResult(db.sql, stored.id);
    expect(documentText(read!.document)).toBe(wire);
    // What the insert answers without reading the document back is what a read gives.
    expect(stored).toEqual(read);
    const { result, goals } = document as {
      result: { home_win: number; draw: number; away_win: number };
      goals: { expected: { home: number; away: number } };
    };
    expect(read?.summary).toEqual({
      homeWin: result.home_win,
      draw: result.draw,
      awayWin: result.away_win,
      expectedGoalsHome: goals.expected.home,
      expectedGoalsAway: goals.expected.away,
    });
  });

  it('puts a document stored before migration 0010 through the schema and in the stored form once, and keeps it so', async () => {
    const engineText = JSON.stringify(reordered(document));
    // What a delivery of the row always sent: its text parsed and put through the schema.
    const wire = documentWireText(JSON.parse(engineText));
    expect(engineText).not.toBe(wire);
    const [row] = await db.sql<{ id: number }[]>`
      INSERT INTO results (cache_key, scope, fixture_id, data_version, draws, document, engine, created_at,
                           home_win, draw, away_win, expected_goals_home, expected_goals_away)
      VALUES ('before-0010', 'shared', 101, 'dv_test', 1000, ${engineText}, 'cpu', now(),
              0.5, 0.25, 0.25, 1.5, 1.1)
      RETURNING id`;
    const found = await findCachedResult(db.sql, { cacheKey: 'before-0010', scope: 'shared', orgId: null });
    expect(documentText(found!.document)).toBe(wire);
    const [after] = await db.sql<
      { text: string | null; deflated: Uint8Array | null; crc32: number; bytes: number; wireText: boolean }[]
    >`
      SELECT document AS text, document_deflated AS deflated, document_crc32 AS crc32,
             document_bytes AS bytes, wire_text
      FROM results WHERE id = ${row!.id}`;
    expect(after).toMatchObject({ text: null, crc32: found!.document.crc32, bytes: Buffer.byteLength(wire) });
    expect(Buffer.from(after!.deflated!)).toEqual(Buffer.from(found!.document.deflated));
    expect(documentText((await getResult(db.sql, row!.id))!.document)).toBe(wire);
  });

  it('puts a wire text stored before migration 0021 in the stored form once', async () => {
    const wire = documentWireText(document);
    const [row] = await db.sql<{ id: number }[]>`
      INSERT INTO results (cache_key, scope, fixture_id, data_version, draws, document, wire_text, engine,
                           created_at, home_win, draw, away_win, expected_goals_home, expected_goals_away)
      VALUES ('before-0021', 'shared', 101, 'dv_test', 1000, ${wire}, true, 'cpu', now(),
              0.5, 0.25, 0.25, 1.5, 1.1)
      RETURNING id`;
    const read = await getResult(db.sql, row!.id);
    expect(read!.document).toEqual(storedDocument(wire));
    const [after] = await db.sql<{ text: string | null; bytes: number }[]>`
      SELECT document AS text, document_bytes AS bytes FROM results WHERE id = ${row!.id}`;
    expect(after).toEqual({ text: null, bytes: Buffer.byteLength(wire) });
    expect((await getResult(db.sql, row!.id))!.document).toEqual(read!.document);
  });

  it('answers a row this process stored or read from memory, and a lookup that found nothing from the database', async () => {
    const known = makeKnownResults();
    // A client that fails every statement: what is answered without one is answered from memory.
    const noStatement = (() => {
      throw new Error('a statement was sent');
    }) as unknown as Sql;
    const wire = documentWireText(document);
    const lookup = { cacheKey: 'known', scope: 'shared' as const, orgId: null };
    expect(await findCachedResult(db.sql, lookup, known)).toBeNull();
    const stored = await db.sql.begin((tx) =>
      storeResult(
        tx,
        { ...facts('known'), summary: documentSummary(document), document: storedDocument(wire) },
        new Date(),
      ),
    );
    // Stored but not remembered (a caller remembers a row once its transaction committed).
    expect(known.byId(stored.id)).toBeUndefined();
    known.remember(stored);
    expect(await getResult(noStatement, stored.id, known)).toEqual(stored);
    expect(await findCachedResult(noStatement, lookup, known)).toEqual(stored);
    expect(await getResult(db.sql, stored.id)).toEqual(stored);
    // A row read from the database is remembered too.
    const elsewhere = makeKnownResults();
    expect(await findCachedResult(db.sql, lookup, elsewhere)).toEqual(stored);
    expect(await getResult(noStatement, stored.id, elsewhere)).toEqual(stored);
  });

  it("gives a page's rows from memory where it can, and does not keep the rows it reads back", async () => {
    const wire = documentWireText(document);
    const store = (cacheKey: string) =>
      db.sql.begin((tx) =>
        storeResult(
          tx,
          { ...facts(cacheKey), summary: documentSummary(document), document: storedDocument(wire) },
          new Date(),
        ),
      );
    const [first, second, third] = [await store('page-1'), await store('page-2'), await store('page-3')];
    // Room for two documents: the two a worker stored last, as after a batch longer than the cache.
    const known = makeKnownResults(2 * storedDocument(wire).deflated.byteLength);
    known.remember(second);
    known.remember(third);
    const page = await getResults(db.sql, [first.id, second.id, third.id], known);
    expect([...page.keys()].sort()).toEqual([first.id, second.id, third.id].sort());
    expect(documentText(page.get(first.id)!.document)).toBe(wire);
    // Read back, the first would have pushed out the second, which a next page needs.
    expect(known.byId(first.id)).toBeUndefined();
    expect(known.byId(second.id)).toEqual(second);
    expect(known.byId(third.id)).toEqual(third);
  });

  it('holds, by default, two whole 1,000-item batches of 13 KB stored documents (its results stream reads none back)', () => {
    const known = makeKnownResults();
    const document = sized(13_000);
    const row = (id: number): SimulationResult => ({
      ...facts(`batch-${id}`),
      id,
      document,
      summary: { homeWin: 0.5, draw: 0.25, awayWin: 0.25, expectedGoalsHome: 1, expectedGoalsAway: 1 },
      createdAt: new Date(),
    });
    for (let id = 1; id <= 2000; id++) known.remember(row(id));
    expect(known.bytes()).toBe(2000 * 13_000);
    expect(known.byId(1)?.id).toBe(1);
  });

  it('keeps the most recently used rows within its bound of stored document bytes', () => {
    const known = makeKnownResults(25);
    const row = (id: number): SimulationResult => ({
      ...facts(`key-${id}`),
      id,
      document: sized(10),
      summary: { homeWin: 0.5, draw: 0.25, awayWin: 0.25, expectedGoalsHome: 1, expectedGoalsAway: 1 },
      createdAt: new Date(),
    });
    known.remember(row(1));
    known.remember(row(2));
    expect(known.byId(1)?.id).toBe(1); // 1 is now the most recently used
    known.remember(row(3)); // 30 bytes: the least recently used (2) goes
    expect(known.bytes()).toBe(20);
    expect(known.byId(2)).toBeUndefined();
    expect(known.byLookup({ cacheKey: 'key-2', scope: 'shared', orgId: null })).toBeUndefined();
    expect(known.byLookup({ cacheKey: 'key-1', scope: 'shared', orgId: null })?.id).toBe(1);
    expect(known.byId(3)?.id).toBe(3);
    known.remember({ ...row(4), document: sized(26) }); // larger than the bound: not kept
    expect(known.byId(4)).toBeUndefined();
    expect(known.bytes()).toBe(20);
  });

  it("finds many cache keys through each scope's index: shared among shared results, private among its organisation's", async () => {
    const [a, b] = [await insertOrg(db.sql), await insertOrg(db.sql)];
    const store = (cacheKey: string, scope: 'shared' | 'private', orgId: string | null) =>
      db.sql.begin((tx) =>
        storeResult(
          tx,
          {
            ...facts(cacheKey),
            scope,
            orgId,
            summary: documentSummary(document),
            document: storedDocument(documentWireText(document)),
          },
          new Date(),
        ),
      );
    const shared = await store('many-shared', 'shared', null);
    const ofA = await store('many-private', 'private', a);
    const lookups = [
      { cacheKey: 'many-shared', scope: 'shared' as const },
      { cacheKey: 'many-private', scope: 'private' as const },
      { cacheKey: 'many-absent', scope: 'shared' as const },
    ];
    expect(await findCachedResultIds(db.sql, a, lookups)).toEqual(
      new Map([
        ['many-shared', shared.id],
        ['many-private', ofA.id],
      ]),
    );
    // Another organisation's private result is not this one's.
    expect(await findCachedResultIds(db.sql, b, lookups)).toEqual(new Map([['many-shared', shared.id]]));
    expect(
      await cachedKeysAmong(db.sql, [
        { cacheKey: 'many-shared', scope: 'shared', orgId: b },
        { cacheKey: 'many-private', scope: 'private', orgId: b },
        { cacheKey: 'many-absent', scope: 'private', orgId: a },
      ]),
    ).toEqual(new Set(['many-shared']));
    expect(await cachedKeysAmong(db.sql, [{ cacheKey: 'many-private', scope: 'private', orgId: a }])).toEqual(
      new Set(['many-private']),
    );

    // Results are never deleted: a lookup that reads the table whole gets slower with every one stored.
    // With a few thousand rows (and their statistics) the planner takes an index wherever one serves.
    await db.sql`
      INSERT INTO results (cache_key, scope, fixture_id, data_version, draws, document, engine, created_at,
                           home_win, draw, away_win, expected_goals_home, expected_goals_away)
      SELECT 'filler-' || n, 'shared', 101, 'dv_test', 1000, '{}', 'cpu', now(), 0.5, 0.25, 0.25, 1.5, 1.1
      FROM generate_series(1, 3000) AS n`;
    await db.sql`ANALYZE results`;
    const plans = [
      ...(await plansOf((tx) => findCachedResultIds(tx, a, lookups))),
      ...(await plansOf((tx) =>
        cachedKeysAmong(tx, [
          { cacheKey: 'many-shared', scope: 'shared', orgId: a },
          { cacheKey: 'many-private', scope: 'private', orgId: a },
        ]),
      )),
    ];
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      expect(plan).not.toMatch(/Seq Scan on results/);
      expect(plan).toMatch(/(Index (Only )?Scan using|Bitmap Index Scan on) results_shared_cache_key/);
      expect(plan).toMatch(/(Index (Only )?Scan using|Bitmap Index Scan on) results_private_cache_key/);
    }
  });
});
