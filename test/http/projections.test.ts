// Season projections end to end over a real database and the projection worker (docs/api.md §4.12):
// prices, the wait and the result path, holds and settlement, idempotency, a finished season, failures
// and expired holds, as simulations have them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCompetitionSeason } from '../../src/fixtures/competition-season.js';
import { samplerInput } from '../../src/projections/projection-document.js';
import { getProjectionJob } from '../../src/projections/projection-store.js';
import { type ProjectionWorker, startProjectionWorker } from '../../src/projections/projection-worker.js';
import { type RunSeasons, runSeasonsOnThread } from '../../src/projections/season-runner.js';
import { FX, NOW, smallFeed } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';
import { expectedPointsByFixture } from '../projections/expected-points.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

const HOLD_TTL_SECONDS = 3600;
/** Competition 1 of the small feed: 4 clubs, 1 finished fixture, 5 to play (one without inputs). */
const COMPETITION = 1;
const FINISHED_COMPETITION = 3;

/** A competition whose every fixture is finished: teams 5 and 6 met twice. */
function finishedSeasonFeed() {
  const feed = smallFeed();
  return {
    format: feed.format,
    competitions: [{ ...feed.competitions[0]!, competition_id: FINISHED_COMPETITION, name: 'Test Finished' }],
    teams: [],
    fixtures: [
      { home: 5, away: 6, score: { home: 2, away: 0 }, id: 9001 },
      { home: 6, away: 5, score: { home: 1, away: 1 }, id: 9002 },
    ].map((f) => ({
      fixture_id: f.id,
      competition_id: FINISHED_COMPETITION,
      home_team_id: f.home,
      away_team_id: f.away,
      kickoff: new Date(NOW.getTime() - 86_400_000 * (f.id - 9000)).toISOString(),
      state: 'finished' as const,
      score: f.score,
    })),
  };
}

describe('season projections', () => {
  let t: TestContext;
  let worker: ProjectionWorker;
  let failNext = false;
  const runSeasons: RunSeasons = async (input, seasons, seed) => {
    if (failNext) {
      failNext = false;
      throw new Error('the sampler broke');
    }
    return runSeasonsOnThread(input, seasons, seed);
  };
  beforeAll(async () => {
    t = await createFeedTestContext();
    await t.loadFeed(finishedSeasonFeed(), { clock: () => NOW });
    worker = startProjectionWorker({
      sql: t.db.sql,
      ledger: t.graph.ledger,
      events: t.graph.projectionEvents,
      runSeasons,
      clock: () => NOW,
      workerId: 'test-projections',
      holdTtlSeconds: HOLD_TTL_SECONDS,
    });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  const post = (auth: Json, url: string, payload: Json, headers: Json = {}) =>
    t.app.inject({ method: 'POST', url, headers: { ...auth, ...headers }, payload });
  const get = (auth: Json, url: string) => t.app.inject({ method: 'GET', url, headers: auth });
  /** Waits until the worker has run the job (read from its row, not through the rate-limited API). */
  const finishedJob = async (jobId: string) => {
    while ((await getProjectionJob(t.db.sql, jobId))?.status !== 'succeeded') {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('quotes seasons x remaining fixtures / 100 milli-credits, and nothing for a test key', async () => {
    const live = await t.newOrg({ plan: 'plus' });
    const quote = await post(live.auth, '/v1/projections/quote', { competition_id: COMPETITION });
    expect(quote.statusCode, quote.body).toBe(200);
    expect(quote.json()).toMatchObject({
      object: 'projection_quote',
      price: { seasons: 10_000, remaining_fixtures: 5, credits: '0.500' },
      credits: 0.5,
      credits_charged: 0,
      livemode: true,
    });
    const test = await t.newOrg({ plan: 'plus', mode: 'test' });
    const free = await post(test.auth, '/v1/projections/quote', {
      competition_id: COMPETITION,
      seasons: 1000,
    });
    expect(free.json().price).toEqual({ seasons: 1000, remaining_fixtures: 5, credits: '0.000' });
    // A test key's work is bounded instead of priced: at most 10,000 seasons.
    const capped = await post(test.auth, '/v1/projections/quote', {
      competition_id: COMPETITION,
      seasons: 50_000,
    });
    expect(capped.json().price).toEqual({ seasons: 10_000, remaining_fixtures: 5, credits: '0.000' });
  });

  it('refuses a burst of the same request with loop_guard, as simulations do (config.loopGuard)', async () => {
    const { auth } = await t.newOrg({ plan: 'plus' });
    for (let i = 0; i < 7; i++) {
      expect((await post(auth, '/v1/projections/quote', { competition_id: COMPETITION })).statusCode).toBe(
        200,
      );
    }
    const looped = await post(auth, '/v1/projections/quote', { competition_id: COMPETITION });
    expect(looped.statusCode).toBe(429);
    expect(looped.json().error).toMatchObject({ code: 'loop_guard', rule: 'loop_guard' });
    expect(looped.headers['retry-after']).toBe('10');
  });

  it('delivers within the wait, charges the quoted price once and states the table from the results', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const before = await t.graph.ledger.balance(orgId);
    const response = await post(auth, '/v1/projections', { competition_id: COMPETITION });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      object: 'season_projection',
      competition: { competition_id: COMPETITION, name: 'Test Premier' },
      seasons: 10_000,
      played_fixtures: 1,
      remaining_fixtures: 5,
      credits_charged: 0.5,
      rules: { points: { win: 3, draw: 1 }, tie_breakers: ['goal_difference', 'goals_for', 'head_to_head'] },
      zones: [{ name: 'title', from: 1, to: 1 }],
    });
    expect(body.teams).toHaveLength(4);
    // The finished fixture: Southport Rovers (2) beat Northbridge Athletic (1) 2-1.
    const team = (id: number) => body.teams.find((entry: Json) => entry.team.team_id === id);
    expect(team(2)).toMatchObject({
      played: 1,
      points: 3,
      goals_for: 2,
      goals_against: 1,
      goal_difference: 1,
    });
    expect(team(1)).toMatchObject({
      played: 1,
      points: 0,
      goals_for: 1,
      goals_against: 2,
      goal_difference: -1,
    });
    expect(team(3)).toMatchObject({ played: 0, points: 0 });
    for (let i = 0; i < 4; i++) {
      const byClub = body.teams[i].positions.reduce((sum: number, p: number) => sum + p, 0);
      const byPlace = body.teams.reduce((sum: number, entry: Json) => sum + entry.positions[i], 0);
      expect(byClub).toBeCloseTo(1, 12);
      expect(byPlace).toBeCloseTo(1, 12);
      expect(body.teams[i].title).toBe(body.teams[i].positions[0]);
      expect(body.teams[i].zones.title).toBe(body.teams[i].title);
      expect(body.teams[i].standard_error.expected_points).toBeGreaterThan(0);
    }
    const expected = body.teams.map((entry: Json) => entry.expected_points);
    expect(expected).toEqual([...expected].sort((a, b) => b - a));
    // Expected minus earned points: each club's 3 P(win) + P(draw) over its remaining fixtures from the
    // same model (the served strength sd), within four of the served Monte Carlo standard errors.
    const season = await readCompetitionSeason(t.db.sql, COMPETITION, NOW);
    const byFixture = expectedPointsByFixture(samplerInput(season));
    for (const entry of body.teams) {
      const club = season.clubs.findIndex((c) => c.teamId === entry.team.team_id);
      const gap = Math.abs(entry.expected_points - entry.points - byFixture[club]!);
      expect(gap, entry.team.name).toBeLessThan(4 * entry.standard_error.expected_points);
    }
    const after = await t.graph.ledger.balance(orgId);
    expect(before.available - after.available).toBe(500);
    expect(after.held).toBe(0);
    expect((await t.graph.ledger.checkBalanced(orgId)).balanced).toBe(true);
    const again = await get(auth, `/v1/projections/${body.id}`);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({
      id: body.id,
      credits_charged: 0,
      receipt: { credits_charged: 0.5 },
    });
    expect(again.json().teams).toEqual(body.teams);
    expect((await t.graph.ledger.balance(orgId)).available).toBe(after.available);
  });

  it('answers 202 with a held job when asked not to wait, and its result path delivers and settles it once', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const response = await post(auth, '/v1/projections', {
      competition_id: COMPETITION,
      seasons: 2000,
      wait_seconds: 0,
    });
    expect(response.statusCode, response.body).toBe(202);
    const job = response.json();
    expect(job).toMatchObject({ object: 'projection_job', status: 'queued', credits_reserved: 0.1 });
    expect(response.headers.location).toBe(job.result_url);
    expect(response.headers['retry-after']).toBe(String(job.retry_after_seconds));
    expect((await t.graph.ledger.balance(orgId)).held).toBe(100);
    await finishedJob(job.job_id);
    const delivered = await get(auth, job.result_url);
    expect(delivered.statusCode, delivered.body).toBe(200);
    expect(delivered.json()).toMatchObject({ credits_charged: 0.1, seasons: 2000 });
    const balance = await t.graph.ledger.balance(orgId);
    expect(balance.held).toBe(0);
    const replay = await get(auth, job.result_url);
    expect(replay.json()).toMatchObject({ id: delivered.json().id, credits_charged: 0 });
    expect((await t.graph.ledger.balance(orgId)).available).toBe(balance.available);
    const stranger = await t.newOrg({ plan: 'plus' });
    expect((await get(stranger.auth, job.result_url)).json().error.code).toBe('resource_missing');
    expect((await get(stranger.auth, `/v1/projections/${delivered.json().id}`)).statusCode).toBe(404);
    // The same organisation's test key sees test objects only: the live job and projection are unknown to it.
    const testKey = await t.operator.createKey({ orgId, mode: 'test' });
    const testAuth = { authorization: `Bearer ${testKey.secret}` };
    expect((await get(testAuth, job.result_url)).json().error.code).toBe('resource_missing');
    expect((await get(testAuth, `/v1/projections/${delivered.json().id}`)).json().error.code).toBe(
      'resource_missing',
    );
  });

  it('writes a projection.succeeded event with the job as its result path shows it (docs/api.md §6)', async () => {
    const { auth } = await t.newOrg({ plan: 'plus' });
    // Seasons no other test asks for: the same request again would be answered from its stored table.
    const held = await post(auth, '/v1/projections', {
      competition_id: COMPETITION,
      seasons: 3000,
      wait_seconds: 0,
    });
    expect(held.statusCode, held.body).toBe(202);
    const { job_id, result_url } = held.json();
    await finishedJob(job_id);
    const events = (await get(auth, '/v1/events?type=projection.succeeded')).json();
    expect(events.data).toHaveLength(1);
    expect(events.data[0]).toMatchObject({
      object: 'event',
      type: 'projection.succeeded',
      livemode: true,
      data: { object: { object: 'projection_job', job_id, result_url, status: 'succeeded' } },
    });
  });

  it('settles once when the result path is read many times at once', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const before = await t.graph.ledger.balance(orgId);
    const job = (
      await post(auth, '/v1/projections', { competition_id: COMPETITION, seasons: 1000, wait_seconds: 0 })
    ).json();
    await finishedJob(job.job_id);
    const answers = await Promise.all(Array.from({ length: 6 }, () => get(auth, job.result_url)));
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    const charged = answers.map((answer) => answer.json().credits_charged).sort();
    expect(charged).toEqual([0, 0, 0, 0, 0, 0.05]);
    expect(new Set(answers.map((answer) => answer.json().id)).size).toBe(1);
    const after = await t.graph.ledger.balance(orgId);
    expect(before.available - after.available).toBe(50);
    expect(after.held).toBe(0);
    const charges = (await t.graph.ledger.entries(orgId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toHaveLength(1);
  });

  it('replays an Idempotency-Key byte for byte and charges once', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const before = await t.graph.ledger.balance(orgId);
    const headers = { 'idempotency-key': 'projection-once' };
    const first = await post(
      auth,
      '/v1/projections',
      { competition_id: COMPETITION, seasons: 1000 },
      headers,
    );
    expect(first.statusCode, first.body).toBe(200);
    const replay = await post(
      auth,
      '/v1/projections',
      { competition_id: COMPETITION, seasons: 1000 },
      headers,
    );
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(before.available - (await t.graph.ledger.balance(orgId)).available).toBe(50);
    const conflict = await post(
      auth,
      '/v1/projections',
      { competition_id: COMPETITION, seasons: 2000 },
      headers,
    );
    expect(conflict.json().error.code).toBe('idempotency_conflict');
  });

  it('answers a finished season with its final table, with certainty, and charges nothing', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const quote = await post(auth, '/v1/projections/quote', { competition_id: FINISHED_COMPETITION });
    expect(quote.json().price).toEqual({ seasons: 10_000, remaining_fixtures: 0, credits: '0.000' });
    const before = await t.graph.ledger.entries(orgId);
    const response = await post(auth, '/v1/projections', { competition_id: FINISHED_COMPETITION });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ remaining_fixtures: 0, played_fixtures: 2, credits_charged: 0 });
    expect(body.teams.map((entry: Json) => [entry.team.team_id, entry.points, entry.positions])).toEqual([
      [5, 4, [1, 0]],
      [6, 1, [0, 1]],
    ]);
    expect(body.teams[0]).toMatchObject({
      title: 1,
      expected_points: 4,
      standard_error: { expected_points: 0, title: 0 },
    });
    expect(await t.graph.ledger.entries(orgId)).toEqual(before);
  });

  it('is free for test keys', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus', mode: 'test' });
    const before = await t.graph.ledger.entries(orgId);
    const response = await post(auth, '/v1/projections', { competition_id: COMPETITION, seasons: 1000 });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      livemode: false,
      credits_charged: 0,
      receipt: { credits_remaining: null },
    });
    expect(await t.graph.ledger.entries(orgId)).toEqual(before);
  });

  it('refuses unknown and uncovered competitions before reserving anything', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const unknown = await post(auth, '/v1/projections', { competition_id: 999 });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'competition_not_found', param: 'competition_id' });
    const uncovered = await post(auth, '/v1/projections', { competition_id: 2 });
    expect(uncovered.json().error.code).toBe('competition_not_covered');
    const few = await post(auth, '/v1/projections', { competition_id: COMPETITION, seasons: 999 });
    expect(few.json().error.code).toBe('parameter_invalid');
    expect((await t.graph.ledger.balance(orgId)).held).toBe(0);
  });

  it('gives the same table for the same inputs, and serves a repeat from it: charged as a run, never run again', async () => {
    const request = { competition_id: COMPETITION, seasons: 4000 };
    // A live and a test key share no stored table (as simulations' caches are apart by key mode), so each
    // of these runs the seasons: the same identity, so the same seed, so the same table.
    const live = await t.newOrg({ plan: 'plus' });
    const first = await post(live.auth, '/v1/projections', request);
    expect(first.statusCode, first.body).toBe(200);
    const test = await t.newOrg({ plan: 'plus', mode: 'test' });
    const fromTest = await post(test.auth, '/v1/projections', request);
    expect(fromTest.statusCode, fromTest.body).toBe(200);
    expect(fromTest.json().teams).toEqual(first.json().teams);
    const ran = await getProjectionJob(t.db.sql, first.json().receipt.job_id);
    const ranToo = await getProjectionJob(t.db.sql, fromTest.json().receipt.job_id);
    expect(ran).toMatchObject({ attempts: 1, seed: ranToo!.seed, cacheKey: ranToo!.cacheKey });

    // Another organisation asks the same, without waiting: delivered at once from the stored table,
    // charged the same price, its job never claimed by the worker, its event written.
    const other = await t.newOrg({ plan: 'plus' });
    const before = await t.graph.ledger.balance(other.orgId);
    const repeat = await post(other.auth, '/v1/projections', { ...request, wait_seconds: 0 });
    expect(repeat.statusCode, repeat.body).toBe(200);
    expect(repeat.json()).toMatchObject({ credits_charged: first.json().credits_charged });
    expect(repeat.json().id).not.toBe(first.json().id);
    expect(repeat.json().teams).toEqual(first.json().teams);
    const served = await getProjectionJob(t.db.sql, repeat.json().receipt.job_id);
    expect(served).toMatchObject({ status: 'delivered', attempts: 0, seed: ran!.seed });
    const after = await t.graph.ledger.balance(other.orgId);
    expect(before.available - after.available).toBe(Math.round(first.json().credits_charged * 1000));
    expect(after.held).toBe(0);
    expect((await t.graph.ledger.checkBalanced(other.orgId)).balanced).toBe(true);
    const events = (await get(other.auth, '/v1/events?type=projection.succeeded')).json();
    expect(events.data.map((event: Json) => event.data.object.job_id)).toEqual([
      repeat.json().receipt.job_id,
    ]);
  });

  it('releases the hold of a job that fails and answers projection_failed', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const before = await t.graph.ledger.balance(orgId);
    failNext = true;
    const response = await post(auth, '/v1/projections', { competition_id: COMPETITION, seasons: 1500 });
    expect(response.statusCode, response.body).toBe(500);
    expect(response.json().error).toMatchObject({ code: 'projection_failed', credit_effect: 'not_charged' });
    const after = await t.graph.ledger.balance(orgId);
    expect(after).toMatchObject({ available: before.available, held: 0 });
    expect((await t.graph.ledger.checkBalanced(orgId)).balanced).toBe(true);
  });

  it('answers reservation_expired once the hold of an undelivered projection ended, and returns the credits', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const before = await t.graph.ledger.balance(orgId);
    const response = await post(auth, '/v1/projections', {
      competition_id: COMPETITION,
      seasons: 2500,
      wait_seconds: 0,
    });
    const job = response.json();
    await finishedJob(job.job_id);
    await t.graph.sweeper.sweep(new Date(NOW.getTime() + (HOLD_TTL_SECONDS + 1) * 1000));
    expect((await getProjectionJob(t.db.sql, job.job_id))?.status).toBe('expired');
    const late = await get(auth, job.result_url);
    expect(late.statusCode, late.body).toBe(409);
    expect(late.json().error.code).toBe('reservation_expired');
    expect(await t.graph.ledger.balance(orgId)).toMatchObject({ available: before.available, held: 0 });
  });
});

describe('the concurrent-jobs limit (docs/api.md §8)', () => {
  let t: TestContext;
  beforeAll(async () => {
    // No worker of either kind: the jobs stay open.
    t = await createFeedTestContext();
  });
  afterAll(async () => t.close());

  const post = (auth: Json, url: string, payload: Json) =>
    t.app.inject({ method: 'POST', url, headers: auth, payload });

  it('counts open projections and simulations together, whichever came first', async () => {
    const projectionFirst = await t.newOrg({ limits: { concurrent_simulations: 1 } });
    const projection = { competition_id: COMPETITION, seasons: 1000, wait_seconds: 0 };
    const simulation = { fixture_id: FX.upcoming, wait_seconds: 0 };
    expect((await post(projectionFirst.auth, '/v1/projections', projection)).statusCode).toBe(202);
    const refused = await post(projectionFirst.auth, '/v1/simulations', simulation);
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.json().error.code).toBe('concurrency_limited');

    const simulationFirst = await t.newOrg({ limits: { concurrent_simulations: 1 } });
    expect((await post(simulationFirst.auth, '/v1/simulations', simulation)).statusCode).toBe(202);
    const also = await post(simulationFirst.auth, '/v1/projections', projection);
    expect(also.statusCode, also.body).toBe(429);
    expect(also.json().error.code).toBe('concurrency_limited');
  });
});
