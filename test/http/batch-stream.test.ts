// A large batch through its results stream (docs/api.md §2.6, §4.5): every item delivered once and charged
// exactly once, its documents free and the same on a second read (compressed for a client that accepts
// it, §1), a delivery read again by its id.
// BATCH_STREAM_ITEMS items: 1,000 in the slow tier (`npm run test:slow`), 100 in the fast tier (`npm test`,
// vitest.config.ts); the assertions are the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANY_FIXTURES_FROM } from '../fixtures/small-feed.js';
import type { TestContext } from '../helpers/app.js';
import { get, type Json, lines, money, post, ROOMY, setup } from '../helpers/batch-requests.js';
import { decodedText } from '../helpers/wire-contract.js';

const ITEMS = Number(process.env.BATCH_STREAM_ITEMS ?? 1000);

describe(`a ${ITEMS.toLocaleString('en')}-item batch collected through its results stream`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ worker: true, fixtures: ITEMS });
  });
  afterAll(async () => t.close());

  it('delivers every item once, charges each exactly, and gives the same documents free on a second read', async () => {
    const { auth, orgId } = await t.newOrg({ limits: ROOMY });
    const fixtures = Array.from({ length: ITEMS }, (_, i) => ({
      fixture_id: MANY_FIXTURES_FROM + i,
      custom_id: `item-${i}`,
    }));
    const submitted = await post(t, '/v1/simulations/batch', auth, {
      fixtures,
      draws: 100,
      metadata: { run: 'nightly' },
    });
    expect(submitted.statusCode, submitted.body.slice(0, 300)).toBe(202);
    const batch = submitted.json();
    expect(submitted.headers.location).toBe(`/v1/simulations/batch/${batch.batch_id}`);
    expect(Number(submitted.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(batch.counts.total).toBe(ITEMS);
    expect(batch.metadata).toEqual({ run: 'nightly' });

    // Polled through the list of batches: the batch without its items.
    let done: Json = {};
    for (let i = 0; i < 1200 && done.status !== 'completed'; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 200));
      done = (await get(t, '/v1/simulations/batches?limit=1', auth)).json().data[0];
    }
    expect(done.batch_id).toBe(batch.batch_id);
    expect(done.counts).toMatchObject({ total: ITEMS, succeeded: ITEMS, queued: 0, running: 0 });
    expect(done.completed_at).not.toBeNull();
    // Finished, none delivered yet: nothing charged.
    const undelivered = (await get(t, `/v1/simulations/batch/${batch.batch_id}`, auth)).json();
    expect(undelivered.items.map((item: Json) => item.credits_charged)).toEqual(Array(ITEMS).fill(0));

    const first = await get(t, batch.results_url, auth);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const read = lines(first.body);
    expect(read).toHaveLength(ITEMS);
    expect(read.map((line) => line.custom_id)).toEqual(fixtures.map((f) => f.custom_id));
    for (const line of read) {
      expect(line.status).toBe('delivered');
      expect(line.simulation.credits_charged).toBe(0.1);
      expect(line.simulation.custom_id).toBe(line.custom_id);
      expect(line.simulation.metadata).toEqual({ run: 'nightly' });
    }
    const balance = await t.services.ledger.balance(orgId);
    expect(balance).toMatchObject({ spentThisMonth: ITEMS * 100, held: 0 });
    expect((await t.services.ledger.checkBalanced(orgId)).balanced).toBe(true);
    const { charges } = await money(t, orgId);
    expect(charges).toHaveLength(ITEMS);
    expect(charges.every((charge) => charge.amount === 100)).toBe(true);

    // Read again by a client that accepts compression (docs/api.md §1): the stream comes compressed,
    // gzip (its lines deflated several at a time) wherever gzip is accepted, brotli where only it is.
    for (const [accepted, sent] of [
      ['gzip', 'gzip'],
      ['br, gzip', 'gzip'],
      ['br', 'br'],
    ] as const) {
      const compressed = await t.app.inject({
        method: 'GET',
        url: batch.results_url,
        headers: { ...auth, 'accept-encoding': accepted },
      });
      expect(compressed.statusCode).toBe(200);
      expect(compressed.headers['content-encoding']).toBe(sent);
      expect(compressed.rawPayload.length).toBeLessThan(first.rawPayload.length / 3);
      const again = lines(decodedText(compressed));
      expect(again).toHaveLength(ITEMS);
      again.forEach((line, i) => {
        expect(line.simulation.credits_charged).toBe(0);
        expect(line.simulation.id).toBe(read[i]!.simulation.id);
        expect(JSON.stringify(line.simulation.simulation)).toBe(
          JSON.stringify(read[i]!.simulation.simulation),
        );
      });
    }
    expect((await t.services.ledger.balance(orgId)).spentThisMonth).toBe(ITEMS * 100);
    expect((await t.services.ledger.checkBalanced(orgId)).balanced).toBe(true);
    const status = (await get(t, `/v1/simulations/batch/${batch.batch_id}`, auth)).json();
    expect(status).toMatchObject({ status: 'completed', counts: { delivered: ITEMS, succeeded: 0 } });
    // Each delivered item shows what its delivery charged (the first, not the free second).
    for (const item of status.items) expect(item.credits_charged).toBe(0.1);

    // A delivery read again by its id: free, the same document.
    const one = await get(t, `/v1/simulations/${read[7]!.simulation.id}`, auth);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ id: read[7]!.simulation.id, credits_charged: 0, custom_id: 'item-7' });
    expect(JSON.stringify(one.json().simulation)).toBe(JSON.stringify(read[7]!.simulation.simulation));
    // Minutes on a loaded 2-core machine for 1,000 items (1,000 jobs through the CPU worker, 1,000
    // settlements); no figure is asserted, only the outcome.
  }, 900_000);
});
