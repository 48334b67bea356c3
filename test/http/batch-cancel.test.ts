// A batch's cancel cancels (issue 54; docs/api.md §4.10, docs/decisions.md §6 "Claims" and "Cancel"): a
// batch of 12 fixtures of large runs, all claimed by its worker at once as a worker with room for them
// does, cancelled as soon as the worker holds them, leaves at most the items the engine runs at a time
// (POOL_RUNS_AT_ONCE: runs over the CPU pool) to finish and be charged. Every other item, the ones the
// worker held but had not started included, is cancelled: its hold released in the ledger, nothing
// charged, the batch's completion written as for queued items.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POOL_RUNS_AT_ONCE } from '../../src/engine/start-gate.js';
import { MANY_FIXTURES_FROM, NOW, withManyFixtures } from '../fixtures/small-feed.js';
import { createTestContext, type TestContext } from '../helpers/app.js';
import { get, type Json, lines, money, post, ROOMY, untilBatch } from '../helpers/batch-requests.js';

const ITEMS = 12;
// The largest run a job may ask for: each of the two the engine begins takes it long enough (about a
// second of a core) that the cancel, sent as soon as the worker is seen holding the items, comes first.
const DRAWS = 1_000_000;

describe('cancelling a batch of large runs that its worker holds', () => {
  let t: TestContext;
  beforeAll(async () => {
    // The engine on threads of its own (the event loop stays free for the cancel), and a worker with
    // room for the whole batch, in jobs and in draws: it claims all twelve at once.
    t = await createTestContext({
      worker: true,
      engineThreads: 2,
      workerOptions: { concurrency: 16, claimDraws: () => ITEMS * DRAWS },
    });
    t.setNow(NOW);
    await t.loadFeed(withManyFixtures(ITEMS), { clock: () => NOW });
  });
  afterAll(async () => t.close());

  it('charges at most the items the engine runs at a time and releases every other hold', async () => {
    const { auth, orgId } = await t.newOrg({ limits: ROOMY });
    await t.operator.topUp(orgId, (ITEMS * DRAWS) / 1000);
    const fixtures = Array.from({ length: ITEMS }, (_, i) => ({ fixture_id: MANY_FIXTURES_FROM + i }));
    const submitted = await post(t, '/v1/simulations/batch', auth, { fixtures, draws: DRAWS });
    expect(submitted.statusCode, submitted.body.slice(0, 300)).toBe(202);
    const batch = submitted.json();

    // The worker's one claim took every item: each is `running` from then on, started by the engine or not.
    await untilBatch(t, batch.batch_id, auth, (b) => b.counts.running > 0);
    const cancel = await post(t, `/v1/simulations/batch/${batch.batch_id}/cancel`, auth);
    expect(cancel.statusCode, cancel.body.slice(0, 300)).toBe(200);

    const ended = await untilBatch(t, batch.batch_id, auth, (b) => b.status === 'cancelled');
    const finished = ended.counts.succeeded + ended.counts.failed;
    expect(finished).toBeLessThanOrEqual(POOL_RUNS_AT_ONCE);
    expect(ended.counts.cancelled).toBe(ITEMS - finished);
    // Items the worker had claimed (an attempt counted) were cancelled too, not only queued ones.
    const [claimed] = await t.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM jobs
      WHERE batch_id = ${batch.batch_id} AND status = 'cancelled' AND attempts > 0`;
    expect(claimed!.n).toBeGreaterThan(0);
    // Those that finished were marked started by the worker before the engine began them.
    const [started] = await t.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM jobs WHERE batch_id = ${batch.batch_id} AND run_started_at IS NOT NULL`;
    expect(started!.n).toBe(finished);

    // Collect what finished: the delivered items are the only ones charged.
    expect(lines((await get(t, batch.results_url, auth)).body)).toHaveLength(ITEMS);
    const final = (await get(t, `/v1/simulations/batch/${batch.batch_id}`, auth)).json();
    const delivered = final.items.filter((item: Json) => item.status === 'delivered');
    expect(delivered.length).toBeLessThanOrEqual(POOL_RUNS_AT_ONCE);
    const { holds, charges } = await money(t, orgId);
    const releases = await t.db.sql<{ holdId: string; amount: number }[]>`
      SELECT hold_id, amount FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'release'`;
    const released = new Map(releases.map((row) => [row.holdId, Number(row.amount)]));
    const charged = new Set(charges.map((charge) => charge.holdId));
    for (const item of final.items) {
      if (item.status === 'delivered') {
        expect(holds.get(item.reservation_id)).toBe('settled');
        expect(charged.has(item.reservation_id)).toBe(true);
        expect(released.has(item.reservation_id)).toBe(false);
      } else {
        expect(item.status).toBe('cancelled');
        expect(item.credits_charged).toBe(0);
        expect(holds.get(item.reservation_id)).toBe('released');
        expect(released.get(item.reservation_id)).toBe(DRAWS);
        expect(charged.has(item.reservation_id)).toBe(false);
      }
    }
    expect(charges).toHaveLength(delivered.length);
    const balance = await t.services.ledger.balance(orgId);
    expect(balance).toMatchObject({ held: 0, spentThisMonth: delivered.length * DRAWS });
    expect((await t.services.ledger.checkBalanced(orgId)).balanced).toBe(true);

    // The batch's completion is written as for queued items cancelled: one event, with the counts.
    const events = (await get(t, '/v1/events?type=batch.completed', auth)).json().data;
    expect(events).toHaveLength(1);
    expect(events[0].data.object).toMatchObject({
      batch_id: batch.batch_id,
      status: 'cancelled',
      counts: { total: ITEMS, cancelled: ended.counts.cancelled },
    });
  }, 300_000);
});
