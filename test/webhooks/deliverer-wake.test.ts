// When the outbox wakes this process's deliverer (src/webhooks/outbox.ts): once a transaction that
// scheduled a delivery, or left a batch check for a worker, has committed; never for an event that no
// endpoint takes (a round would claim nothing and decide nothing), nor for a transaction rolled back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventObjects } from '../../src/http/views/webhooks.js';
import { newId } from '../../src/ids.js';
import { insertEndpoint } from '../../src/webhooks/endpoint-store.js';
import { makeWebhookOutbox } from '../../src/webhooks/outbox.js';
import type { NewEvent } from '../../src/webhooks/types.js';
import { insertOrg, manualClock } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
const clock = manualClock('2026-03-10T12:00:00Z');
let wakes = 0;
const outbox = makeWebhookOutbox({ clock, objects: eventObjects(), onCommitted: () => wakes++ });

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.close();
});

function succeeded(orgId: string): NewEvent {
  const objectId = newId('job');
  return { orgId, mode: 'live', type: 'simulation.succeeded', objectId, object: { id: objectId } };
}

/** The wakes that writing `events` in a transaction of its own caused, once it committed. */
async function wakesOf(events: NewEvent[], options?: { wake?: boolean }): Promise<number> {
  const before = wakes;
  await db.sql.begin((tx) => outbox.write(tx, events, options));
  return wakes - before;
}

async function subscribe(orgId: string, events: NewEvent['type'][]) {
  await db.sql.begin((tx) =>
    insertEndpoint(
      tx,
      { orgId, mode: 'live' },
      {
        id: newId('we'),
        url: 'https://hooks.example.com/matchsim',
        description: null,
        events,
        secret: 'whsec_test',
      },
      16,
      clock(),
    ),
  );
}

describe("the outbox wakes this process's deliverer", () => {
  it('not for an event no endpoint takes: it is only read back', async () => {
    const orgId = await insertOrg(db.sql);
    expect(await wakesOf([succeeded(orgId)])).toBe(0);
    await subscribe(orgId, ['simulation.failed']);
    expect(await wakesOf([succeeded(orgId)])).toBe(0);
  });

  it('once a transaction that scheduled deliveries has committed, and not before', async () => {
    const orgId = await insertOrg(db.sql);
    await subscribe(orgId, ['simulation.succeeded']);
    const before = wakes;
    await db.sql.begin(async (tx) => {
      await outbox.write(tx, [succeeded(orgId), succeeded(orgId)]);
      expect(wakes).toBe(before);
    });
    expect(wakes - before).toBe(1);
  });

  it('not for a transaction rolled back', async () => {
    const orgId = await insertOrg(db.sql);
    await subscribe(orgId, ['simulation.succeeded']);
    const before = wakes;
    await expect(
      db.sql.begin(async (tx) => {
        await outbox.write(tx, [succeeded(orgId)]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(wakes).toBe(before);
  });

  it('when asked to, with or without events: a batch check left for a worker to decide', async () => {
    const orgId = await insertOrg(db.sql);
    expect(await wakesOf([], { wake: true })).toBe(1);
    expect(await wakesOf([succeeded(orgId)], { wake: true })).toBe(1);
  });
});
