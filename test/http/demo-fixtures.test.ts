// GET /playground/demo-fixtures: where the demo is on, the playground lists the fixtures on sale for a
// test key, which the API lists none for (docs/api.md §4.2); where it is off (production), the route
// does not exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FX } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

describe('the demo fixtures of the playground', () => {
  let on: TestContext;
  let off: TestContext;
  beforeAll(async () => {
    on = await createFeedTestContext({ env: { MATCHSIM_DEMO: 'on' } });
    off = await createFeedTestContext({ env: { MATCHSIM_DEMO: 'off' } });
  });
  afterAll(async () => {
    await on.close();
    await off.close();
  });

  it('lists what a live key lists as on sale, without a key, only where the demo is on', async () => {
    const live = await on.newOrg({ plan: 'pro' });
    const listed = await on.app.inject({
      method: 'GET',
      url: '/v1/fixtures?status=fresh&limit=100',
      headers: live.auth,
    });
    const demo = await on.app.inject({ method: 'GET', url: '/playground/demo-fixtures' });
    expect(demo.statusCode).toBe(200);
    const ids = (body: { data: { fixture_id: number }[] }) => body.data.map((fixture) => fixture.fixture_id);
    expect(ids(demo.json())).toEqual(ids(listed.json()));
    expect(ids(demo.json())).toContain(FX.upcoming);
    expect((await off.app.inject({ method: 'GET', url: '/playground/demo-fixtures' })).statusCode).toBe(404);
  });
});
