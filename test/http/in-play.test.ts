// Runs from an in-play state end to end over a real database and the CPU engine (docs/api.md §4.3, "In
// play"): the rest of the match from the state, priced draws / 1000, keyed by the state, and impossible
// states refused with 400s naming the field before anything is held.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FX } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

// FX.announced: team 3 at home, team 4 away, both XIs announced (test/fixtures/small-feed.ts side()).
const xi = (team: number) => [1, 4, 5, 6, 7, 12, 13, 15, 20, 21, 22].map((n) => team * 100 + n);
const bench = (team: number) => [2, 8, 14, 23].map((n) => team * 100 + n);
const at67 = {
  minute: '67',
  score: { home: 1, away: 0 },
  sent_off: { home: [], away: [xi(4)[3]!] },
  substitutions: { home: [{ off: xi(3)[10]!, on: bench(3)[3]! }], away: [] },
  booked: { home: [xi(3)[2]!], away: [] },
};

describe('a run from an in-play state', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createFeedTestContext({ worker: true });
  });
  afterAll(async () => t.close());

  const post = (auth: Json, payload: Json, url = '/v1/simulations') =>
    t.app.inject({ method: 'POST', url, headers: auth, payload });

  it('simulates the rest of the match from the state, echoes it, charges draws / 1000 and keys its result by the state', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const quote = await post(
      auth,
      { fixture_id: FX.announced, draws: 3000, from_state: at67 },
      '/v1/simulations/quote',
    );
    expect(quote.statusCode, quote.body).toBe(200);
    const response = await post(auth, { fixture_id: FX.announced, draws: 3000, from_state: at67 });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body.credits_charged).toBe(3);
    const doc = body.simulation;
    expect(doc.state).toMatchObject({
      minute: '67',
      step: 76,
      score: { home: 1, away: 0 },
      red_cards: { home: 0, away: 1 },
    });
    expect(doc.timeline.minute_label[0]).toBe('67');
    expect(doc.goals.score_grid.cells[0].every((cell: number) => cell === 0)).toBe(true);
    expect(doc.result.home_win).toBeGreaterThan(0.7);

    // The same state again: the same result. Another state: another seed and result.
    const again = await post(auth, { fixture_id: FX.announced, draws: 3000, from_state: at67 });
    expect(again.json().simulation.result).toEqual(doc.result);
    const level = await post(auth, {
      fixture_id: FX.announced,
      draws: 3000,
      from_state: { ...at67, score: { home: 1, away: 1 } },
    });
    expect(level.statusCode, level.body).toBe(200);
    expect(level.json().simulation.basis.seed).not.toBe(doc.basis.seed);
    expect(level.json().simulation.result.draw).toBeGreaterThan(doc.result.draw);
    // Before a match: no state section, all 110 steps.
    const before = await post(auth, { fixture_id: FX.announced, draws: 1000 });
    expect(before.json().simulation.state).toBeUndefined();
    expect(before.json().simulation.timeline.steps).toBe(110);
    const balance = await t.services.ledger.balance(orgId);
    expect(balance.held).toBe(0);
  });

  it("leaves the fixture list's summary to pre-match runs", async () => {
    const { auth } = await t.newOrg({ plan: 'plus' });
    const summary = async () =>
      (await t.app.inject({ method: 'GET', url: '/v1/fixtures', headers: auth }))
        .json()
        .data.find((f: Json) => f.fixture_id === FX.upcoming).summary;
    const before = await post(auth, { fixture_id: FX.upcoming, draws: 1500 });
    expect(before.statusCode, before.body).toBe(200);
    expect((await summary()).simulation_id).toBe(before.json().id);
    for (const wait of [25, 0]) {
      // Delivered at once, and through the result path.
      const inPlay = await post(auth, {
        fixture_id: FX.upcoming,
        draws: wait === 25 ? 1500 : 1600,
        wait_seconds: wait,
        from_state: { minute: '80', score: { home: 3, away: 0 } },
      });
      expect([200, 202]).toContain(inPlay.statusCode);
      if (inPlay.statusCode === 202) {
        let delivered = inPlay;
        for (let i = 0; i < 200 && delivered.statusCode !== 200; i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          delivered = await t.app.inject({ method: 'GET', url: inPlay.json().result_url, headers: auth });
        }
        expect(delivered.statusCode, delivered.body).toBe(200);
      }
      expect((await summary()).simulation_id).toBe(before.json().id);
    }
  });

  it('runs from a state after kick-off, a finished fixture included, whose final score it cannot pass', async () => {
    const { auth } = await t.newOrg({ plan: 'plus' });
    const ok = await post(auth, {
      fixture_id: FX.finished,
      draws: 1000,
      from_state: { minute: '80', score: { home: 1, away: 1 } },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    // Without a state, a fixture past kick-off is not on sale.
    expect((await post(auth, { fixture_id: FX.finished, draws: 1000 })).statusCode).toBe(400);
    const over = await post(auth, {
      fixture_id: FX.finished,
      from_state: { minute: '80', score: { home: 1, away: 2 } },
    });
    expect(over.statusCode, over.body).toBe(400);
    expect(over.json().error.param).toBe('from_state.score.away');
  });

  it('refuses impossible states with 400s naming the field, holding and charging nothing', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const state = (extra: Json) => ({ minute: '60', score: { home: 0, away: 0 }, ...extra });
    const cases: [Json, number, string][] = [
      [state({ minute: '91' }), FX.announced, 'from_state.minute'],
      [state({ minute: '45+11' }), FX.announced, 'from_state.minute'],
      [
        state({
          substitutions: {
            home: [
              { off: xi(3)[10], on: bench(3)[3] },
              { off: xi(3)[9], on: bench(3)[3] },
            ],
            away: [],
          },
        }),
        FX.announced,
        'from_state.substitutions.home.1.on',
      ],
      [state({ sent_off: { home: [], away: [bench(4)[1]] } }), FX.announced, 'from_state.sent_off.away.0'],
      [state({ red_cards: { home: 5, away: 0 } }), FX.announced, 'from_state.red_cards.home'],
      [
        state({
          substitutions: {
            home: xi(3)
              .slice(5)
              .map((off, i) => ({ off, on: [bench(3)[1], bench(3)[2], bench(3)[3], 316, 317, 318][i] })),
            away: [],
          },
        }),
        FX.announced,
        'from_state.substitutions.home',
      ],
      [state({ booked: { home: [101], away: [] } }), FX.upcoming, 'from_state.booked.home'],
      // A minute in other words than the timeline's would be a second seed and cached result of one state.
      [state({ minute: '45+01' }), FX.announced, 'from_state.minute'],
      [state({ minute: '07' }), FX.announced, 'from_state.minute'],
      // Player ids are int4 ids, as everywhere in a body.
      [state({ sent_off: { home: [], away: [0] } }), FX.announced, 'from_state.sent_off.away.0'],
      [state({ booked: { home: [2_147_483_648], away: [] } }), FX.announced, 'from_state.booked.home.0'],
      [
        state({ substitutions: { home: [{ off: xi(3)[10], on: -1 }], away: [] } }),
        FX.announced,
        'from_state.substitutions.home.0.on',
      ],
      // On a yellow card twice: that is a red card (sent_off), and a third card is no card at all.
      [state({ booked: { home: [xi(3)[2], xi(3)[2]], away: [] } }), FX.announced, 'from_state.booked.home.1'],
      [
        state({ sent_off: { home: [xi(3)[2], xi(3)[2]], away: [] }, red_cards: { home: 2, away: 0 } }),
        FX.announced,
        'from_state.sent_off.home.1',
      ],
    ];
    for (const [from_state, fixture_id, param] of cases) {
      for (const url of ['/v1/simulations', '/v1/simulations/quote']) {
        const response = await post(auth, { fixture_id, from_state }, url);
        expect(response.statusCode, response.body).toBe(400);
        const { error } = response.json();
        expect([error.code, error.param]).toEqual(['parameter_invalid', param]);
        expect(error.credit_effect).toBe('not_charged');
      }
    }
    const batch = await post(
      auth,
      { fixtures: [{ fixture_id: FX.announced, from_state: state({ minute: '0' }) }] },
      '/v1/simulations/batch',
    );
    expect(batch.statusCode, batch.body).toBe(400);
    expect(batch.json().error.recovery.items[0].error.param).toBe('fixtures.0.from_state.minute');
    const balance = await t.services.ledger.balance(orgId);
    expect(balance.held).toBe(0);
    expect(balance.spentThisMonth).toBe(0);
  });

  it('queues a win-probability path as a batch of in-play runs, one a minute, priced by its draws and quoted first', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const events = [
      { minute: '60', type: 'red_card', team: 'away', player_id: xi(4)[3] },
      { minute: '30', type: 'goal', team: 'home', player_id: xi(3)[10] },
    ];
    const body = { fixture_id: FX.announced, events, through: '70', draws: 200 };
    const quote = await post(auth, body, '/v1/simulations/path/quote');
    expect(quote.statusCode, quote.body).toBe(200);
    // "1" to "45", "45+1" to "45+10", "46" to "70": 80 minutes.
    expect(quote.json()).toMatchObject({
      object: 'path_quote',
      steps: 80,
      draws_per_step: 200,
      price: { draws: 16_000, credits: '16.000' },
    });
    const submitted = await post(auth, body, '/v1/simulations/path');
    expect(submitted.statusCode, submitted.body.slice(0, 300)).toBe(202);
    const batch = submitted.json();
    expect(batch.counts.total).toBe(80);
    let done: Json = {};
    for (let i = 0; i < 600 && done.status !== 'completed'; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      done = (
        await t.app.inject({ method: 'GET', url: `/v1/simulations/batch/${batch.batch_id}`, headers: auth })
      ).json();
    }
    expect(done.status).toBe('completed');
    const read = await t.app.inject({
      method: 'GET',
      url: `${batch.results_url}?include=result,state`,
      headers: auth,
    });
    expect(read.statusCode).toBe(200);
    const path = read.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(path.map((line: Json) => line.custom_id).slice(0, 3)).toEqual(['1', '2', '3']);
    expect(path.at(-1).custom_id).toBe('70');
    const at = (minute: string) => path.find((line: Json) => line.custom_id === minute).simulation.simulation;
    expect(at('30').state.score).toEqual({ home: 0, away: 0 });
    expect(at('31').state.score).toEqual({ home: 1, away: 0 });
    expect(at('61').state.red_cards).toEqual({ home: 0, away: 1 });
    expect(at('31').result.home_win).toBeGreaterThan(at('30').result.home_win);
    expect(at('61').result.home_win).toBeGreaterThan(at('60').result.home_win);
    const balance = await t.services.ledger.balance(orgId);
    expect(balance).toMatchObject({ spentThisMonth: 16_000, held: 0 });
  });

  it('refuses a path whose events cannot be placed or make an impossible state, holding nothing', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const cases: [Json[], string][] = [
      [[{ minute: '46+1', type: 'goal', team: 'home' }], 'events.0.minute'],
      [[{ minute: '50', type: 'substitution', team: 'home', player_id: bench(3)[3] }], 'events.0'],
      [
        [
          {
            minute: '50',
            type: 'substitution',
            team: 'home',
            player_id: bench(3)[3],
            player_off_id: xi(3)[10],
          },
          {
            minute: '55',
            type: 'substitution',
            team: 'home',
            player_id: bench(3)[3],
            player_off_id: xi(3)[9],
          },
        ],
        'events.1',
      ],
    ];
    for (const [events, param] of cases) {
      for (const url of ['/v1/simulations/path', '/v1/simulations/path/quote']) {
        const response = await post(auth, { fixture_id: FX.announced, events }, url);
        expect(response.statusCode, response.body).toBe(400);
        expect(response.json().error.param).toBe(param);
      }
    }
    const balance = await t.services.ledger.balance(orgId);
    expect(balance).toMatchObject({ spentThisMonth: 0, held: 0 });
  });

  it('refuses each event that cannot have happened, naming it and saying why in its own terms, holding and charging nothing', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const home = (minute: string, type: string, player_id?: number, extra: Json = {}) => ({
      minute,
      type,
      team: 'home',
      ...(player_id === undefined ? {} : { player_id }),
      ...extra,
    });
    const sentOff = xi(3)[3]!;
    const booked = xi(3)[2]!;
    const cameOn = bench(3)[3]!;
    const wentOff = xi(3)[10]!;
    const cases: [string, Json, string, RegExp][] = [
      [
        'a yellow card for a player already sent off',
        { events: [home('60', 'red_card', sentOff), home('70', 'yellow_card', sentOff)] },
        'events.1',
        /player \d+ was sent off at 60 \(events\.0\)/,
      ],
      [
        'a red card for a player already sent off',
        { events: [home('70', 'red_card', sentOff), home('60', 'red_card', sentOff)] },
        'events.0',
        /was sent off at 60 \(events\.1\)/,
      ],
      [
        'a third yellow card',
        {
          events: [
            home('20', 'yellow_card', booked),
            home('40', 'yellow_card', booked),
            home('80', 'yellow_card', booked),
          ],
        },
        'events.2',
        /a third yellow card for player \d+, sent off at his second \(events\.1\)/,
      ],
      ['a goal by a bench player', { events: [home('30', 'goal', cameOn)] }, 'events.0', /on the bench/],
      [
        'a yellow card for a bench player',
        { events: [home('30', 'yellow_card', cameOn)] },
        'events.0',
        /on the bench/,
      ],
      [
        'a red card for a bench player',
        { events: [home('30', 'red_card', cameOn)] },
        'events.0',
        /on the bench/,
      ],
      [
        'a goal by a player substituted before it',
        {
          events: [
            home('50', 'substitution', cameOn, { player_off_id: wentOff }),
            home('55', 'goal', wentOff),
          ],
        },
        'events.1',
        /was substituted at 50 \(events\.0\)/,
      ],
      [
        'a goal by a player of the other side',
        { events: [home('30', 'goal', xi(4)[10])] },
        'events.0',
        /not in the home squad/,
      ],
      [
        'an event after `through`',
        { events: [home('30', 'goal'), home('75', 'goal')], through: '70' },
        'events.1',
        /after `through` \(70\)/,
      ],
      ['a player id below 1', { events: [home('30', 'goal', 0)] }, 'events.0.player_id', /./],
      [
        'a player id above int4',
        { events: [home('30', 'substitution', cameOn, { player_off_id: 2_147_483_648 })] },
        'events.0.player_off_id',
        /./,
      ],
      ['a minute in other words', { events: [home('45+01', 'goal')] }, 'events.0.minute', /./],
      ['`through` in other words', { events: [], through: '070' }, 'through', /./],
    ];
    for (const [what, body, param, message] of cases) {
      for (const url of ['/v1/simulations/path', '/v1/simulations/path/quote']) {
        const response = await post(auth, { fixture_id: FX.announced, ...body }, url);
        expect(response.statusCode, `${what}: ${response.body}`).toBe(400);
        const { error } = response.json();
        expect([error.code, error.param], what).toEqual(['parameter_invalid', param]);
        expect(error.message, what).toMatch(message);
        expect(error.message, what).not.toContain('from_state');
        expect(error.credit_effect).toBe('not_charged');
      }
    }
    // The same players where the events allow them: a goal by the substitute once he came on, a yellow
    // card each for two players, a red card after one yellow.
    const possible = await post(
      auth,
      {
        fixture_id: FX.announced,
        events: [
          home('50', 'substitution', cameOn, { player_off_id: wentOff }),
          home('55', 'goal', cameOn),
          home('20', 'yellow_card', booked),
          home('60', 'yellow_card', sentOff),
          home('65', 'red_card', sentOff),
        ],
      },
      '/v1/simulations/path/quote',
    );
    expect(possible.statusCode, possible.body).toBe(200);
    const balance = await t.services.ledger.balance(orgId);
    expect(balance).toMatchObject({ spentThisMonth: 0, held: 0 });
  });

  it("names the event on a finished fixture, in the event's terms, and its goals within the final score", async () => {
    const { auth } = await t.newOrg({ plan: 'plus' });
    // FX.finished: team 2 at home, team 1 away, finished 2-1, predicted lineups; custom XIs name players.
    const lineups = {
      home: { source: 'custom', xi: xi(2), bench: bench(2) },
      away: { source: 'custom', xi: xi(1), bench: bench(1) },
    };
    const away = (minute: string, type: string, player_id: number) => ({
      minute,
      type,
      team: 'away',
      player_id,
    });
    const twice = await post(
      auth,
      {
        fixture_id: FX.finished,
        lineups,
        events: [away('30', 'red_card', xi(1)[3]!), away('60', 'red_card', xi(1)[3]!)],
      },
      '/v1/simulations/path/quote',
    );
    expect(twice.statusCode, twice.body).toBe(400);
    expect(twice.json().error.param).toBe('events.1');
    expect(twice.json().error.message).toMatch(
      /^`events\.1` \(red_card at 60\): player \d+ was sent off at 30/,
    );
    expect(twice.json().error.message).not.toContain('from_state');
    const goals = ['20', '40', '60'].map((minute) => away(minute, 'goal', xi(1)[10]!));
    const tooMany = await post(
      auth,
      { fixture_id: FX.finished, lineups, events: goals },
      '/v1/simulations/path/quote',
    );
    expect(tooMany.statusCode, tooMany.body).toBe(400);
    expect(tooMany.json().error.param).toBe('events.1');
    expect(tooMany.json().error.message).toContain('finished 2-1');
    const one = await post(
      auth,
      { fixture_id: FX.finished, lineups, events: goals.slice(0, 1) },
      '/v1/simulations/path/quote',
    );
    expect(one.statusCode, one.body).toBe(200);
  });
});
