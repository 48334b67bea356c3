// What a path's quote costs (docs/api.md §4.14): it is free, so it may do only what its price needs. A
// path's minutes share their fixture, lineups and market fit, so the quote reads the fixture and fits
// the market as often as a plain quote of one run does, however many events the path holds; the events
// and the states after them are checked without another run made ready.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/accounts/caller.js';
import { marketFitOfInputs } from '../../src/engine/compile.js';
import type { PathEvent } from '../../src/engine/compile-path.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { quotePath } from '../../src/simulations/path-request.js';
import { quote } from '../../src/simulations/quote.js';
import type { SimulationDeps } from '../../src/simulations/types.js';
import { FX, NOW } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

describe("a path's quote", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createFeedTestContext();
  });
  afterAll(async () => t.close());

  /** The quote's parts, the real ones, each counting its calls. */
  function countingDeps() {
    const calls = { fixtureReads: 0, marketFits: 0 };
    const deps = {
      sql: t.db.sql,
      usage: t.graph.usage,
      clock: () => NOW,
      fixtures: {
        fixture: async (fixtureId: number) => {
          calls.fixtureReads++;
          return (await t.services.fixtureCache()).fixture(fixtureId);
        },
        freshnessFacts: async (fixtureIds: readonly number[]) =>
          (await t.services.fixtureCache()).freshnessFacts(fixtureIds),
      },
      engine: {
        fitMarket: async (match: Parameters<typeof marketFitOfInputs>[0]) => {
          calls.marketFits++;
          return marketFitOfInputs(match, defaultModelParams);
        },
      },
    } as unknown as SimulationDeps;
    return { deps, calls };
  }

  it('reads the fixture and fits the market once, as a plain quote does, with 60 events', async () => {
    const { orgId } = await t.newOrg({ plan: 'plus' });
    const caller = { org: { id: orgId }, mode: 'live', livemode: true } as Caller;
    const market = { odds: { '1x2': [2.1, 3.4, 3.6] } };
    const plain = countingDeps();
    await quote(plain.deps, caller, { fixture_id: FX.announced, market });
    expect(plain.calls).toEqual({ fixtureReads: 1, marketFits: 1 });

    // 60 events over the first 60 minutes: goals for either side and, on the home side's announced XI,
    // a yellow card for each of five players.
    const booked = [304, 305, 306, 307, 312];
    const events = Array.from(
      { length: 60 },
      (_, i): PathEvent =>
        i % 12 === 5
          ? {
              minute: String(i + 1),
              type: 'yellow_card',
              team: 'home',
              player_id: booked[Math.floor(i / 12)]!,
            }
          : { minute: String(i + 1), type: 'goal', team: i % 2 === 0 ? 'away' : 'home' },
    );
    const path = countingDeps();
    const priced = await quotePath(path.deps, caller, {
      fixture_id: FX.announced,
      market,
      events,
      draws: 1000,
    });
    expect(priced).toMatchObject({ fixtureId: FX.announced, steps: 100, drawsPerStep: 1000 });
    expect(path.calls).toEqual(plain.calls);
  });
});
