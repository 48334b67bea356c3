// The typed client of clients/typescript against the running service (the demo, over HTTP): every
// customer operation of /openapi.json is called through it, errors come back typed, the helpers wait
// for a job and collect a batch, retries follow the error's advice; and its generated types are not stale.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaSource } from '../../clients/typescript/generate.js';
import {
  batches,
  batchResults,
  createMatchsimClient,
  jobs,
  type MatchsimClient,
  MatchsimError,
  retryingFetch,
  unwrap,
  waitForJob,
  waitForProjection,
} from '../../clients/typescript/src/index.js';
import { type DemoService, startDemoService } from '../helpers/demo-service.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const storedDocument = JSON.parse(read('docs/openapi/openapi.json'));

let demo: DemoService;
let client: MatchsimClient;
const called = new Set<string>();

beforeAll(async () => {
  demo = await startDemoService();
  client = createMatchsimClient({ baseUrl: demo.baseUrl, apiKey: demo.liveKey });
  client.use({
    onRequest({ request, schemaPath }) {
      called.add(`${request.method.toLowerCase()} ${schemaPath}`);
    },
  });
}, 120_000);
afterAll(() => demo?.close());

const creditsOf = (text: string) => Number(text);

describe('the typed client', () => {
  it('calls every customer operation of the document against the service', async () => {
    const credits = unwrap(await client.GET('/v1/credits'));
    expect(credits.object).toBe('credit_balance');
    const list = unwrap(
      await client.GET('/v1/fixtures', { params: { query: { status: 'fresh', limit: 3 } } }),
    );
    expect(list.data.length).toBeGreaterThan(0);
    expect(list.data.every((fixture) => fixture.freshness.status === 'fresh')).toBe(true);
    const fixtureId = list.data[0]!.fixture_id;
    const path = { fixture_id: fixtureId };
    const squads = unwrap(await client.GET('/v1/fixtures/{fixture_id}/squads', { params: { path } }));
    expect(squads.home.players.length).toBeGreaterThan(10);
    const lineup = unwrap(
      await client.GET('/v1/fixtures/{fixture_id}/expected-lineup', { params: { path } }),
    );
    expect(lineup.home.xi).toHaveLength(11);
    const implied = unwrap(await client.POST('/v1/odds/implied', { body: { odds: [2.1, 3.4, 3.6] } }));
    expect(implied.method).toBe('shin');
    expect(implied.probabilities.map((p) => p.toFixed(4))).toEqual(['0.4587', '0.2787', '0.2626']);
    const quote = unwrap(
      await client.POST('/v1/simulations/quote', { body: { fixture_id: fixtureId, draws: 1000 } }),
    );
    expect(quote.price).toEqual({ draws: 1000, credits: '1.000' });

    const started = unwrap(
      await client.POST('/v1/simulations', { body: { fixture_id: fixtureId, draws: 1000, wait_seconds: 0 } }),
    );
    expect(started.object).toBe('simulation_job');
    const progress: number[] = [];
    const job = started as Extract<typeof started, { object: 'simulation_job' }>;
    const simulation = await waitForJob(client, job, {
      onProgress: (j) => progress.push(j.progress.draws_done),
    });
    expect(simulation.object).toBe('simulation');
    expect(simulation.credits_charged).toBe(1);

    const second = list.data[1] ?? list.data[0]!;
    const batch = unwrap(
      await client.POST('/v1/simulations/batch', {
        body: { fixtures: [{ fixture_id: second.fixture_id }], draws: 1000 },
      }),
    );
    const results = [];
    for await (const result of batchResults(client, batch.batch_id, { intervalMs: 250 }))
      results.push(result);
    expect(results).toHaveLength(1);
    expect(results[0]!.status).toBe('delivered');
    expect(results[0]!.simulation?.fixture_id).toBe(second.fixture_id);

    // The delivered simulation again by its id, free; the lists; a cancel of the finished batch.
    const again = unwrap(
      await client.GET('/v1/simulations/{simulation_id}', {
        params: { path: { simulation_id: simulation.id } },
      }),
    );
    expect(again.id).toBe(simulation.id);
    expect(again.credits_charged).toBe(0);
    const jobs = unwrap(await client.GET('/v1/simulations/jobs', { params: { query: { limit: 5 } } }));
    expect(jobs.data.map((j) => j.job_id)).toContain(job.job_id);
    const batches = unwrap(await client.GET('/v1/simulations/batches', { params: { query: { limit: 5 } } }));
    expect(batches.data.map((b) => b.batch_id)).toContain(batch.batch_id);
    const status = unwrap(
      await client.GET('/v1/simulations/batch/{batch_id}', {
        params: { path: { batch_id: batch.batch_id } },
      }),
    );
    expect(status.status).toBe('completed');
    expect(status.counts.delivered).toBe(1);
    const summary = unwrap(
      await client.GET('/v1/simulations/batch/{batch_id}/summary', {
        params: { path: { batch_id: batch.batch_id } },
      }),
    );
    expect(summary).toMatchObject({ status: 'completed', counts: status.counts, credits_reserved_total: 0 });
    // Cancelling a finished batch cancels nothing: its one item stays delivered.
    const cancelled = unwrap(
      await client.POST('/v1/simulations/batch/{batch_id}/cancel', {
        params: { path: { batch_id: batch.batch_id } },
      }),
    );
    expect(cancelled.counts).toMatchObject({ cancelled: 0, delivered: 1 });

    // A win-probability path, quoted and queued: a batch of in-play runs, one a minute, read as a batch.
    const pathBody = {
      fixture_id: second.fixture_id,
      events: [{ minute: '10', type: 'goal' as const, team: 'away' as const }],
      through: '12',
      draws: 100,
    };
    const pathQuote = unwrap(await client.POST('/v1/simulations/path/quote', { body: pathBody }));
    expect([pathQuote.steps, pathQuote.price.draws]).toEqual([12, 1200]);
    const pathBatch = unwrap(await client.POST('/v1/simulations/path', { body: pathBody }));
    const minutes = [];
    for await (const result of batchResults(client, pathBatch.batch_id, { intervalMs: 250 }))
      minutes.push(result);
    expect(minutes.map((m) => m.custom_id)).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)));

    // A season projection of the fixture's competition: quoted, followed through its job, read again.
    const competition = { competition_id: list.data[0]!.competition.competition_id, seasons: 1000 };
    const projectionQuote = unwrap(await client.POST('/v1/projections/quote', { body: competition }));
    expect(projectionQuote.object).toBe('projection_quote');
    const projecting = unwrap(
      await client.POST('/v1/projections', { body: { ...competition, wait_seconds: 0 } }),
    );
    expect(projecting.object).toBe('projection_job');
    const projection = await waitForProjection(
      client,
      projecting as Extract<typeof projecting, { object: 'projection_job' }>,
    );
    expect(projection.credits_charged).toBe(creditsOf(projectionQuote.price.credits));
    const projectionAgain = unwrap(
      await client.GET('/v1/projections/{projection_id}', {
        params: { path: { projection_id: projection.id } },
      }),
    );
    expect(projectionAgain.teams).toEqual(projection.teams);

    // Webhooks: an endpoint (its secret shown once), its changes and rotation, the events the runs above
    // wrote, a resend, the credits.low threshold.
    const endpoint = unwrap(
      await client.POST('/v1/webhook_endpoints', {
        body: { url: 'http://127.0.0.1:9/hook', events: ['simulation.succeeded', 'batch.completed'] },
      }),
    );
    expect(endpoint.secret).toMatch(/^whsec_/);
    const endpointPath = { params: { path: { endpoint_id: endpoint.id } } };
    const endpoints = unwrap(await client.GET('/v1/webhook_endpoints'));
    expect(endpoints.data.map((e) => e.id)).toContain(endpoint.id);
    expect(unwrap(await client.GET('/v1/webhook_endpoints/{endpoint_id}', endpointPath)).url).toBe(
      endpoint.url,
    );
    const changed = unwrap(
      await client.PATCH('/v1/webhook_endpoints/{endpoint_id}', {
        ...endpointPath,
        body: { description: 'typed' },
      }),
    );
    expect(changed.description).toBe('typed');
    const rotated = unwrap(
      await client.POST('/v1/webhook_endpoints/{endpoint_id}/rotate_secret', endpointPath),
    );
    expect(rotated.secret).not.toBe(endpoint.secret);
    // Written with the batch's last end, or by the worker's next round when two ends met (batch-completions.ts).
    const completions = () => client.GET('/v1/events', { params: { query: { type: 'batch.completed' } } });
    await expect
      .poll(async () => unwrap(await completions()).data.map((e) => e.data.object.batch_id))
      .toContain(batch.batch_id);
    const events = unwrap(await completions());
    const eventPath = { params: { path: { event_id: events.data[0]!.id } } };
    expect(unwrap(await client.GET('/v1/events/{event_id}', eventPath))).toEqual(events.data[0]);
    const resent = unwrap(
      await client.POST('/v1/events/{event_id}/resend', { ...eventPath, body: { endpoint_id: endpoint.id } }),
    );
    expect(resent.id).toBe(events.data[0]!.id);
    unwrap(await client.PUT('/v1/credits/low_threshold', { body: { threshold: 10 } }));
    expect(unwrap(await client.GET('/v1/credits/low_threshold')).threshold).toBe(10);
    expect(unwrap(await client.DELETE('/v1/webhook_endpoints/{endpoint_id}', endpointPath)).deleted).toBe(
      true,
    );

    const operations = Object.entries(storedDocument.paths).flatMap(([p, methods]) =>
      Object.keys(methods as object).map((method) => `${method} ${p}`),
    );
    expect([...called].sort()).toEqual(expect.arrayContaining(operations.sort()));
  }, 180_000);

  it('types and throws the error object', async () => {
    const result = await client.GET('/v1/fixtures/{fixture_id}/squads', {
      params: { path: { fixture_id: 2_000_000_000 } },
    });
    expect(result.response.status).toBe(404);
    const code: string | undefined = result.error?.error.code;
    expect(code).toBe('fixture_not_found');
    expect(() => unwrap(result)).toThrow(MatchsimError);
    expect(() => unwrap(result)).toThrow(/404 fixture_not_found/);
  });

  it('sends again after a retryable answer, waiting what Retry-After says, and not after a final one', async () => {
    const answers = [
      { status: 503, retryAfter: '0', retry: { retryable: true, strategy: 'backoff_with_jitter' } },
      { status: 200 },
    ];
    const seen: string[] = [];
    const fetchOnce = (async (request: Request) => {
      seen.push(request.headers.get('idempotency-key') ?? '');
      const answer = answers.shift()!;
      if (answer.status === 200) return Response.json({ ok: true });
      const error = { code: 'engine_overloaded', retry: { ...answer.retry, after_seconds: null } };
      return Response.json(
        { error },
        { status: answer.status, headers: { 'Retry-After': answer.retryAfter! } },
      );
    }) as typeof fetch;
    const response = await retryingFetch(fetchOnce, { baseDelayMs: 1 })(
      new Request('http://x/v1/simulations', { method: 'POST', headers: { 'Idempotency-Key': 'k1' } }),
    );
    expect(response.status).toBe(200);
    expect(seen).toEqual(['k1', 'k1']);

    const final = (async () =>
      Response.json(
        { error: { code: 'balance_too_low', retry: { retryable: true, strategy: 'wait_for_change' } } },
        { status: 402 },
      )) as typeof fetch;
    expect((await retryingFetch(final)(new Request('http://x/v1/credits'))).status).toBe(402);
  });

  it("streams a batch's results line by line: an item is yielded before the body has ended", async () => {
    const encoder = new TextEncoder();
    let finish: () => void = () => {};
    const rest = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const line = (fixture: number, status: string) =>
      `${JSON.stringify({ object: 'simulation_batch_result', custom_id: null, fixture, job_id: null, status })}\n`;
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        // The first line cut in two chunks, then a wait that only the reader's progress ends.
        const first = line(1, 'rejected');
        controller.enqueue(encoder.encode(first.slice(0, 20)));
        controller.enqueue(encoder.encode(first.slice(20)));
        await rest;
        controller.enqueue(encoder.encode(line(2, 'rejected')));
        controller.close();
      },
    });
    const streaming = createMatchsimClient({
      baseUrl: 'http://x',
      apiKey: 'k',
      retry: false,
      fetch: (async () =>
        new Response(body, { headers: { 'content-type': 'application/x-ndjson' } })) as typeof fetch,
    });
    const items = batchResults(streaming, 'batch_1');
    const first = await items.next();
    expect(first.value).toMatchObject({ fixture: 1, status: 'rejected' });
    finish();
    expect((await items.next()).value).toMatchObject({ fixture: 2 });
    expect((await items.next()).done).toBe(true);
  });

  it('pages through jobs and batches with async iterators', async () => {
    const all = unwrap(await client.GET('/v1/simulations/jobs', { params: { query: { limit: 100 } } }));
    expect(all.data.length).toBeGreaterThanOrEqual(2);
    const paged: string[] = [];
    for await (const job of jobs(client, { limit: 1 })) paged.push(job.job_id);
    expect(paged).toEqual(all.data.map((job) => job.job_id));
    const listed = unwrap(await client.GET('/v1/simulations/batches', { params: { query: { limit: 100 } } }));
    const pagedBatches: string[] = [];
    for await (const batch of batches(client, { limit: 1 })) pagedBatches.push(batch.batch_id);
    expect(pagedBatches).toEqual(listed.data.map((batch) => batch.batch_id));
    expect(pagedBatches.length).toBeGreaterThanOrEqual(1);
  });

  it('has types generated from the stored document (run `npm run client:generate` when this fails)', async () => {
    expect(await schemaSource(storedDocument)).toBe(read('clients/typescript/src/schema.ts'));
  });
});
