// Runs fitted to the market and priced against offered odds, end to end over a real database and the CPU
// engine (docs/api.md §4.3, "Fitted to the market" and "Value against offered prices").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIT_TOLERANCE } from '../../src/engine/market-fit.js';
import { removeMargin } from '../../src/market/margin-removal.js';
import { FX } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

const market = { odds: { '1x2': [2.1, 3.4, 3.6] } };

describe('a run fitted to the market', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createFeedTestContext({ worker: true });
  });
  afterAll(async () => t.close());

  const post = (auth: Json, payload: Json, url = '/v1/simulations') =>
    t.app.inject({ method: 'POST', url, headers: auth, payload });

  it('reproduces the prices, states its calibration, prices offered odds and charges draws / 1000', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const offered_odds = { home_win: 2.3, btts_yes: 1.8, over_2_5: 2.05 };
    const response = await post(auth, { fixture_id: FX.upcoming, draws: 4000, market, offered_odds });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body.credits_charged).toBe(4);
    const { calibration, value, result } = body.simulation;
    const targets = removeMargin(market.odds['1x2'], 'shin').probabilities;
    expect(calibration).toMatchObject({ method: 'shin', fit: 'exact', odds: market.odds });
    expect([calibration.targets.home_win, calibration.targets.draw, calibration.targets.away_win]).toEqual(
      targets,
    );
    for (const key of ['home_win', 'draw', 'away_win'] as const) {
      expect(Math.abs(calibration.achieved[key] - calibration.targets[key])).toBeLessThan(FIT_TOLERANCE);
      // The run's draws estimate the fitted prices.
      expect(Math.abs(result[key] - calibration.achieved[key])).toBeLessThan(4 * Math.sqrt(0.25 / 4000));
    }
    expect(Object.keys(value)).toEqual(['home_win', 'over_2_5', 'btts_yes']);
    const p = result.home_win;
    expect(value.home_win).toEqual({
      offered_odds: 2.3,
      probability: p,
      fair_odds: 1 / p,
      edge: p * 2.3 - 1,
      edge_standard_error: 2.3 * Math.sqrt((p * (1 - p)) / 4000),
      kelly: p * 2.3 - 1 > 0 ? (p * 2.3 - 1) / (2.3 - 1) : 0,
    });
    expect(value.btts_yes.probability).toBe(body.simulation.markets.btts.yes);

    // The unfitted run is another result: neither calibration nor value, other prices.
    const plain = await post(auth, { fixture_id: FX.upcoming, draws: 4000 });
    expect(plain.statusCode, plain.body).toBe(200);
    expect(plain.json().simulation.calibration).toBeUndefined();
    expect(plain.json().simulation.value).toBeUndefined();
    expect(plain.json().simulation.result.home_win).not.toBe(p);
    // Other offered odds: the same draws (the seed follows the fit), another value section.
    const other = await post(auth, {
      fixture_id: FX.upcoming,
      draws: 4000,
      market,
      offered_odds: { draw: 3.5 },
    });
    expect(other.json().simulation.result).toEqual(result);
    expect(Object.keys(other.json().simulation.value)).toEqual(['draw']);
    const balance = await t.services.ledger.balance(orgId);
    expect(balance.held).toBe(0);
  });

  it('fits the balance alone with fit supremacy, and the balance and over 2.5 with a total', async () => {
    const { auth } = await t.newOrg({ plan: 'plus' });
    const supremacy = await post(auth, {
      fixture_id: FX.upcoming,
      draws: 1000,
      market: { ...market, fit: 'supremacy' },
    });
    expect(supremacy.statusCode, supremacy.body).toBe(200);
    expect(supremacy.json().simulation.calibration.fitted_to).toEqual([
      'home_win_minus_away_win',
      'expected_goals_total',
    ]);
    const total = await post(auth, {
      fixture_id: FX.upcoming,
      draws: 1000,
      market: { odds: { ...market.odds, 'total_2.5': [1.9, 1.95] }, margin_method: 'power' },
    });
    expect(total.statusCode, total.body).toBe(200);
    const calibration = total.json().simulation.calibration;
    expect(calibration.method).toBe('power');
    expect(calibration.fitted_to).toEqual(['home_win_minus_away_win', 'over_2_5']);
    expect(Math.abs(calibration.achieved.over_2_5 - calibration.targets.over_2_5)).toBeLessThan(
      FIT_TOLERANCE,
    );
  });

  it('refuses bad odds and out-of-reach markets with 400s naming the field, holding and charging nothing', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const cases: [Json, string, string][] = [
      [{ market: { odds: { '1x2': [1.0, 3.4, 3.6] } } }, 'parameter_invalid', 'market.odds.1x2.0'],
      [{ market: { odds: { '1x2': [3.1, 3.4, 3.6] } } }, 'parameter_invalid', 'market.odds.1x2'],
      [{ market: { odds: { '1x2': [1.2, 1.5, 1.6] } } }, 'parameter_invalid', 'market.odds.1x2'],
      [
        { market: { odds: { '1x2': [2.1, 3.4, 3.6], 'total_2.5': [1.9, 1.95] }, fit: 'supremacy' } },
        'parameter_invalid',
        'market.fit',
      ],
      [{ market: { odds: { '1x2': [1.98, 40, 1.98] } } }, 'market_unreachable', 'market.odds'],
      [
        { offered_odds: { home_win: 2.5, correct_score_9_9: 500 } },
        'parameter_invalid',
        'offered_odds.correct_score_9_9',
      ],
      [{ offered_odds: { draw: 0.9 } }, 'parameter_invalid', 'offered_odds.draw'],
    ];
    for (const [extra, code, param] of cases) {
      for (const url of ['/v1/simulations', '/v1/simulations/quote']) {
        const response = await post(auth, { fixture_id: FX.upcoming, ...extra }, url);
        expect(response.statusCode, response.body).toBe(400);
        const { error } = response.json();
        expect([error.code, error.param]).toEqual([code, param]);
        expect(error.credit_effect).toBe('not_charged');
      }
    }
    // `__proto__` is a key JSON.parse keeps, and one a record would leave out without a word: refused as
    // any unknown field, in a run and in a batch item. Sent as text, as a client's JSON carries it.
    const raw: [string, string, string][] = [
      [
        '/v1/simulations',
        `{"fixture_id": ${FX.upcoming}, "offered_odds": {"__proto__": 2.5}}`,
        'offered_odds.__proto__',
      ],
      [
        '/v1/simulations/quote',
        `{"fixture_id": ${FX.upcoming}, "offered_odds": {"draw": 3.5, "__proto__": {"draw": 9}}}`,
        'offered_odds.__proto__',
      ],
      [
        '/v1/simulations/batch',
        `{"fixtures": [{"fixture_id": ${FX.upcoming}, "offered_odds": {"__proto__": 2.5}}]}`,
        'fixtures.0.offered_odds.__proto__',
      ],
    ];
    for (const [url, body, param] of raw) {
      const response = await t.app.inject({
        method: 'POST',
        url,
        headers: { ...auth, 'content-type': 'application/json' },
        payload: body,
      });
      expect(response.statusCode, response.body).toBe(400);
      const { error } = response.json();
      expect([error.code, error.param]).toEqual(['parameter_invalid', param]);
    }
    const batch = await post(
      auth,
      { fixtures: [{ fixture_id: FX.upcoming, market: { odds: { '1x2': [1.98, 40, 1.98] } } }] },
      '/v1/simulations/batch',
    );
    expect(batch.statusCode, batch.body).toBe(400);
    expect(batch.json().error.recovery.items[0].error.code).toBe('market_unreachable');
    const balance = await t.services.ledger.balance(orgId);
    expect(balance.held).toBe(0);
    expect(balance.spentThisMonth).toBe(0);
  });

  it("leaves the fixture list's summary to the model's own runs", async () => {
    const { auth } = await t.newOrg({ plan: 'plus' });
    const summary = async () =>
      (await t.app.inject({ method: 'GET', url: '/v1/fixtures', headers: auth }))
        .json()
        .data.find((f: Json) => f.fixture_id === FX.upcoming).summary;
    const plain = await post(auth, { fixture_id: FX.upcoming, draws: 1700 });
    expect(plain.statusCode, plain.body).toBe(200);
    expect((await summary()).simulation_id).toBe(plain.json().id);
    const fitted = await post(auth, { fixture_id: FX.upcoming, draws: 1700, market });
    expect(fitted.statusCode, fitted.body).toBe(200);
    expect(fitted.json().id).not.toBe(plain.json().id);
    expect((await summary()).simulation_id).toBe(plain.json().id);
  });
});
