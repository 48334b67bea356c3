// A free path quote beside a plain quote (issue 65): a path quote with 60 events and a market prepared
// one run per event (fixture read, lineups, market fit), some 30 plain quotes' work; it now prepares the
// one run its price needs and checks the events and states without another (src/simulations/path-request.ts).
// Goal: the path quote's p50 within 2 × the plain quote's.
import type { BenchRow } from './report.js';

/** The service's address and the benchmark key's headers (simulations.ts serviceApi). */
interface Api {
  base: string;
  headers: Record<string, string>;
}

const QUOTES = 30;
const EVENTS = 60;
/** A market every fixture reaches: `supremacy` keeps the model's level of goals. */
const MARKET = { odds: { '1x2': [2.1, 3.4, 3.6] }, fit: 'supremacy' };

/** 60 events in the first 60 minutes, no player named: goals for either side and yellow cards. */
const events = Array.from({ length: EVENTS }, (_, i) => ({
  minute: String(i + 1),
  type: i % 3 === 0 ? 'goal' : 'yellow_card',
  team: i % 2 === 0 ? 'home' : 'away',
}));

/** p50 of `QUOTES` quotes one after another; `draws` differs per request, so no body repeats. */
async function quoteP50(api: Api, url: string, body: (draws: number) => object): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < QUOTES; i++) {
    const t0 = performance.now();
    const response = await fetch(`${api.base}${url}`, {
      method: 'POST',
      headers: api.headers,
      body: JSON.stringify(body(1000 + i)),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text.slice(0, 300)}`);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]!;
}

export async function pathQuoteRow(api: Api, fixtureId: number): Promise<BenchRow> {
  const plain = await quoteP50(api, '/v1/simulations/quote', (draws) => ({
    fixture_id: fixtureId,
    market: MARKET,
    draws,
  }));
  const path = await quoteP50(api, '/v1/simulations/path/quote', (draws) => ({
    fixture_id: fixtureId,
    market: MARKET,
    events,
    draws,
  }));
  return {
    group: 'Simulations API',
    name: `POST /v1/simulations/path/quote, ${EVENTS} events and a market: p50`,
    value: path,
    unit: 'ms',
    reference: { name: 'POST /v1/simulations/quote with the market', value: plain },
    note: `${QUOTES} quotes each, one at a time; goal: ≤ 2 × the plain quote (it was ~30 ×)`,
  };
}
