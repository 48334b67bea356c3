// Stored documents (src/results/result-store.ts, migration 0010): a result keeps its document as the text
// a delivery sends, so responses splice it in unparsed; a row stored before migration 0010 (the engine's
// own text) is put through the schema once when read, and stored so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentWireText } from '../../src/engine/document.js';
import examples from '../../src/http/openapi/examples.json' with { type: 'json' };
import { findCachedResult, getResult, storeResult } from '../../src/results/result-store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

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

describe('stored documents', () => {
  it('keeps the wire text byte for byte, with the summary figures beside it', async () => {
    const wire = documentWireText(document);
    const stored = await db.sql.begin((tx) =>
      storeResult(tx, { ...facts('wire'), document, documentJson: wire }, new Date()),
    );
    expect(stored.documentJson).toBe(wire);
    const read = await getResult(db.sql, stored.id);
    expect(read?.documentJson).toBe(wire);
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

  it('puts a document stored before migration 0010 through the schema once, and keeps it so', async () => {
    const engineText = JSON.stringify(reordered(document));
    // What a delivery of the row always sent: its text parsed and put through the schema.
    const wire = documentWireText(JSON.parse(engineText));
    expect(engineText).not.toBe(wire);
    const [row] = await db.sql<{ id: number }[]>`
      INSERT INTO results (cache_key, scope, fixture_id, data_version, draws, document, engine, created_at,
                           home_win, draw, away_win, expected_goals_home, expected_goals_away)
      VALUES ('before-0010', 'shared', 101, 'dv_test', 1000, ${engineText}::text::json, 'cpu', now(),
              0.5, 0.25, 0.25, 1.5, 1.1)
      RETURNING id`;
    const found = await findCachedResult(db.sql, { cacheKey: 'before-0010', scope: 'shared', orgId: null });
    expect(found?.documentJson).toBe(wire);
    const [after] = await db.sql<{ text: string; wireText: boolean }[]>`
      SELECT document::text AS text, wire_text FROM results WHERE id = ${row!.id}`;
    expect(after).toEqual({ text: wire, wireText: true });
    expect((await getResult(db.sql, row!.id))?.documentJson).toBe(wire);
  });
});
