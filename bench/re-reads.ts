// Re-reads of a large result beside another organisation's small calls (issue 65): a win-probability
// path's results (one NDJSON line a minute with its document, some 5 MB) read 60 times, 10 at a time, while
// another organisation asks for implied odds one call after another. Read in full, every re-read took
// the CPU that organisation's calls waited for; sent back with the ETag of the copy the reader holds
// (If-None-Match, src/http/entity-tags.ts) each re-read is a 304 with no body. Goal: the odds calls' p50
// during the tagged re-reads within 2 × their p50 alone.
import type { BenchRow } from './report.js';

/** The service's address and the benchmark key's headers (simulations.ts serviceApi). */
interface Api {
  base: string;
  headers: Record<string, string>;
}

const RE_READS = 60;
const AT_ONCE = 10;
const PATH_DRAWS = 1000;
const ODDS_CALLS_ALONE = 50;

async function ok(response: Response, what: string): Promise<ArrayBuffer> {
  const body = await response.arrayBuffer();
  if (!response.ok)
    throw new Error(`${what}: ${response.status} ${Buffer.from(body).toString().slice(0, 300)}`);
  return body;
}

/** A path of every minute to "90", run and delivered once; its results' address, ETag and size. */
async function deliveredPath(api: Api, fixtureId: number) {
  const submitted = await fetch(`${api.base}/v1/simulations/path`, {
    method: 'POST',
    headers: api.headers,
    body: JSON.stringify({ fixture_id: fixtureId, events: [], draws: PATH_DRAWS }),
  });
  const batch = JSON.parse(Buffer.from(await ok(submitted, 'path')).toString()) as {
    batch_id: string;
    results_url: string;
  };
  for (;;) {
    const status = await fetch(`${api.base}/v1/simulations/batch/${batch.batch_id}/summary`, {
      headers: api.headers,
    });
    const summary = JSON.parse(Buffer.from(await ok(status, 'path status')).toString()) as { status: string };
    if (summary.status === 'completed') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const url = `${api.base}${batch.results_url}`;
  await ok(await fetch(url, { headers: api.headers }), 'first read'); // delivers every minute
  const settled = await fetch(url, { headers: { ...api.headers, 'accept-encoding': 'identity' } });
  const bytes = (await ok(settled, 'second read')).byteLength;
  const etag = settled.headers.get('etag');
  if (!etag) throw new Error('a delivered path read again carries no ETag');
  return { url, etag, bytes };
}

/**
 * POST /v1/odds/implied from `secret`, one call after another until `until` resolves (or `until` calls):
 * the p50, and the answers that were 503 (src/http/back-pressure.ts refuses calls while the event loop
 * lags), which count with their time.
 */
async function oddsP50(
  api: Api,
  secret: string,
  until: Promise<unknown> | number,
): Promise<{ p50: number; refused: number }> {
  const times: number[] = [];
  let refused = 0;
  let done = false;
  if (typeof until !== 'number') void until.then(() => (done = true));
  for (let i = 0; typeof until === 'number' ? i < until : !done; i++) {
    const t0 = performance.now();
    const response = await fetch(`${api.base}/v1/odds/implied`, {
      method: 'POST',
      headers: { ...api.headers, authorization: `Bearer ${secret}` },
      body: JSON.stringify({ odds: [1.9 + (i % 20) / 100, 3.4, 3.6] }),
    });
    if (response.status === 503) {
      refused++;
      await response.arrayBuffer();
    } else await ok(response, 'odds');
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: times[times.length >> 1] ?? 0, refused };
}

/** `RE_READS` reads of `url`, `AT_ONCE` at a time, each body read to its end. */
async function reRead(api: Api, url: string, headers: Record<string, string>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      while (next++ < RE_READS) {
        const response = await fetch(url, { headers: { ...api.headers, ...headers } });
        if (response.status === 503) await response.arrayBuffer();
        else await ok(response, 're-read');
      }
    }),
  );
}

export async function reReadRows(api: Api, fixtureId: number, otherSecret: string): Promise<BenchRow[]> {
  const path = await deliveredPath(api, fixtureId);
  const alone = await oddsP50(api, otherSecret, ODDS_CALLS_ALONE);
  const whole = reRead(api, path.url, {});
  const duringWhole = await oddsP50(api, otherSecret, whole);
  await whole;
  const tagged = reRead(api, path.url, { 'if-none-match': path.etag });
  const duringTagged = await oddsP50(api, otherSecret, tagged);
  await tagged;
  return [
    {
      group: 'Simulations API',
      name: `another organisation's POST /v1/odds/implied during ${RE_READS} re-reads of a path's results (${AT_ONCE} at a time) with If-None-Match: p50`,
      value: duringTagged.p50,
      unit: 'ms',
      reference: { name: 'its p50 alone', value: alone.p50 },
      note:
        `results ${(path.bytes / 1e6).toFixed(1)} MB as text; re-read in full (no If-None-Match): p50 ` +
        `${duringWhole.p50.toFixed(1)} ms, ${duringWhole.refused} odds calls refused 503 (tagged: ` +
        `${duringTagged.refused}); goal: ≤ 2 × alone`,
    },
  ];
}
