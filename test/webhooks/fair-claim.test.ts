// The deliveries' claim is fair (src/webhooks/delivery-store.ts claimDeliveries, issue 51): one
// statement that goes round the organisations (each one's oldest due delivery first), counts every
// worker's deliveries in flight against a limit per endpoint and per organisation and mode, skips an
// endpoint whose breaker is open and gives one whose last attempt got no answer one delivery at a time.
// On the back end the run names (PGlite, or PostgreSQL with DATABASE_URL), with two claims at once.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';
import { claimDeliveries } from '../../src/webhooks/delivery-store.js';
import { insertEndpoint } from '../../src/webhooks/endpoint-store.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
const T0 = new Date('2026-03-10T12:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const LIMITS = { perEndpoint: 4, perOrganisation: 8, leaseMs: 60_000 };

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.close();
});
// Each test claims from its own deliveries only.
beforeEach(async () => {
  await db.sql`DELETE FROM webhook_deliveries`;
});

async function endpoint(orgId: string, mode: 'live' | 'test' = 'live'): Promise<string> {
  const id = newId('we');
  await db.sql.begin((tx) =>
    insertEndpoint(
      tx,
      { orgId, mode },
      {
        id,
        url: 'http://127.0.0.1:9/hook',
        description: null,
        events: ['simulation.succeeded'],
        secret: 's',
      },
      16,
      T0,
    ),
  );
  return id;
}

/** `count` pending deliveries to the endpoint, due one a second from `from` on; their ids, oldest first. */
async function deliveries(orgId: string, endpointId: string, count: number, from: Date): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const eventId = newId('evt');
    const due = new Date(from.getTime() + i * 1000);
    await db.sql`
      INSERT INTO webhook_events (id, org_id, mode, type, object_id, body, created_at)
      VALUES (${eventId}, ${orgId}, 'live', 'simulation.succeeded', ${newId('job')}, '{}', ${due})`;
    const [row] = await db.sql<{ id: number }[]>`
      INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
      VALUES (${eventId}, ${endpointId}, ${due}, ${due}) RETURNING id`;
    ids.push(Number(row!.id));
  }
  return ids;
}

async function claim(workerId: string, n: number, now: Date) {
  const claimed = await claimDeliveries(db.sql, { workerId, n, now, ...LIMITS });
  return claimed.map((delivery) => ({ ...delivery, id: Number(delivery.id) }));
}

const perKey = (keys: string[]) => {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return [...counts.values()];
};

describe('the claim', () => {
  it("goes round the organisations: the victim's one new delivery is taken before the hog's backlog", async () => {
    const hog = await insertOrg(db.sql);
    const victim = await insertOrg(db.sql);
    const hogEndpoints = [await endpoint(hog), await endpoint(hog)];
    const first = await deliveries(hog, hogEndpoints[0]!, 20, at(0));
    const second = await deliveries(hog, hogEndpoints[1]!, 20, at(0.5));
    const [late] = await deliveries(victim, await endpoint(victim), 1, at(100));
    const claimed = await claim('w1', 3, at(200));
    // Each organisation's oldest first (the hog's is older), then each one's second: the hog's other endpoint.
    expect(claimed.map((d) => d.id)).toEqual([first[0], late, second[0]].sort((a, b) => a! - b!));
    expect(new Set(claimed.map((d) => d.orgId))).toEqual(new Set([hog, victim]));
  });

  it("holds an organisation's deliveries in flight, every worker's, to its limits", async () => {
    const hog = await insertOrg(db.sql);
    const endpoints = [await endpoint(hog), await endpoint(hog), await endpoint(hog)];
    for (const id of endpoints) await deliveries(hog, id, 10, at(0));
    const once = await claim('w1', 32, at(60));
    expect(once).toHaveLength(LIMITS.perOrganisation);
    expect(Math.max(...perKey(once.map((d) => d.endpointId)))).toBeLessThanOrEqual(LIMITS.perEndpoint);
    // Another worker sees them in flight: nothing more for this organisation while their leases hold.
    expect(await claim('w2', 32, at(61))).toEqual([]);
    // Its test mode has a budget of its own; another organisation is not held back at all.
    const testEndpoint = await endpoint(hog, 'test');
    await deliveries(hog, testEndpoint, 2, at(0));
    const other = await insertOrg(db.sql);
    await deliveries(other, await endpoint(other), 2, at(50));
    const more = await claim('w2', 32, at(61));
    expect(more.map((d) => d.endpointId).sort()).toEqual(
      [testEndpoint, testEndpoint, ...more.filter((d) => d.orgId === other).map((d) => d.endpointId)].sort(),
    );
    expect(more.filter((d) => d.orgId === other)).toHaveLength(2);
    // Once the leases have run out (their worker died), they no longer count.
    const later = await claim('w3', 32, at(60 + LIMITS.leaseMs / 1000 + 1));
    const live = later.filter((d) => endpoints.includes(d.endpointId));
    expect(live).toHaveLength(LIMITS.perOrganisation);
    expect(live.some((d) => once.some((o) => o.id === d.id))).toBe(true);
  });

  it('skips an endpoint whose breaker is open, then takes one at a time until it is answered', async () => {
    const org = await insertOrg(db.sql);
    const id = await endpoint(org);
    await deliveries(org, id, 6, at(0));
    await db.sql`UPDATE webhook_endpoints SET unanswered = 1, paused_until = ${at(120)} WHERE id = ${id}`;
    expect(await claim('w1', 32, at(60))).toEqual([]);
    const probe = await claim('w1', 32, at(120));
    expect(probe).toHaveLength(1);
    expect(await claim('w2', 32, at(121))).toEqual([]);
    await db.sql`UPDATE webhook_deliveries SET status = 'succeeded', lease_owner = NULL WHERE id = ${probe[0]!.id}`;
    await db.sql`UPDATE webhook_endpoints SET unanswered = 0, paused_until = NULL WHERE id = ${id}`;
    expect(await claim('w1', 32, at(122))).toHaveLength(LIMITS.perEndpoint);
  });

  it('never gives one delivery to two claims at once', async () => {
    const orgs = [await insertOrg(db.sql), await insertOrg(db.sql), await insertOrg(db.sql)];
    const all: number[] = [];
    for (const org of orgs)
      for (let e = 0; e < 3; e++) all.push(...(await deliveries(org, await endpoint(org), 3, at(0))));
    const claims = await Promise.all(['a', 'b', 'c', 'd'].map((worker) => claim(worker, 8, at(30))));
    const ids = claims.flat().map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => all.includes(id))).toBe(true);
  });
});
