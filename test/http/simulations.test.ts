// The simulations API end to end over a real database and the CPU engine: every outcome of docs/api.md §4.3-4.5,
// 4.8 and docs/decisions.md §5-7 that a subscriber can see.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedDocument } from '../../src/engine/stored-document.js';
import { TEST_KEY_MAX_DRAWS } from '../../src/limits/plans.js';
import { storeResult } from '../../src/results/result-store.js';
import { FX, NOW, smallFeed } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

async function setup(options: { worker: boolean }) {
  const t = await createFeedTestContext({ worker: options.worker });
  return t;
}

function post(t: TestContext, url: string, auth: Json, payload: Json, headers: Json = {}) {
  return t.app.inject({ method: 'POST', url, headers: { ...auth, ...headers }, payload });
}

function expectError(
  response: { statusCode: number; body: string; json(): Json },
  status: number,
  code: string,
) {
  expect(response.statusCode, response.body).toBe(status);
  const error = response.json().error;
  expect(error.code).toBe(code);
  return error;
}

describe('simulations with a running worker', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ worker: true });
  });
  afterAll(async () => t.close());

  it('keeps an idempotent 200 without a copy of its document and replays it byte for byte', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const headers = { 'idempotency-key': 'document-once' };
    for (const draws of [1300, 1300]) {
      // The first runs and waits for its run; the second is a cache hit: both 200s name a stored result.
      const key = { 'idempotency-key': `document-once-${draws}-${Math.random()}` };
      const response = await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, draws }, key);
      expect(response.statusCode, response.body).toBe(200);
      const replay = await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, draws }, key);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(response.body);
    }
    const first = await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, draws: 1300 }, headers);
    expect(first.statusCode, first.body).toBe(200);
    const [record] = await t.db.sql<
      { responseBody: string; responseResultId: number | null; responseDocumentAt: number | null }[]
    >`
      SELECT response_body, response_result_id, response_document_at FROM idempotency_keys
      WHERE org_id = ${orgId} AND key = 'document-once'`;
    // One stored copy: the record holds the body without the document and names the result it is in.
    const documentText = JSON.stringify(first.json().simulation);
    expect(record!.responseResultId).not.toBeNull();
    expect(record!.responseBody).toHaveLength(first.body.length - documentText.length);
    expect(record!.responseBody).not.toContain(documentText.slice(0, 200));
    const [result] = await t.db.sql<{ id: number }[]>`
      SELECT id FROM results WHERE id = ${record!.responseResultId}`;
    expect(result).toBeDefined();
    const again = await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, draws: 1300 }, headers);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
  });

  it('delivers a simulation within the wait, charges draws/1000 credits and writes a receipt', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const response = await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, draws: 2000 });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      object: 'simulation',
      fixture_id: FX.upcoming,
      state: 'provisional',
      livemode: true,
      price: { draws: 2000, credits: '2.000' },
      credits_charged: 2,
      scope: 'shared',
      warnings: [],
      receipt: { credits_charged: 2, credits_remaining: 98, idempotency_key: null },
    });
    expect(body.id).toMatch(/^sim_/);
    expect(body.receipt.inputs_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(body.inputs).toMatchObject({
      lineups: { home: { source: 'predicted' }, away: { source: 'predicted' } },
    });
    expect(body.simulation.schema).toBe('vendor.simulation.v1');
    expect(body.simulation.basis.draws).toBe(2000);
    const { home_win, draw, away_win } = body.simulation.result;
    expect(home_win + draw + away_win).toBeCloseTo(1, 9);
    const balance = await t.services.ledger.balance(orgId);
    expect(balance).toMatchObject({ available: 98_000, held: 0, spentThisMonth: 2000 });
    // The fixture list's summary is the latest shared live delivery of the current data_version.
    const list = (await t.app.inject({ method: 'GET', url: '/v1/fixtures', headers: auth })).json();
    const listed = list.data.find((f: Json) => f.fixture_id === FX.upcoming);
    expect(listed.summary).toMatchObject({ simulation_id: body.id, draws: 2000, home_win, draw, away_win });
    expect((await t.services.ledger.checkBalanced(orgId)).balanced).toBe(true);
  });

  it('serves identical shared inputs from the cache: a new delivery and charge, the same document', async () => {
    const a = await t.newOrg();
    const b = await t.newOrg();
    const first = (await post(t, '/v1/simulations', a.auth, { fixture_id: FX.upcoming, draws: 1000 })).json();
    const second = (
      await post(t, '/v1/simulations', b.auth, { fixture_id: FX.upcoming, draws: 1000 })
    ).json();
    expect(second.id).not.toBe(first.id);
    expect(second.credits_charged).toBe(1);
    expect(second.simulation).toEqual(first.simulation);
    expect((await t.services.ledger.balance(b.orgId)).spentThisMonth).toBe(1000);
  });

  it('returns a job with wait_seconds 0, then the result path delivers once and replays free', async () => {
    const { auth, orgId } = await t.newOrg();
    const submitted = await post(t, '/v1/simulations', auth, {
      fixture_id: FX.unlabelled,
      draws: 3000,
      wait_seconds: 0,
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    const job = submitted.json();
    expect(job).toMatchObject({
      object: 'simulation_job',
      status: 'queued',
      price: { draws: 3000, credits: '3.000' },
      credits_reserved: 3,
    });
    expect(job.result_url).toBe(`/v1/simulations/jobs/${job.job_id}?reservation_id=${job.reservation_id}`);
    expect(job.retry_after_seconds).toBeGreaterThan(0);
    let delivered: Json | null = null;
    for (let i = 0; i < 200 && !delivered; i++) {
      const poll = await t.app.inject({ method: 'GET', url: job.result_url, headers: auth });
      if (poll.statusCode === 200) delivered = poll.json();
      else {
        expect(poll.statusCode).toBe(202);
        expect(poll.json().progress.draws_total).toBe(3000);
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    expect(delivered).toMatchObject({ object: 'simulation', credits_charged: 3 });
    const again = await t.app.inject({ method: 'GET', url: job.result_url, headers: auth });
    expect(again.json()).toMatchObject({
      id: delivered!.id,
      credits_charged: 0,
      receipt: { credits_charged: 0 },
    });
    expect((await t.services.ledger.balance(orgId)).spentThisMonth).toBe(3000);
    // Someone else's key, or a wrong reservation: resource_missing.
    const other = await t.newOrg();
    expectError(
      await t.app.inject({ method: 'GET', url: job.result_url, headers: other.auth }),
      404,
      'resource_missing',
    );
    const wrong = `/v1/simulations/jobs/${job.job_id}?reservation_id=res_wrong`;
    expectError(await t.app.inject({ method: 'GET', url: wrong, headers: auth }), 404, 'resource_missing');
    expectError(
      await t.app.inject({ method: 'GET', url: `/v1/simulations/jobs/${job.job_id}`, headers: auth }),
      400,
      'parameter_missing',
    );
  });

  it('finds a fixture by team names, with the next match when no date is given', async () => {
    const { auth } = await t.newOrg();
    const byName = await post(t, '/v1/simulations', auth, {
      home: 'northbridge',
      away: 'Southport Rovers',
      draws: 500,
    });
    expect(byName.statusCode, byName.body).toBe(200);
    expect(byName.json().fixture_id).toBe(FX.upcoming);
    const withDate = await post(t, '/v1/simulations', auth, {
      home: 'Northbridge',
      away: 'Southport',
      date: '2026-11-23',
      draws: 500,
    });
    expect(withDate.json().fixture_id).toBe(FX.upcoming);
    const wrongDay = await post(t, '/v1/simulations', auth, {
      home: 'Northbridge',
      away: 'Southport',
      date: '2026-11-24',
    });
    expectError(wrongDay, 404, 'fixture_not_found');
  });

  it('gives test keys synthetic output: livemode false, nothing charged or held', async () => {
    const { auth, orgId } = await t.newOrg({ mode: 'test' });
    const before = await t.services.ledger.balance(orgId);
    const response = await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, draws: 1000 });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ livemode: false, credits_charged: 0, price: { credits: '0.000' } });
    expect(body.simulation.timing.engine).toBe('cpu');
    expect(await t.services.ledger.balance(orgId)).toEqual(before);
  });

  it('bounds the work of test keys: runs above 10,000 draws make 10,000, with a warning', async () => {
    const { auth } = await t.newOrg({ mode: 'test' });
    const response = await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, draws: 1_000_000 });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body.price).toEqual({ draws: TEST_KEY_MAX_DRAWS, credits: '0.000' });
    expect(body.warnings).toContain('test_draws_capped');
    expect(body.simulation.basis.draws).toBe(TEST_KEY_MAX_DRAWS);
    const quote = (
      await post(t, '/v1/simulations/quote', auth, { fixture_id: FX.upcoming, draws: 50_000 })
    ).json();
    expect(quote.price.draws).toBe(TEST_KEY_MAX_DRAWS);
    expect(quote.warnings).toContain('test_draws_capped');
    const batch = await post(t, '/v1/simulations/batch', auth, {
      fixtures: [{ fixture_id: FX.upcoming }],
      draws: 200_000,
    });
    expect(batch.statusCode, batch.body).toBe(202);
    expect(batch.json().price.draws).toBe(TEST_KEY_MAX_DRAWS);
    expect(batch.json().items[0].warnings).toContain('test_draws_capped');
    const small = (
      await post(t, '/v1/simulations/quote', auth, { fixture_id: FX.upcoming, draws: 5000 })
    ).json();
    expect(small.price.draws).toBe(5000);
    expect(small.warnings).not.toContain('test_draws_capped');
  });

  it('delivers a custom lineup privately with its warnings', async () => {
    const { auth } = await t.newOrg();
    // Team 1's squad: 101-103 keepers, 104-111 defenders, 112-119 midfielders, 120-125 attackers.
    const xi = [102, 104, 105, 106, 107, 112, 113, 114, 120, 121, 122];
    const response = await post(t, '/v1/simulations', auth, {
      fixture_id: FX.upcoming,
      draws: 500,
      lineups: { home: { source: 'custom', xi, bench: [101, 108], formation: '4-3-3' } },
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body.scope).toBe('private');
    expect(body.warnings).toContain('low_start_probability');
    expect(body.inputs.lineups.home).toEqual({ source: 'custom', xi, bench: [101, 108], formation: '4-3-3' });
    const starters = body.simulation.players.filter((p: Json) => p.team === 'home' && p.starts === 1);
    expect(starters.map((p: Json) => p.player_id).sort()).toEqual([...xi].sort());
  });

  it('delivers batch items through their result paths and reports them in the batch status', async () => {
    const { auth, orgId } = await t.newOrg();
    const response = await post(t, '/v1/simulations/batch', auth, {
      draws: 400,
      fixtures: [
        { fixture_id: FX.upcoming },
        { fixture_id: FX.unlabelled },
        { fixture_id: 999_999 },
        { fixture_id: FX.uncovered },
      ],
    });
    expect(response.statusCode, response.body).toBe(202);
    const batch = response.json();
    expect(batch.object).toBe('simulation_batch');
    expect(batch.items).toHaveLength(4);
    expect(batch.items[2]).toMatchObject({
      status: 'rejected',
      credits_reserved: 0,
      error: { code: 'fixture_not_found' },
    });
    expect(batch.items[3].error.code).toBe('fixture_not_covered');
    expect(batch.credits_reserved_total).toBeCloseTo(0.8, 9);
    for (const item of batch.items.slice(0, 2)) {
      let status = 202;
      for (let i = 0; i < 200 && status !== 200; i++) {
        const poll = await t.app.inject({ method: 'GET', url: item.result_url, headers: auth });
        status = poll.statusCode;
        if (status !== 200) await new Promise((r) => setTimeout(r, 25));
      }
      expect(status).toBe(200);
    }
    const status = await t.app.inject({
      method: 'GET',
      url: `/v1/simulations/batch/${batch.batch_id}`,
      headers: auth,
    });
    expect(status.statusCode).toBe(200);
    const items = status.json().items;
    // Every item in submission order, the rejected ones with their error (docs/api.md §4.6).
    expect(items.map((i: Json) => i.status)).toEqual(['delivered', 'delivered', 'rejected', 'rejected']);
    expect(items.map((i: Json) => i.credits_charged)).toEqual([0.4, 0.4, undefined, undefined]);
    expect(items[3].error.code).toBe('fixture_not_covered');
    expect(status.json()).toMatchObject({
      status: 'completed',
      counts: { total: 4, rejected: 2, delivered: 2, queued: 0, running: 0, succeeded: 0 },
    });
    expect(status.json().completed_at).not.toBeNull();
    expect(items[0].freshness.status).toBe('fresh');
    expect((await t.services.ledger.balance(orgId)).spentThisMonth).toBe(800);
    const other = await t.newOrg();
    expectError(
      await t.app.inject({
        method: 'GET',
        url: `/v1/simulations/batch/${batch.batch_id}`,
        headers: other.auth,
      }),
      404,
      'resource_missing',
    );
  });
});

describe('simulations without a worker (jobs stay queued)', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ worker: false });
  });
  afterAll(async () => t.close());

  it('quotes the exact price without holding anything', async () => {
    const { auth, orgId } = await t.newOrg();
    const response = await post(t, '/v1/simulations/quote', auth, { fixture_id: FX.upcoming, draws: 12_345 });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      object: 'simulation_quote',
      price: { draws: 12_345, credits: '12.345' },
      credits: 12.345,
      credits_charged: 0,
      livemode: true,
      scope: 'shared',
    });
    expect(typeof response.json().rate_card).toBe('string');
    expect((await t.services.ledger.balance(orgId)).held).toBe(0);
    const test = await t.newOrg({ mode: 'test' });
    const testQuote = (await post(t, '/v1/simulations/quote', test.auth, { fixture_id: FX.upcoming })).json();
    expect(testQuote).toMatchObject({ livemode: false, credits: 0, price: { credits: '0.000' } });
  });

  it('refuses bad requests with the field named and nothing held', async () => {
    const { auth, orgId } = await t.newOrg();
    const cases: Array<[Json, number, string, string | null]> = [
      [{ fixture_id: FX.upcoming, draws: 99 }, 400, 'parameter_invalid', 'draws'],
      [{ fixture_id: FX.upcoming, draws: 1_000_001 }, 400, 'parameter_invalid', 'draws'],
      [{ fixture_id: FX.upcoming, wait_seconds: 26 }, 400, 'parameter_invalid', 'wait_seconds'],
      [{ fixture_id: 0 }, 400, 'parameter_invalid', 'fixture_id'],
      [{ fixture_id: 'abc' }, 400, 'parameter_invalid', 'fixture_id'],
      [{ fixture_id: FX.upcoming, home: 'Northbridge' }, 400, 'parameter_invalid', 'fixture_id'],
      [{ home: 'Northbridge' }, 400, 'parameter_missing', 'away'],
      [{}, 400, 'parameter_missing', 'home'],
      [{ home: 'x'.repeat(201), away: 'y' }, 400, 'parameter_invalid', 'home'],
      [{ home: 'Northbridge', away: 'Southport', date: '2026-02-30' }, 400, 'parameter_invalid', 'date'],
      [{ fixture_id: FX.upcoming, colour: 'red' }, 400, 'parameter_invalid', 'colour'],
      [{ fixture_id: 999_999 }, 404, 'fixture_not_found', 'fixture_id'],
      [{ fixture_id: FX.uncovered }, 400, 'fixture_not_covered', 'fixture_id'],
      [{ home: 'Nowhere FC', away: 'Southport' }, 404, 'fixture_not_found', 'home'],
      [
        { fixture_id: FX.upcoming, lineups: { home: { source: 'announced' } } },
        409,
        'lineups_not_announced',
        'lineups.home.source',
      ],
      [
        { fixture_id: FX.upcoming, lineups: { home: { source: 'custom', xi: [101] } } },
        400,
        'lineup_invalid',
        'lineups.home.xi',
      ],
    ];
    for (const [payload, status, code, param] of cases) {
      const error = expectError(await post(t, '/v1/simulations', auth, payload), status, code);
      expect(error.param, JSON.stringify(payload)).toBe(param);
      expect(error.credit_effect).toBe('not_charged');
    }
    const postponed = expectError(
      await post(t, '/v1/simulations', auth, { fixture_id: FX.postponed }),
      400,
      'fixture_not_covered',
    );
    expect(postponed.recovery.reason).toBe('unavailable');
    const finished = expectError(
      await post(t, '/v1/simulations', auth, { fixture_id: FX.finished }),
      400,
      'fixture_not_covered',
    );
    expect(finished.recovery.reason).toBe('kickoff_passed');
    const balance = await t.services.ledger.balance(orgId);
    expect(balance.held).toBe(0);
    expect(balance.spentThisMonth).toBe(0);
  });

  it('answers 402 balance_too_low when the balance cannot cover the price, holding nothing', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const error = expectError(
      await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, draws: 100_001 }),
      402,
      'balance_too_low',
    );
    expect(error.type).toBe('billing_error');
    expect((await t.services.ledger.balance(orgId)).held).toBe(0);
    const batch = await post(t, '/v1/simulations/batch', auth, {
      draws: 60_000,
      fixtures: [{ fixture_id: FX.upcoming }, { fixture_id: FX.unlabelled }],
    });
    // The recovery names the price of every runnable item together (docs/api.md §4.5): 2 × 60,000 draws.
    expect(expectError(batch, 402, 'balance_too_low').recovery.credits_required).toBe(120);
    expect((await t.services.ledger.balance(orgId)).held).toBe(0);
  });

  it('holds the price while queued, and the hold of a failed job returns with simulation_failed', async () => {
    const { auth, orgId } = await t.newOrg();
    const job = (
      await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, draws: 5000, wait_seconds: 0 })
    ).json();
    expect((await t.services.ledger.balance(orgId)).held).toBe(5000);
    await t.graph.queue.fail(job.job_id, { code: 'simulation_failed', message: 'engine exploded' });
    const error = expectError(
      await t.app.inject({ method: 'GET', url: job.result_url, headers: auth }),
      500,
      'simulation_failed',
    );
    expect(error.credit_effect).toBe('not_charged');
    // The hold of a failed job ends after HOLD_TTL like any undelivered hold; the sweeper returns it.
    t.setNow(new Date(NOW.getTime() + 2 * 3_600_000));
    await t.graph.sweeper.sweep();
    t.setNow(NOW);
    expect((await t.services.ledger.balance(orgId)).held).toBe(0);
    expect((await t.services.ledger.balance(orgId)).spentThisMonth).toBe(0);
  });

  it('answers reservation_expired when a finished job was not collected within the hold time', async () => {
    const { auth, orgId } = await t.newOrg();
    const job = (
      await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming, draws: 700, wait_seconds: 0 })
    ).json();
    const [claimed] = await t.graph.queue.claim('manual-worker', 1, 60_000);
    expect(claimed?.id).toBe(job.job_id);
    await t.db.sql.begin(async (tx) => {
      const result = await storeResult(
        tx,
        {
          cacheKey: `manual-${job.job_id}`,
          scope: 'shared',
          orgId: null,
          fixtureId: FX.upcoming,
          dataVersion: claimed!.dataVersion,
          draws: 700,
          summary: { homeWin: 0.5, draw: 0.3, awayWin: 0.2, expectedGoalsHome: 1.5, expectedGoalsAway: 1 },
          document: storedDocument('{"schema":"vendor.simulation.v1"}'),
          engine: 'cpu',
          runMs: 1,
          gpuMs: 0,
        },
        new Date(),
      );
      await t.graph.queue.complete(job.job_id, { resultId: result.id, gpuSecondsUsed: 0, engine: 'cpu', tx });
    });
    t.setNow(new Date(NOW.getTime() + 3601_000));
    await t.graph.sweeper.sweep();
    const error = expectError(
      await t.app.inject({ method: 'GET', url: job.result_url, headers: auth }),
      409,
      'reservation_expired',
    );
    expect(error.credit_effect).toBe('not_charged');
    t.setNow(NOW);
    expect(await t.services.ledger.balance(orgId)).toMatchObject({ held: 0, spentThisMonth: 0 });
  });

  it('replays an idempotent request byte for byte and refuses a different body with the same key', async () => {
    const { auth, orgId } = await t.newOrg();
    const headers = { 'idempotency-key': 'order-42' };
    const payload = { fixture_id: FX.upcoming, draws: 900, wait_seconds: 0 };
    const first = await post(t, '/v1/simulations', auth, payload, headers);
    const second = await post(t, '/v1/simulations', auth, payload, headers);
    expect(first.statusCode).toBe(202);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect((await t.services.ledger.balance(orgId)).held).toBe(900);
    const conflict = expectError(
      await post(t, '/v1/simulations', auth, { ...payload, draws: 901 }, headers),
      409,
      'idempotency_conflict',
    );
    expect(conflict.retry.idempotency_key).toBe('new');
    expectError(
      await post(t, '/v1/simulations', auth, payload, { 'idempotency-key': 'k'.repeat(256) }),
      400,
      'parameter_invalid',
    );
  });

  it('limits open jobs, daily submissions, batches and GPU-seconds with their 429s', async () => {
    const open = await t.newOrg({ limits: { concurrent_simulations: 1 } });
    expect(
      (await post(t, '/v1/simulations', open.auth, { fixture_id: FX.upcoming, wait_seconds: 0 })).statusCode,
    ).toBe(202);
    const busy = await post(t, '/v1/simulations', open.auth, { fixture_id: FX.unlabelled, wait_seconds: 0 });
    expectError(busy, 429, 'concurrency_limited');
    expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0);

    const daily = await t.newOrg({ limits: { submissions_per_day: 1 } });
    expect(
      (await post(t, '/v1/simulations', daily.auth, { fixture_id: FX.upcoming, wait_seconds: 0 })).statusCode,
    ).toBe(202);
    const ceiling = await post(t, '/v1/simulations', daily.auth, {
      fixture_id: FX.unlabelled,
      wait_seconds: 0,
    });
    expect(expectError(ceiling, 429, 'rate_limited').rule).toBe('submissions_per_day');
    // Retry-After runs to the next 00:00 UTC.
    expect(Number(ceiling.headers['retry-after'])).toBe(12 * 3600);

    const batches = await t.newOrg({ limits: { batches_per_day: 0 } });
    const batch = await post(t, '/v1/simulations/batch', batches.auth, {
      fixtures: [{ fixture_id: FX.upcoming }],
    });
    expect(expectError(batch, 429, 'rate_limited').rule).toBe('batches_per_day');

    const gpu = await t.newOrg({ limits: { gpu_seconds_per_day: 0 } });
    const budget = await post(t, '/v1/simulations', gpu.auth, {
      fixture_id: FX.upcoming,
      draws: 1_000_000,
      wait_seconds: 0,
    });
    expect(expectError(budget, 429, 'rate_limited').rule).toBe('gpu_seconds_per_day');
    for (const org of [open, daily, batches, gpu]) {
      expect((await t.services.ledger.checkBalanced(org.orgId)).balanced).toBe(true);
    }
  });

  it('limits simulation requests per minute (simulations_rpm)', async () => {
    const { auth } = await t.newOrg({ limits: { simulations_rpm: 2 } });
    for (let i = 0; i < 2; i++) {
      expect(
        (await post(t, '/v1/simulations/quote', auth, { fixture_id: FX.upcoming, draws: 100 + i }))
          .statusCode,
      ).toBe(200);
    }
    const limited = await post(t, '/v1/simulations/quote', auth, { fixture_id: FX.upcoming, draws: 200 });
    expect(expectError(limited, 429, 'rate_limited').rule).toBe('simulations_rpm');
  });

  it('refuses a repeated-call burst with loop_guard', async () => {
    const { auth } = await t.newOrg();
    const payload = { fixture_id: FX.upcoming, draws: 100 };
    for (let i = 0; i < 7; i++)
      expect((await post(t, '/v1/simulations/quote', auth, payload)).statusCode).toBe(200);
    const looped = await post(t, '/v1/simulations/quote', auth, payload);
    expectError(looped, 429, 'loop_guard');
    expect(looped.headers['retry-after']).toBe('10');
  });

  it('locks custom lineups after five invalid ones (lineup_cooldown), and reports player_not_in_squad', async () => {
    const { auth } = await t.newOrg();
    const bad = (n: number) => ({
      fixture_id: FX.upcoming,
      draws: 100 + n,
      lineups: { home: { source: 'custom', xi: [101, 102] } },
    });
    const missing = await post(t, '/v1/simulations/quote', auth, {
      fixture_id: FX.upcoming,
      lineups: { home: { source: 'custom', xi: [101, 104, 105, 106, 107, 112, 113, 114, 120, 121, 999] } },
    });
    const error = expectError(missing, 400, 'player_not_in_squad');
    expect(error.recovery.unknown_id).toBe('999');
    expect(error.recovery.next_step).toContain(`/v1/fixtures/${FX.upcoming}/squads`);
    for (let i = 0; i < 4; i++)
      expectError(await post(t, '/v1/simulations/quote', auth, bad(i)), 400, 'lineup_invalid');
    const locked = await post(t, '/v1/simulations/quote', auth, bad(9));
    const cooldown = expectError(locked, 429, 'lineup_cooldown');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Date.parse(cooldown.recovery.retry_at)).toBeGreaterThan(NOW.getTime());
    // Auto lineups are not locked.
    expect((await post(t, '/v1/simulations/quote', auth, { fixture_id: FX.upcoming })).statusCode).toBe(200);
  });

  it('answers fixture_ambiguous with candidates, and refreshing / fixture_lookup_incomplete during a reload', async () => {
    const feed = smallFeed();
    feed.teams.push({
      team_id: 7,
      name: 'Northbridge Wanderers',
      short_name: 'Northbridge',
      country: 'Testland',
    });
    feed.fixtures.push({
      ...feed.fixtures[0]!,
      fixture_id: 150,
      home_team_id: 7,
      kickoff: new Date(NOW.getTime() + 50 * 3_600_000).toISOString(),
    });
    await t.loadFeed(feed, { clock: () => NOW });
    const { auth } = await t.newOrg();
    const ambiguous = expectError(
      await post(t, '/v1/simulations/quote', auth, { home: 'Northbridge', away: 'Southport' }),
      409,
      'fixture_ambiguous',
    );
    expect(ambiguous.recovery.candidates.map((c: Json) => c.fixture_id).sort()).toEqual([FX.upcoming, 150]);

    await t.db.sql`UPDATE fixtures SET refreshing_until = ${new Date(NOW.getTime() + 60_000)} WHERE id = 150`;
    const incomplete = await post(t, '/v1/simulations', auth, {
      home: 'Northbridge Wanderers',
      away: 'Southport',
    });
    expectError(incomplete, 503, 'fixture_lookup_incomplete');
    expectError(await post(t, '/v1/simulations', auth, { fixture_id: 150 }), 503, 'refreshing');
    await t.db.sql`UPDATE fixtures SET refreshing_until = NULL WHERE id = 150`;
  });

  it('keeps a 1,000-item batch response under 2 MiB', async () => {
    const { auth } = await t.newOrg();
    const fixtures = Array.from({ length: 1000 }, (_, i) => ({
      fixture_id: i < 2 ? [FX.upcoming, FX.unlabelled][i]! : 500_000 + i,
    }));
    const response = await post(t, '/v1/simulations/batch', auth, { fixtures, draws: 100 });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(202);
    expect(Buffer.byteLength(response.body)).toBeLessThan(2 * 1024 * 1024);
    expect(response.json().items).toHaveLength(1000);
    const duplicate = await post(t, '/v1/simulations/batch', auth, {
      fixtures: [{ fixture_id: 1 }, { fixture_id: '1' }],
    });
    expect(expectError(duplicate, 400, 'parameter_invalid').param).toBe('fixtures.1');
    const tooMany = await post(t, '/v1/simulations/batch', auth, {
      fixtures: Array.from({ length: 1001 }, (_, i) => ({ fixture_id: i + 1 })),
    });
    expect(expectError(tooMany, 400, 'parameter_invalid').param).toBe('fixtures');
  });

  it('refuses keys without simulations.run', async () => {
    const { auth } = await t.newOrg({ scopes: ['data.read'] });
    expectError(await post(t, '/v1/simulations', auth, { fixture_id: FX.upcoming }), 403, 'scope_missing');
    expectError(
      await post(t, '/v1/simulations/quote', auth, { fixture_id: FX.upcoming }),
      403,
      'scope_missing',
    );
    expectError(
      await post(t, '/v1/simulations/batch', auth, { fixtures: [{ fixture_id: FX.upcoming }] }),
      403,
      'scope_missing',
    );
  });
});
