// Simulations through the HTTP API (issue figures): requests per second at 1,000 draws for cache misses
// and cache hits, p50/p99 latency, and a 1,000-fixture × 10,000-draw batch from submission to the last
// delivered item; next to the bare Fastify JSON route measured in the same run. The service runs in
// its own process (API and worker, ENGINE as configured: CPU here).
import { request } from 'node:http';
import { cpuFields, cpuPerJob, cpuReading } from './cpu.js';
import { engineAloneSeconds as engineAloneOf } from './engine-alone.js';
import { pathQuoteRow } from './path-quote.js';
import { reReadRows } from './re-reads.js';
import { type BenchRow, percentile } from './report.js';
import { type ServerInfo, startServer } from './servers.js';

const SECONDS = Number(process.env.BENCH_SIM_SECONDS ?? 8);
const CONCURRENCY = 16;
/** Organisations the spread cache-hit row sends from (one per concurrent client). */
const ORGANISATIONS = 16;
const BATCH_ITEMS = 1000;
const BATCH_DRAWS = 10_000;

/** `CONCURRENCY` loops sending requests for `SECONDS`; every answer must have the expected status. */
async function drive(send: (i: number) => Promise<Response>, expect: number) {
  const latencies: number[] = [];
  let next = 0;
  const end = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const i = next++;
        const t0 = performance.now();
        const response = await send(i);
        const text = await response.text();
        if (response.status !== expect)
          throw new Error(`request ${i}: ${response.status} ${text.slice(0, 300)}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    n: latencies.length,
  };
}

async function bareRate() {
  const bare = await startServer('bare');
  const url = `http://127.0.0.1:${bare.info.port}/v1/credits`;
  const result = await drive(() => fetch(url), 200);
  bare.stop();
  return result;
}

export async function benchSimulations(): Promise<BenchRow[]> {
  const reference = await bareRate();
  const service = await startServer('service', {
    BENCH_FIXTURES: String(BATCH_ITEMS),
    BENCH_ORGS: String(ORGANISATIONS),
  });
  const api = serviceApi(service.info);
  const fixtureIds = service.info.fixtureIds;
  if (fixtureIds.length === 0) throw new Error('no fixture on sale to simulate');
  await untilServing(api, fixtureIds[0]!);
  const misses = await cacheMisses(api, fixtureIds);
  const hits = await cacheHits(api, fixtureIds);
  const spreadHits = await cacheHits(api, fixtureIds, service.info.secrets);

  // A batch of 1,000 fixtures × 10,000 draws: submission to the last delivered item.
  const batchFixtures = fixtureIds.length >= BATCH_ITEMS ? fixtureIds.slice(0, BATCH_ITEMS) : null;
  const note = `database: ${service.info.database}; ${CONCURRENCY} concurrent clients, ${SECONDS} s`;
  const rows = apiRows(reference, misses, hits, note);
  rows.push(...spreadRows(reference, spreadHits));
  rows.push(await documentSizeRow(api, fixtureIds[0]!));
  rows.push(await pathQuoteRow(api, fixtureIds[0]!));
  rows.push(...(await reReadRows(api, fixtureIds[0]!, service.info.secrets[1] ?? service.info.secret)));
  if (batchFixtures) {
    const batch = await batchRow(api, batchFixtures, service.pid, service.info.database);
    rows.push(await collectionRow(api, batchFixtures));
    service.stop();
    // With the service stopped: the engine alone on the same work, in this process.
    const engineS = await engineAloneSeconds();
    rows.push({
      ...batch,
      reference: { name: 'the CPU engine alone, same draws (runs, sample paths, documents)', value: engineS },
      note: `${batch.note}; goal: ratio ≤ 1.25`,
    });
    return rows;
  }
  service.stop();
  return rows;
}

type Rate = Awaited<ReturnType<typeof drive>>;

/**
 * One simulation answered before the timed rows start. A service just started (its worker's engine
 * threads starting, the demo fixtures compiling) may answer 503 with Retry-After while its event loop
 * lags (src/http/back-pressure.ts); a client retries those, and the timed rows must not start before.
 */
export async function untilServing(api: ServiceApi, fixtureId: number): Promise<void> {
  for (let attempt = 0; attempt < 30; attempt++) {
    const response = await api.simulate({ fixture_id: fixtureId, draws: 500, wait_seconds: 25 });
    const text = await response.text();
    if (response.status === 200) return;
    if (response.status !== 503) throw new Error(`warm-up: ${response.status} ${text.slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, Number(response.headers.get('retry-after') ?? 1) * 1000));
  }
  throw new Error('warm-up: the service kept answering 503');
}

/** The service's address, the benchmark key's headers, and POST /v1/simulations. */
export interface ServiceApi {
  base: string;
  headers: Record<string, string>;
  /** POST /v1/simulations with the benchmark organisation's key, or with `secret`. */
  simulate(body: object, secret?: string): Promise<Response>;
}

export function serviceApi(info: ServerInfo): ServiceApi {
  const base = `http://127.0.0.1:${info.port}`;
  const headers = { authorization: `Bearer ${info.secret}`, 'content-type': 'application/json' };
  return {
    base,
    headers,
    simulate: (body, secret = info.secret) =>
      fetch(`${base}/v1/simulations`, {
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${secret}` },
        body: JSON.stringify(body),
      }),
  };
}

/** Cache misses: every request has inputs never seen before (1,000 + i draws: the same work within 0.1%). */
function cacheMisses(api: ServiceApi, fixtureIds: readonly number[]): Promise<Rate> {
  return drive(
    (i) => api.simulate({ fixture_id: fixtureIds[i % fixtureIds.length], draws: 1000 + (i % 1000) }),
    200,
  );
}

/**
 * Cache hits: 40 fixtures at 1,000 draws, each warmed once; bodies cycle through the fixtures and
 * wait_seconds (not part of the cache key), so no body repeats often enough to trip the loop guard.
 * With `secrets`, request i is sent with key i mod their number (one organisation each): the shared
 * result is a cache hit for every organisation, and no organisation waits on another's ledger rows.
 */
async function cacheHits(
  api: ServiceApi,
  fixtureIds: readonly number[],
  secrets?: readonly string[],
): Promise<Rate> {
  const warm = fixtureIds.slice(0, 40);
  await Promise.all(
    warm.map((fixture_id) => api.simulate({ fixture_id, draws: 1000 }).then((r) => r.arrayBuffer())),
  );
  return drive(
    (i) =>
      api.simulate(
        {
          fixture_id: warm[i % warm.length],
          draws: 1000,
          wait_seconds: 1 + (Math.floor(i / warm.length) % 25),
        },
        secrets?.[i % secrets.length],
      ),
    200,
  );
}

function apiRows(reference: Rate, misses: Rate, hits: Rate, note: string): BenchRow[] {
  return [
    {
      group: 'Simulations API',
      name: 'POST /v1/simulations, 1,000 draws, cache misses: req/s',
      value: misses.rps,
      unit: 'req/s',
      reference: { name: 'bare Fastify JSON route', value: reference.rps },
      note,
    },
    {
      group: 'Simulations API',
      name: '  cache misses: p50 / p99 latency',
      value: misses.p50,
      unit: `ms (p99 ${misses.p99.toFixed(1)} ms)`,
    },
    {
      group: 'Simulations API',
      name: 'POST /v1/simulations, 1,000 draws, cache hits: req/s',
      value: hits.rps,
      unit: 'req/s',
      reference: { name: 'bare Fastify JSON route', value: reference.rps },
    },
    {
      group: 'Simulations API',
      name: '  cache hits: p50 / p99 latency',
      value: hits.p50,
      unit: `ms (p99 ${hits.p99.toFixed(1)} ms)`,
    },
  ];
}

function spreadRows(reference: Rate, hits: Rate): BenchRow[] {
  return [
    {
      group: 'Simulations API',
      name: `POST /v1/simulations, 1,000 draws, cache hits from ${ORGANISATIONS} organisations: req/s`,
      value: hits.rps,
      unit: 'req/s',
      reference: { name: 'bare Fastify JSON route', value: reference.rps },
      note: 'one organisation at a time holds its ledger rows; the row above sends from one organisation',
    },
    {
      group: 'Simulations API',
      name: `  cache hits from ${ORGANISATIONS} organisations: p50 / p99 latency`,
      value: hits.p50,
      unit: `ms (p99 ${hits.p99.toFixed(1)} ms)`,
    },
  ];
}

/** The engine's own time for the batch's work (bench/engine-alone.ts): the reference of the batch rows. */
export function engineAloneSeconds(items = BATCH_ITEMS, draws = BATCH_DRAWS): Promise<number> {
  return engineAloneOf(items, draws);
}

/**
 * The batch of `BATCH_ITEMS` fixtures × `BATCH_DRAWS` draws, from submission to the last delivery, and
 * the CPU time per job it cost by thread kind (bench/cpu.ts): beside the wall time, which a busy shared
 * machine stretches, they say whether the engine's threads did the work or waited.
 */
async function batchRow(
  api: ServiceApi,
  batchFixtures: readonly number[],
  servicePid: number,
  database: string,
): Promise<BenchRow> {
  const kind = database === 'server' ? 'server' : 'embedded';
  const cpuStart = cpuReading([servicePid], kind);
  const t0 = performance.now();
  const batch = await submitBatch(api, batchFixtures);
  const submitMs = performance.now() - t0;
  await untilFinished(api, batch);
  await readAllResults(api, batch);
  const totalS = (performance.now() - t0) / 1000;
  const cpu = cpuFields(cpuPerJob(cpuStart, cpuReading([servicePid], kind), BATCH_ITEMS), kind);
  // The engine's threads busy this share of the wall time, on average over all of them (the cores).
  const engineBusy = cpu.engine_threads / ((totalS * 1000) / BATCH_ITEMS);
  return {
    group: 'Simulations API',
    name: `batch ${BATCH_ITEMS} fixtures × ${BATCH_DRAWS.toLocaleString('en-US')} draws, submit → last delivery`,
    value: totalS,
    unit: 's',
    note: `submission ${(submitMs / 1000).toFixed(2)} s (goal < 1 s); ${((BATCH_ITEMS * BATCH_DRAWS) / totalS / 1e6).toFixed(2)} M draws/s end to end; CPU ms a job: engine threads ${cpu.engine_threads}, event loop ${cpu.event_loop}, V8 ${cpu.v8}, PostgreSQL ${cpu.postgres ?? '(in the event loop)'}, the bench's client ${cpu.client}; the engine's threads busy ${engineBusy.toFixed(2)} cores on average; the summary polled every ${STATUS_POLL_MS} ms, then every result from one NDJSON stream (the collect row measures that stream beside the result paths)`,
    fields: { cpu_ms_per_job: cpu, engine_threads_busy_cores: engineBusy },
  };
}

export interface SubmittedBatch {
  batch_id: string;
  items: Array<{ result_url?: string; error?: unknown }>;
}

export async function submitBatch(
  api: ServiceApi,
  batchFixtures: readonly number[],
  draws = BATCH_DRAWS,
): Promise<SubmittedBatch> {
  const submitted = await fetch(`${api.base}/v1/simulations/batch`, {
    method: 'POST',
    headers: api.headers,
    body: JSON.stringify({
      draws,
      fixtures: batchFixtures.map((fixture_id) => ({ fixture_id })),
    }),
  });
  const batch = (await submitted.json()) as SubmittedBatch;
  if (submitted.status !== 202)
    throw new Error(`batch: ${submitted.status} ${JSON.stringify(batch).slice(0, 300)}`);
  return batch;
}

/**
 * How often a client that wants every item looks at the batch while its items run. It reads the batch's
 * summary (docs/api.md §4.8): the status of 1,000 items is some 500 KB, and polled back to back it cost
 * the service 7.5 ms of event loop and PostgreSQL 5.8 ms a poll (docs/decisions.md §6, "What a batch job
 * costs the host").
 */
export const STATUS_POLL_MS = 250;

/** As a client that wants every item would: the batch's summary every `pollMs` until no item is open. */
export async function untilFinished(
  api: ServiceApi,
  batch: SubmittedBatch,
  pollMs = STATUS_POLL_MS,
): Promise<void> {
  const url = `${api.base}/v1/simulations/batch/${batch.batch_id}/summary`;
  for (;;) {
    const answer = await fetch(url, { headers: api.headers });
    const summary = (await answer.json()) as { counts: { queued: number; running: number } };
    if (answer.status === 200 && summary.counts.queued + summary.counts.running === 0) return;
    if (answer.status !== 200 && answer.status !== 503)
      throw new Error(`batch summary: ${answer.status} ${JSON.stringify(summary).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** Then one GET of its NDJSON results (docs/api.md §4.10), which delivers and settles every item. */
export async function readAllResults(api: ServiceApi, batch: SubmittedBatch): Promise<void> {
  const results = await fetch(`${api.base}/v1/simulations/batch/${batch.batch_id}/results`, {
    headers: api.headers,
  });
  const { delivered } = await readResultLines(results);
  const expected = batch.items.filter((item) => item.result_url).length;
  if (results.status !== 200 || delivered !== expected)
    throw new Error(`results stream: ${results.status}, ${delivered} of ${expected} delivered`);
}

/** Bytes on the wire of one POST /v1/simulations answer (fetch would decode them, so node:http reads them). */
function wireBytes(api: ServiceApi, body: object, acceptEncoding: string | null): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${api.base}/v1/simulations`,
      {
        method: 'POST',
        headers: { ...api.headers, ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) },
      },
      (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        response.on('end', () =>
          response.statusCode === 200 ? resolve(bytes) : reject(new Error(`${response.statusCode}`)),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(JSON.stringify(body));
  });
}

/** A 100,000-draw document with Accept-Encoding: gzip, next to the same document sent as it is. */
async function documentSizeRow(api: ServiceApi, fixtureId: number): Promise<BenchRow> {
  const body = { fixture_id: fixtureId, draws: 100_000, wait_seconds: 25 };
  const plain = await wireBytes(api, body, null);
  const gzip = await wireBytes(api, body, 'gzip');
  const br = await wireBytes(api, body, 'br');
  return {
    group: 'Simulations API',
    name: '100,000-draw document on the wire, Accept-Encoding: gzip',
    value: gzip / 1024,
    unit: 'KiB',
    reference: { name: 'the same document uncompressed', value: plain / 1024 },
    note: `br: ${(br / 1024).toFixed(1)} KiB`,
  };
}

/**
 * An NDJSON results stream read as its clients read one, line by line as the body arrives: its lines and
 * those of delivered items. Collected whole with `response.text()` and split, a 1,000-item stream
 * (some 85 MB) cost this client 1.9–2.5 s of CPU on the same two cores as the service, against 0.9 s
 * this way, and that was timed as the service's.
 */
export async function readResultLines(response: Response): Promise<{ lines: number; delivered: number }> {
  const decoder = new TextDecoder();
  let lines = 0;
  let delivered = 0;
  let rest = '';
  const count = (line: string) => {
    if (line === '') return;
    lines++;
    if (line.includes('"status":"delivered"')) delivered++;
  };
  for await (const chunk of response.body ?? []) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) count(line);
  }
  count(rest + decoder.decode());
  return { lines, delivered };
}

/**
 * Collecting a finished 1,000 × 10,000-draw batch: one GET of its NDJSON results stream against 1,000
 * GETs of the item result paths (CONCURRENCY at a time), each on its own batch of the same inputs, so
 * both batches are complete from the cache and only the collection is measured. Both settle every item.
 */
async function collectionRow(api: ServiceApi, batchFixtures: readonly number[]): Promise<BenchRow> {
  const streamed = await submitBatch(api, batchFixtures);
  const t0 = performance.now();
  const response = await fetch(`${api.base}/v1/simulations/batch/${streamed.batch_id}/results`, {
    headers: api.headers,
  });
  const { delivered } = await readResultLines(response);
  const streamS = (performance.now() - t0) / 1000;
  if (response.status !== 200 || delivered !== batchFixtures.length)
    throw new Error(`results stream: ${response.status}, ${delivered} of ${batchFixtures.length} delivered`);

  const perItem = await submitBatch(api, batchFixtures);
  const urls = perItem.items.flatMap((item) => (item.result_url ? [item.result_url] : []));
  const t1 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < urls.length) {
        const url = urls[next++]!;
        const result = await fetch(`${api.base}${url}`, { headers: api.headers });
        await result.arrayBuffer();
        if (result.status !== 200) throw new Error(`${url}: ${result.status}`);
      }
    }),
  );
  const perItemS = (performance.now() - t1) / 1000;
  return {
    group: 'Simulations API',
    name: `collect ${BATCH_ITEMS} × ${BATCH_DRAWS.toLocaleString('en-US')}-draw results: NDJSON stream`,
    value: streamS,
    unit: `s (1 request; per-item: ${urls.length} requests)`,
    reference: { name: `${urls.length} result-path GETs, ${CONCURRENCY} concurrent`, value: perItemS },
  };
}
