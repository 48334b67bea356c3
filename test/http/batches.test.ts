// Batches as batch-API users expect them (docs/api.md §2.6, §4.5, §4.8, §4.10): the batch object with status and
// counts, every item in order, custom ids and metadata, Location and Retry-After on 202s, the results
// stream (its large batch: test/http/batch-stream.test.ts), cancellation, a delivery read again by its id, the lists, and isolation between organisations.
// Money: every delivery through the stream is charged once and every cancelled hold released.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FX, MANY_FIXTURES_FROM, NOW } from '../fixtures/small-feed.js';
import type { TestContext } from '../helpers/app.js';
import { get, type Json, lines, money, post, ROOMY, setup, untilBatch } from '../helpers/batch-requests.js';

describe('cancelling a batch while the worker runs it', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ worker: true, fixtures: 40 });
  });
  afterAll(async () => t.close());

  it('charges no item unless delivered and releases or settles every hold, racing deliveries', async () => {
    const { auth, orgId } = await t.newOrg({ limits: ROOMY });
    const fixtures = Array.from({ length: 40 }, (_, i) => ({ fixture_id: MANY_FIXTURES_FROM + i }));
    const batch = (await post(t, '/v1/simulations/batch', auth, { fixtures, draws: 20_000 })).json();
    expect(batch.status).toBe('in_progress');
    // Cancel once the worker has started, while a stream and a result path deliver what finished.
    await untilBatch(t, batch.batch_id, auth, (b) => b.counts.running + b.counts.succeeded > 0);
    const firstItem = batch.items[0];
    const [cancel, stream, single] = await Promise.all([
      post(t, `/v1/simulations/batch/${batch.batch_id}/cancel`, auth),
      get(t, batch.results_url, auth),
      get(t, firstItem.result_url, auth),
    ]);
    expect(cancel.statusCode, cancel.body.slice(0, 300)).toBe(200);
    expect(['cancelling', 'cancelled']).toContain(cancel.json().status);
    expect(cancel.json().cancel_requested_at).not.toBeNull();
    expect(stream.statusCode).toBe(200);
    expect([200, 202, 409]).toContain(single.statusCode);

    const ended = await untilBatch(t, batch.batch_id, auth, (b) => b.status === 'cancelled');
    expect(ended.counts.cancelled).toBeGreaterThan(0);
    // Cancelling again changes nothing.
    const repeat = await post(t, `/v1/simulations/batch/${batch.batch_id}/cancel`, auth);
    expect(repeat.json().counts).toEqual(ended.counts);
    // A cancelled item's result path says so; nothing was charged for it.
    const cancelledItem = ended.items.find((item: Json) => item.status === 'cancelled');
    const refused = await get(t, cancelledItem.result_url, auth);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('simulation_cancelled');

    // Collect what finished; then every hold is settled (delivered) or released (cancelled).
    const collected = lines((await get(t, batch.results_url, auth)).body);
    expect(collected).toHaveLength(40);
    const { holds, charges } = await money(t, orgId);
    const charged = new Set(charges.map((charge) => charge.holdId));
    const final = (await get(t, `/v1/simulations/batch/${batch.batch_id}`, auth)).json();
    for (const item of final.items) {
      if (item.status === 'delivered') {
        expect(holds.get(item.reservation_id)).toBe('settled');
        expect(charged.has(item.reservation_id)).toBe(true);
      } else {
        expect(item.status).toBe('cancelled');
        expect(holds.get(item.reservation_id)).toBe('released');
        expect(charged.has(item.reservation_id)).toBe(false);
      }
    }
    expect(charges).toHaveLength(final.counts.delivered);
    expect(final.counts.delivered + final.counts.cancelled).toBe(40);
    // The summary is the same batch less its items (docs/api.md §4.8, "Summary").
    const { items: _items, validUntil: _validUntil, ...head } = final;
    expect((await get(t, `/v1/simulations/batch/${batch.batch_id}/summary`, auth)).json()).toEqual(head);
    const balance = await t.services.ledger.balance(orgId);
    expect(balance).toMatchObject({ held: 0, spentThisMonth: final.counts.delivered * 20_000 });
    expect((await t.services.ledger.checkBalanced(orgId)).balanced).toBe(true);
  }, 300_000);
});

describe('batch views, headers, lists and isolation (no worker)', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ worker: false, fixtures: 6 });
  });
  afterAll(async () => t.close());

  it('keeps every item in order with its custom_id, rejected ones with their error', async () => {
    const { auth } = await t.newOrg({ limits: ROOMY });
    const response = await post(t, '/v1/simulations/batch', auth, {
      fixtures: [
        { fixture_id: MANY_FIXTURES_FROM, custom_id: 'a' },
        { home: 'Nowhere', away: 'Elsewhere', custom_id: 'b' },
        { home: 'Eastfield', away: 'Westholm', custom_id: 'c' },
        { fixture_id: FX.uncovered, custom_id: 'd' },
        { fixture_id: MANY_FIXTURES_FROM + 1 },
      ],
      metadata: { team: 'research', note: '' },
    });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(202);
    const body = response.json();
    for (const batch of [body, (await get(t, `/v1/simulations/batch/${body.batch_id}`, auth)).json()]) {
      expect(batch.items.map((item: Json) => [item.custom_id, item.status])).toEqual([
        ['a', 'queued'],
        ['b', 'rejected'],
        ['c', 'queued'],
        ['d', 'rejected'],
        [null, 'queued'],
      ]);
      expect(batch.items[1].error.code).toBe('fixture_not_found');
      expect(batch.items[3].error.code).toBe('fixture_not_covered');
      expect(batch.items[2].fixture).toBe(FX.announced);
      expect(batch).toMatchObject({
        status: 'in_progress',
        counts: { total: 5, rejected: 2, queued: 3 },
        metadata: { team: 'research', note: '' },
        completed_at: null,
      });
    }
    const stream = lines((await get(t, body.results_url, auth)).body);
    expect(stream.map((line) => [line.custom_id, line.status])).toEqual([
      ['a', 'queued'],
      ['b', 'rejected'],
      ['c', 'queued'],
      ['d', 'rejected'],
      [null, 'queued'],
    ]);
    const repeated = await post(t, '/v1/simulations/batch', auth, {
      fixtures: [
        { fixture_id: FX.upcoming, custom_id: 'x' },
        { fixture_id: FX.announced, custom_id: 'x' },
      ],
    });
    expect(repeated.statusCode).toBe(400);
    expect(repeated.json().error.param).toBe('fixtures.1.custom_id');
    const tooMuch = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    const refused = await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, metadata: tooMuch });
    expect(refused.statusCode).toBe(400);
  });

  it('refuses two selectors that resolve to the same match, naming both positions, holding nothing', async () => {
    const { auth, orgId } = await t.newOrg({ limits: ROOMY });
    const response = await post(t, '/v1/simulations/batch', auth, {
      fixtures: [
        { fixture_id: FX.announced },
        { fixture_id: FX.upcoming },
        { fixture_id: MANY_FIXTURES_FROM },
        { home: 'eastfield', away: 'WESTHOLM' }, // FX.announced by its teams' names
      ],
    });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(400);
    const { error } = response.json();
    expect(error).toMatchObject({ code: 'parameter_invalid', param: 'fixtures.3' });
    expect(error.message).toContain('fixtures.0');
    expect(error.message).toContain(String(FX.announced));
    const held = await money(t, orgId);
    expect(held.holds.size).toBe(0);
    const batches = (await get(t, '/v1/simulations/batches', auth)).json();
    expect(batches.data).toEqual([]);
  });

  it("refuses the whole batch on an item's 429 (custom lineups locked), holding and queuing nothing", async () => {
    const { auth, orgId } = await t.newOrg({ limits: ROOMY });
    const customXi = { fixture_id: FX.upcoming, lineups: { home: { source: 'custom', xi: [101, 102] } } };
    for (let i = 0; i < 5; i++) {
      const quote = await post(t, '/v1/simulations/quote', auth, { ...customXi, draws: 100 + i });
      expect(quote.statusCode).toBe(400);
    }
    const response = await post(t, '/v1/simulations/batch', auth, {
      fixtures: [{ fixture_id: MANY_FIXTURES_FROM }, customXi, { fixture_id: MANY_FIXTURES_FROM + 1 }],
    });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(429);
    expect(response.json().error).toMatchObject({ code: 'lineup_cooldown', rule: 'lineup_cooldown' });
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    const held = await money(t, orgId);
    expect(held.holds.size).toBe(0);
    expect((await get(t, '/v1/simulations/batches', auth)).json().data).toEqual([]);
    expect((await get(t, '/v1/simulations/jobs', auth)).json().data).toEqual([]);
  });

  it('sends Location and Retry-After with every 202, replays included, and echoes metadata', async () => {
    const { auth } = await t.newOrg({ limits: ROOMY });
    const payload = { fixture_id: FX.upcoming, wait_seconds: 0, metadata: { order: '42' } };
    const job = await post(t, '/v1/simulations', auth, payload, { 'idempotency-key': 'k-1' });
    expect(job.statusCode).toBe(202);
    expect(job.headers.location).toBe(job.json().result_url);
    expect(job.headers['retry-after']).toBe(String(job.json().retry_after_seconds));
    expect(job.json().metadata).toEqual({ order: '42' });
    const replay = await post(t, '/v1/simulations', auth, payload, { 'idempotency-key': 'k-1' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.location).toBe(job.json().result_url);
    const poll = await get(t, job.json().result_url, auth);
    expect(poll.statusCode).toBe(202);
    expect(poll.headers.location).toBe(job.json().result_url);
    expect(Number(poll.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(poll.json()).toMatchObject({ metadata: { order: '42' }, custom_id: null });
  });

  it('lists jobs and batches newest first with cursors and status filters', async () => {
    const { auth } = await t.newOrg({ limits: ROOMY });
    const ids: string[] = [];
    for (const fixture of [FX.upcoming, FX.announced, MANY_FIXTURES_FROM + 2]) {
      t.setNow(new Date(NOW.getTime() + ids.length * 1000));
      ids.push(
        (await post(t, '/v1/simulations', auth, { fixture_id: fixture, wait_seconds: 0 })).json().job_id,
      );
    }
    const batchIds: string[] = [];
    for (const fixture of [MANY_FIXTURES_FROM + 3, MANY_FIXTURES_FROM + 4]) {
      t.setNow(new Date(NOW.getTime() + (10 + batchIds.length) * 1000));
      batchIds.push(
        (await post(t, '/v1/simulations/batch', auth, { fixtures: [{ fixture_id: fixture }] })).json()
          .batch_id,
      );
    }
    t.setNow(NOW);
    const page1 = (await get(t, '/v1/simulations/jobs?limit=2', auth)).json();
    expect(page1).toMatchObject({ object: 'list', has_more: true });
    expect(page1.data).toHaveLength(2);
    const all: string[] = [];
    let cursor: string | null = null;
    for (;;) {
      const url: string = `/v1/simulations/jobs?limit=2${cursor ? `&starting_after=${cursor}` : ''}`;
      const page = (await get(t, url, auth)).json();
      all.push(...page.data.map((job: Json) => job.job_id));
      if (!page.has_more) break;
      cursor = page.data[page.data.length - 1].job_id;
    }
    expect(all).toHaveLength(5);
    expect(all.slice(2)).toEqual([...ids].reverse());
    await post(t, `/v1/simulations/batch/${batchIds[0]}/cancel`, auth);
    const cancelledJobs = (await get(t, '/v1/simulations/jobs?status=cancelled', auth)).json();
    expect(cancelledJobs.data).toHaveLength(1);
    const batches = (await get(t, '/v1/simulations/batches', auth)).json();
    expect(batches.data.map((b: Json) => b.batch_id)).toEqual([...batchIds].reverse());
    expect(batches.data.map((b: Json) => b.status)).toEqual(['in_progress', 'cancelled']);
    const cancelled = (await get(t, '/v1/simulations/batches?status=cancelled', auth)).json();
    expect(cancelled.data.map((b: Json) => b.batch_id)).toEqual([batchIds[0]]);
    expect(cancelled.data[0]).toMatchObject({ counts: { cancelled: 1 }, credits_reserved_total: 0 });
    const second = (
      await get(t, `/v1/simulations/batches?limit=1&starting_after=${batchIds[1]}`, auth)
    ).json();
    expect(second).toMatchObject({ has_more: false, data: [{ batch_id: batchIds[0] }] });
  });

  it('counts a read of the results stream as one request against simulations_rpm', async () => {
    const { auth } = await t.newOrg({ limits: { simulations_rpm: 3 } });
    const fixtures = Array.from({ length: 5 }, (_, i) => ({ fixture_id: MANY_FIXTURES_FROM + i }));
    const batch = (await post(t, '/v1/simulations/batch', auth, { fixtures })).json();
    expect(lines((await get(t, batch.results_url, auth)).body)).toHaveLength(5);
    expect((await get(t, batch.results_url, auth)).statusCode).toBe(200);
    const limited = await get(t, batch.results_url, auth);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toMatchObject({ code: 'rate_limited', rule: 'simulations_rpm' });
  });

  it('documents every new route in /openapi.json, the stream as NDJSON with examples', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operations: Array<[string, string, string]> = [
      ['/v1/simulations/batch/{batch_id}/results', 'get', 'streamSimulationBatchResults'],
      ['/v1/simulations/batch/{batch_id}/cancel', 'post', 'cancelSimulationBatch'],
      ['/v1/simulations/batch/{batch_id}/summary', 'get', 'getBatchSummary'],
      ['/v1/simulations/{simulation_id}', 'get', 'getSimulation'],
      ['/v1/simulations/jobs', 'get', 'listSimulationJobs'],
      ['/v1/simulations/batches', 'get', 'listSimulationBatches'],
    ];
    for (const [path, method, operationId] of operations) {
      expect(document.paths[path]?.[method]?.operationId, path).toBe(operationId);
    }
    const stream = document.paths['/v1/simulations/batch/{batch_id}/results'].get.responses['200'];
    const line = stream.content['application/x-ndjson'].schema;
    expect(line.$ref).toBe('#/components/schemas/SimulationBatchResult');
    expect(document.components.schemas.SimulationBatchResult.examples.length).toBeGreaterThan(0);
  });

  it('answers another organisation 404 for every read, stream, cancel and list of it', async () => {
    const owner = await t.newOrg({ limits: ROOMY });
    const other = await t.newOrg({ limits: ROOMY });
    const batch = (
      await post(t, '/v1/simulations/batch', owner.auth, {
        fixtures: [{ fixture_id: MANY_FIXTURES_FROM + 5 }],
      })
    ).json();
    const job = (
      await post(t, '/v1/simulations', owner.auth, { fixture_id: FX.announced, wait_seconds: 0 })
    ).json();
    const missing = (response: { statusCode: number; json(): Json }) => {
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('resource_missing');
    };
    missing(await get(t, `/v1/simulations/batch/${batch.batch_id}`, other.auth));
    missing(await get(t, `/v1/simulations/batch/${batch.batch_id}/results`, other.auth));
    missing(await get(t, `/v1/simulations/batch/${batch.batch_id}/summary`, other.auth));
    missing(await get(t, '/v1/simulations/batch/batch_unknown/summary', owner.auth));
    missing(await post(t, `/v1/simulations/batch/${batch.batch_id}/cancel`, other.auth));
    missing(await get(t, job.result_url, other.auth));
    // A delivery of the owner's, read by the other organisation.
    const [row] = await t.db.sql<{ id: string }[]>`
      INSERT INTO results (cache_key, scope, fixture_id, data_version, draws, document, engine, created_at,
                           home_win, draw, away_win, expected_goals_home, expected_goals_away)
      VALUES ('isolation-test', 'shared', ${FX.upcoming}, 'v', 100, '{}', 'cpu', now(), 0.5, 0.3, 0.2, 1.5, 1)
      RETURNING id::text`;
    await t.db.sql`
      INSERT INTO deliveries (id, org_id, job_id, result_id, mode, created_at)
      VALUES ('sim_isolation', ${owner.orgId}, ${job.job_id}, ${row!.id}, 'live', now())`;
    missing(await get(t, '/v1/simulations/sim_isolation', other.auth));
    missing(await get(t, '/v1/simulations/sim_unknown', owner.auth));
    expect((await get(t, '/v1/simulations/jobs', other.auth)).json().data).toEqual([]);
    expect((await get(t, '/v1/simulations/batches', other.auth)).json().data).toEqual([]);
    const foreignCursor = await get(t, `/v1/simulations/jobs?starting_after=${job.job_id}`, other.auth);
    expect(foreignCursor.json()).toMatchObject({ data: [], has_more: false });
    const stillQueued = (await get(t, `/v1/simulations/batch/${batch.batch_id}`, owner.auth)).json();
    expect(stillQueued.status).toBe('in_progress');
    // Its summary while it is open: the counts, and the credits its queued item holds.
    const { items: _items, validUntil: _validUntil, ...head } = stillQueued;
    const summary = await get(t, `/v1/simulations/batch/${batch.batch_id}/summary`, owner.auth);
    expect(summary.json()).toEqual(head);
    expect(head).toMatchObject({
      counts: { queued: 1 },
      credits_reserved_total: Number(stillQueued.price.credits),
    });
    expect(summary.body.length).toBeLessThan(1000);
  });
});
