// batch.completed exactly once (docs/api.md §6.2, src/webhooks/batch-completions.ts): a transaction
// that ends a batch's jobs decides under the batch's advisory lock when it can take it at once; one that
// finds it taken leaves a check, which a worker decides after the lock's holder has committed. Two
// transactions ending the last two jobs together, with the check decided while the first is still open:
// one event (without the checker's wait for the lock, none on PostgreSQL); the check left wakes this
// process's deliverer, whose rounds decide checks. A rolled-back end writes no event and no check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { eventObjects } from '../../src/http/views/webhooks.js';
import { newId } from '../../src/ids.js';
import { type JobQueue, makeJobQueue } from '../../src/jobs/queue.js';
import { makeWebhookOutbox, type WebhookOutbox } from '../../src/webhooks/outbox.js';
import { insertOrg, manualClock } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { newJob } from '../jobs/setup.js';

let db: TestDatabase;
let queue: JobQueue;
let outbox: WebhookOutbox;
/** Wake-ups of this process's deliverer (outbox.ts): for a check left, since no endpoint is registered. */
let delivererWakes = 0;
const clock = manualClock('2026-03-10T12:00:00Z');
const failure = { code: 'simulation_failed', message: 'test' };

beforeAll(async () => {
  db = await createTestDatabase();
  outbox = makeWebhookOutbox({ clock, objects: eventObjects(), onCommitted: () => delivererWakes++ });
  queue = makeJobQueue({
    sql: db.sql,
    ledger: makeLedger({ sql: db.sql, clock }),
    clock,
    holdTtlSeconds: 3600,
    notifications: false,
    events: outbox,
  });
});
afterAll(async () => {
  await queue.close();
  await db.close();
});

async function testBatch(orgId: string, items: number) {
  const jobs = Array.from({ length: items }, (_, i) =>
    newJob(orgId, {
      reservationId: newId('res'),
      draws: 1000,
      mode: 'test',
      inputs: { i, nonce: newId('req') },
    }),
  );
  return db.sql.begin((tx) =>
    queue.enqueueBatch(tx, { orgId, mode: 'test', draws: 1000, requestId: 'req_t' }, jobs),
  );
}

const eventsOf = (objectIds: string[]) =>
  db.sql<{ type: string; objectId: string; body: string }[]>`
    SELECT type, object_id, body FROM webhook_events WHERE object_id = ANY(${db.sql.array(objectIds)}::text[])
    ORDER BY type, object_id`;

describe('batch.completed', () => {
  it('is written once when two transactions end the last two jobs together', async () => {
    const orgId = await insertOrg(db.sql);
    const { batch, jobs } = await testBatch(orgId, 2);
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let firstEnded = () => {};
    const ended = new Promise<void>((resolve) => {
      firstEnded = resolve;
    });
    // The first ends job 0 under the batch's lock and stays open: it counted job 1 as running.
    const first = db.sql.begin(async (tx) => {
      await queue.fail(jobs[0]!.id, failure, { tx });
      firstEnded();
      await gate;
    });
    await ended;
    // The second ends job 1 meanwhile (on a server: the lock is taken, so it leaves a check) and commits;
    // the check is decided while the first is still open, and must wait for it.
    const wakesBefore = delivererWakes;
    const second = db.sql.begin((tx) => queue.fail(jobs[1]!.id, failure, { tx }));
    if (db.url) {
      await second;
      // The check it left wakes the deliverer, whose round decides checks; its event alone would not.
      expect(delivererWakes - wakesBefore).toBe(1);
    }
    const decided = outbox.decideBatchChecks(db.sql);
    setTimeout(release, 200);
    await Promise.all([first, second, decided]);
    await outbox.decideBatchChecks(db.sql);
    const events = await eventsOf([batch.id, jobs[0]!.id, jobs[1]!.id]);
    expect(events.map((e) => e.type)).toEqual(['batch.completed', 'simulation.failed', 'simulation.failed']);
    const completed = JSON.parse(events[0]!.body);
    expect(completed).toMatchObject({
      object: 'event',
      type: 'batch.completed',
      livemode: false,
      data: { object: { batch_id: batch.id, status: 'completed', counts: { total: 2, failed: 2 } } },
    });
    expect(await db.sql`SELECT 1 FROM webhook_batch_checks WHERE batch_id = ${batch.id}`).toHaveLength(0);
  });

  it('is not written while an item is open, and a rolled-back end writes no event', async () => {
    const orgId = await insertOrg(db.sql);
    const { batch, jobs } = await testBatch(orgId, 2);
    await queue.fail(jobs[0]!.id, failure);
    expect((await eventsOf([batch.id, jobs[0]!.id])).map((e) => e.type)).toEqual(['simulation.failed']);
    await expect(
      db.sql.begin(async (tx) => {
        await queue.fail(jobs[1]!.id, failure, { tx });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await eventsOf([batch.id, jobs[1]!.id])).map((e) => e.type)).toEqual([]);
    expect(await db.sql`SELECT 1 FROM webhook_batch_checks WHERE batch_id = ${batch.id}`).toHaveLength(0);
    await queue.fail(jobs[1]!.id, failure);
    expect((await eventsOf([batch.id])).map((e) => e.type)).toEqual(['batch.completed']);
  });
});
