// The playground's market rows (src/http/playground/markets.js, a browser module run here in Node): every
// market of a real document in its order, fair prices as 1/p (a push refunded on Asian handicaps), and
// CSV that survives names with commas and quotes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fairOdds,
  MARKET_COLUMNS,
  marketCsvRows,
  marketRows,
  PLAYER_COLUMNS,
  playerRows,
  toCsv,
  // @ts-expect-error: the playground's own browser module, plain JavaScript without declarations
} from '../../src/http/playground/markets.js';
import { MANY_FIXTURES_FROM, NOW, withManyFixtures } from '../fixtures/small-feed.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

// biome-ignore lint/suspicious/noExplicitAny: the document is read field by field
type Json = Record<string, any>;

let t: TestContext;
let doc: Json;
beforeAll(async () => {
  t = await createTestContext({ worker: true });
  t.setNow(NOW);
  await t.loadFeed(withManyFixtures(1), { clock: () => NOW });
  const { auth } = await t.newOrg();
  const response = await t.app.inject({
    method: 'POST',
    url: '/v1/simulations',
    headers: auth,
    payload: { fixture_id: MANY_FIXTURES_FROM, draws: 1000, wait_seconds: 25 },
  });
  let delivered = response;
  while (delivered.statusCode === 202) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    delivered = await t.app.inject({ method: 'GET', url: response.json().result_url, headers: auth });
  }
  expect(delivered.statusCode, delivered.body.slice(0, 200)).toBe(200);
  doc = delivered.json().simulation;
});
afterAll(async () => t.close());

describe('market rows', () => {
  it('cover every market of the document with 1/p, a push refunded', () => {
    const rows: Json[] = marketRows(doc, { home: 'H', away: 'A' });
    const count = (market: string) => rows.filter((row) => row.market === market).length;
    expect(count('Match result')).toBe(3);
    expect(count('Double chance')).toBe(3);
    expect(count('Both teams to score')).toBe(2);
    expect(count('Total goals')).toBe(2 * doc.markets.totals.length);
    expect(count('Asian handicap')).toBe(doc.markets.handicaps.length);
    expect(count('Half-time/full-time')).toBe(9);
    expect(count('Correct score')).toBe(doc.markets.scorelines.length);
    expect(count('First goal')).toBe(3);
    for (const row of rows) {
      if (row.probability === 0) expect(row.odds).toBeNull();
      else expect(row.odds).toBeCloseTo((1 - (row.push ?? 0)) / row.probability, 12);
    }
    const whole = doc.markets.handicaps.find((handicap: Json) => handicap.push > 0);
    expect(whole).toBeDefined();
    expect(fairOdds(whole.win, whole.push)).toBeCloseTo((1 - whole.push) / whole.win, 12);
    const csv = toCsv(MARKET_COLUMNS, marketCsvRows(rows)).trimEnd().split('\r\n');
    expect(csv).toHaveLength(rows.length + 1);
    expect(toCsv(PLAYER_COLUMNS, playerRows(doc)).trimEnd().split('\r\n')).toHaveLength(
      doc.players.length + 1,
    );
  });

  it('quotes CSV fields with commas, quotes or line breaks', () => {
    expect(
      toCsv(
        ['a', 'b'],
        [
          ['x, y', 'say "hi"'],
          ['line\nbreak', null],
        ],
      ),
    ).toBe('a,b\r\n"x, y","say ""hi"""\r\n"line\nbreak",\r\n');
  });
});
