// POST /admin/v1/simulations: `matchsim simulate` through the admin API, for a CLI beside a service that
// holds the embedded database (src/cli/operations.ts). The run is the operator's (src/operations/
// operator-simulation.ts) whichever way it is reached: the same document as on the database itself, with
// a request's market and in-play checks and their error codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIT_TOLERANCE } from '../../src/engine/market-fit.js';
import { removeMargin } from '../../src/market/margin-removal.js';
import { operatorSimulation } from '../../src/operations/operator-simulation.js';
import { FX } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

let t: TestContext;
beforeAll(async () => {
  t = await createFeedTestContext();
});
afterAll(async () => t.close());

const simulate = (payload: Record<string, unknown>, token = t.adminToken) =>
  t.app.inject({
    method: 'POST',
    url: '/admin/v1/simulations',
    headers: { authorization: `Bearer ${token}` },
    payload,
  });

/** A document without its run time, which differs from run to run. */
const withoutTiming = ({ timing, ...document }: Record<string, unknown>) => document;

describe('POST /admin/v1/simulations', () => {
  it('answers the document the operator’s run gives on the database itself, seeded the same', async () => {
    const response = await simulate({ fixture_id: FX.upcoming, draws: 1000 });
    expect(response.statusCode, response.body).toBe(200);
    const document = response.json();
    expect(document).toMatchObject({ schema: 'vendor.simulation.v1', fixture: { fixture_id: FX.upcoming } });
    expect(document.timing).toMatchObject({ engine: 'cpu' });
    const direct = await operatorSimulation(t.db.sql, { fixtureId: FX.upcoming, draws: 1000 });
    expect(withoutTiming(document)).toEqual(withoutTiming(JSON.parse(JSON.stringify(direct))));
  });

  it('fits to odds and runs from an in-play state', async () => {
    const fitted = await simulate({
      fixture_id: FX.upcoming,
      draws: 1000,
      market: { odds: { '1x2': [2.1, 3.4, 3.6], 'total_2.5': [1.9, 1.95] } },
    });
    expect(fitted.statusCode, fitted.body).toBe(200);
    const { calibration } = fitted.json();
    const over = removeMargin([1.9, 1.95], 'shin').probabilities[0]!;
    expect(Math.abs(calibration.achieved.over_2_5 - over)).toBeLessThan(FIT_TOLERANCE);
    const inPlay = await simulate({
      fixture_id: FX.upcoming,
      draws: 1000,
      from_state: { minute: '67', score: { home: 0, away: 1 }, red_cards: { home: 0, away: 1 } },
    });
    expect(inPlay.statusCode, inPlay.body).toBe(200);
    expect(inPlay.json().state).toMatchObject({ minute: '67', score: { home: 0, away: 1 } });
  });

  it('refuses what a request would be refused for, with its code and field', async () => {
    const missing = await simulate({ fixture_id: 987_654 });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toMatchObject({ code: 'fixture_not_found', param: 'fixture_id' });
    const unreachable = await simulate({
      fixture_id: FX.upcoming,
      market: { odds: { '1x2': [1.98, 40, 1.98] } },
    });
    expect(unreachable.statusCode).toBe(400);
    expect(unreachable.json().error).toMatchObject({ code: 'market_unreachable', param: 'market.odds' });
    const outside = await simulate({
      fixture_id: FX.upcoming,
      from_state: { minute: '95', score: { home: 0, away: 0 } },
    });
    expect(outside.statusCode).toBe(400);
    expect(outside.json().error.param).toBe('from_state.minute');
    const stray = await simulate({ fixture_id: FX.upcoming, draws: 10 });
    expect(stray.statusCode).toBe(400);
    expect(stray.json().error.code).toBe('parameter_invalid');
    const wrongToken = await simulate({ fixture_id: FX.upcoming }, 'wrong-token-wrong-token');
    expect(wrongToken.statusCode).toBe(401);
  });
});
