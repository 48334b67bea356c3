// The engine states behind the 503 codes of docs/api.md §7, as submissions see them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineHealth } from '../src/engine/runner.js';
import { engineGate } from '../src/wiring.js';
import { FX } from './fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from './helpers/app.js';

const engineIn = (health: EngineHealth) => ({
  estimateSeconds: (draws: number) => draws * 1e-6,
  health: () => health,
});

describe('engine gate', () => {
  it('answers engine_cold_start while the GPU engine starts', () => {
    const gate = engineGate('auto', engineIn({ state: 'starting', gpu: { state: 'starting' } }));
    expect(() => gate.assertAvailable()).toThrow(expect.objectContaining({ code: 'engine_cold_start' }));
  });

  it('answers engine_unavailable when ENGINE=gpu has no adapter, and lets auto fall back to the CPU', () => {
    const health = { state: 'cpu_fallback', gpu: { state: 'unavailable' } };
    expect(() => engineGate('gpu', engineIn(health)).assertAvailable()).toThrow(
      expect.objectContaining({ code: 'engine_unavailable' }),
    );
    expect(() => engineGate('auto', engineIn(health)).assertAvailable()).not.toThrow();
  });

  it('estimates engine seconds from the local engine, or the CPU rate in an API-only process', () => {
    expect(engineGate('auto', engineIn({ state: 'ready' })).estimateSeconds(1_000_000)).toBeCloseTo(1, 9);
    expect(engineGate('auto', null).estimateSeconds(1_000_000)).toBeCloseTo(1, 9);
  });
});

describe('queue bound', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createFeedTestContext({ queueBound: 1 });
  });
  afterAll(async () => t.close());

  it('answers engine_overloaded past the bound, holding nothing', async () => {
    const { auth, orgId } = await t.newOrg();
    const post = (draws: number) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/simulations',
        headers: auth,
        payload: { fixture_id: FX.upcoming, draws, wait_seconds: 0 },
      });
    expect((await post(1000)).statusCode).toBe(202);
    const overloaded = await post(1001);
    expect(overloaded.statusCode).toBe(503);
    expect(overloaded.json().error).toMatchObject({ code: 'engine_overloaded', retry: { retryable: true } });
    expect(Number(overloaded.headers['retry-after'])).toBeGreaterThan(0);
    expect((await t.services.ledger.balance(orgId)).held).toBe(1000);
  });
});
