// Fault test: an endpoint deleted (DELETE /v1/webhook_endpoints/{id}) while a worker records the outcome of
// one of its deliveries. The outcome's transaction marks the delivery, then the endpoint's breaker and
// failure fields; the delete locks the endpoint, then its deliveries (ON DELETE CASCADE). When the outcome
// locked the delivery first, the two waited for each other in a circle and PostgreSQL aborted one:
// "deadlock detected". The outcome's first statement now locks the endpoint before the delivery
// (src/webhooks/delivery-store.ts), so the delete waits for it and then deletes. Here the outcome's
// transaction is held open after its first statement until the delete waits for a lock, with a deadlock
// timeout of 10 ms on its own session so that it is the one PostgreSQL would abort.
// Real PostgreSQL only: PGlite runs one transaction at a time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TransactionSql } from '../../src/db/connection.js';
import { recordAttemptFailed, recordDelivered } from '../../src/webhooks/delivery-store.js';
import {
  closeBreaker,
  deleteEndpoint,
  markEndpointFailed,
  markEndpointHealthy,
  openBreaker,
} from '../../src/webhooks/endpoint-store.js';
import { createTestContext, type TestContext } from '../helpers/app.js';
import { usingServer } from '../helpers/database.js';

if (!usingServer) {
  console.info('webhook endpoint delete: skipped, it needs a PostgreSQL server (set DATABASE_URL)');
}

const NOW = new Date('2026-11-28T12:00:00Z');
const WORKER = 'worker-a';
let t: TestContext;

beforeAll(async () => {
  if (!usingServer) return;
  t = await createTestContext();
});

afterAll(async () => {
  if (!usingServer) return;
  await t.close();
});

/**
 * A failing endpoint (its breaker open once) with one event pending delivery to it, claimed by WORKER:
 * every statement of either outcome then changes the endpoint's row (a statement whose WHERE finds
 * nothing to change waits for no lock).
 */
async function endpointWithClaimedDelivery(name: string) {
  const { orgId } = await t.newOrg();
  const endpointId = `we_${name}`;
  const eventId = `evt_${name}`;
  await t.db.sql`
    INSERT INTO webhook_endpoints (id, org_id, mode, url, events, secret, created_at, updated_at,
                                   failing_since, unanswered, paused_until)
    VALUES (${endpointId}, ${orgId}, 'live', 'https://receiver.example/hook', ${['simulation.succeeded']},
            'whsec_test', ${NOW}, ${NOW}, ${NOW}, 1, ${NOW})`;
  await t.db.sql`
    INSERT INTO webhook_events (id, org_id, mode, type, object_id, body, created_at)
    VALUES (${eventId}, ${orgId}, 'live', 'simulation.succeeded', ${`job_${name}`}, '{}', ${NOW})`;
  const [delivery] = await t.db.sql<{ id: string }[]>`
    INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at, lease_owner,
                                    lease_expires_at, attempts)
    VALUES (${eventId}, ${endpointId}, ${NOW}, ${NOW}, ${WORKER}, ${new Date(NOW.getTime() + 60_000)}, 1)
    RETURNING id`;
  return { owner: { orgId, mode: 'live' as const }, endpointId, deliveryId: Number(delivery!.id) };
}

async function deleteWaitsForALock(): Promise<boolean> {
  const rows = await t.db.sql`
    SELECT pid FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'
      AND query ILIKE '%DELETE FROM webhook_endpoints%' AND pid <> pg_backend_pid()`;
  return rows.length > 0;
}

async function untilDeleteWaits() {
  for (let i = 0; i < 400; i++) {
    if (await deleteWaitsForALock()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('timed out waiting for the delete to wait for a lock');
}

type Tx = TransactionSql;

describe.skipIf(!usingServer)('an endpoint deleted while an outcome of its delivery is recorded', () => {
  const outcomes: Array<{
    name: string;
    first: (tx: Tx, delivery: { id: number; endpointId: string }) => Promise<boolean>;
    rest: (tx: Tx, endpointId: string) => Promise<void>;
  }> = [
    {
      name: 'delivered',
      first: (tx, delivery) => recordDelivered(tx, delivery, WORKER, { status: 200, error: null }, NOW),
      rest: async (tx, endpointId) => {
        await markEndpointHealthy(tx, endpointId);
        await closeBreaker(tx, endpointId);
      },
    },
    {
      name: 'failed',
      first: (tx, delivery) =>
        recordAttemptFailed(tx, delivery, WORKER, { status: null, error: 'timeout', retryAt: NOW }, NOW),
      rest: async (tx, endpointId) => {
        await markEndpointFailed(tx, endpointId, NOW, { afterMs: 1000, reason: 'test' });
        await openBreaker(tx, endpointId, NOW, { firstMs: 1000, maxMs: 60_000, jitter: 1 });
      },
    },
  ];

  for (const outcome of outcomes) {
    it(`${outcome.name}: no deadlock; the outcome commits, then the endpoint and its delivery are gone`, async () => {
      const { owner, endpointId, deliveryId } = await endpointWithClaimedDelivery(outcome.name);
      let deleting: Promise<boolean> | null = null;
      await t.db.sql.begin(async (tx) => {
        // This session is the one a deadlock check would abort, and it checks almost at once.
        await tx`SET LOCAL deadlock_timeout = '10ms'`;
        expect(await outcome.first(tx, { id: deliveryId, endpointId })).toBe(true);
        deleting = deleteEndpoint(t.db.sql, owner, endpointId);
        await untilDeleteWaits();
        await outcome.rest(tx, endpointId);
      });
      expect(await deleting!).toBe(true);
      const left = await t.db.sql`
        SELECT (SELECT count(*)::int FROM webhook_endpoints WHERE id = ${endpointId}) AS endpoints,
               (SELECT count(*)::int FROM webhook_deliveries WHERE id = ${deliveryId}) AS deliveries`;
      expect(left[0]).toEqual({ endpoints: 0, deliveries: 0 });
    });
  }

  it('an outcome recorded after the endpoint is gone changes nothing and says so', async () => {
    const { owner, endpointId, deliveryId } = await endpointWithClaimedDelivery('gone');
    expect(await deleteEndpoint(t.db.sql, owner, endpointId)).toBe(true);
    const mine = await t.db.sql.begin((tx) =>
      recordDelivered(tx, { id: deliveryId, endpointId }, WORKER, { status: 200, error: null }, NOW),
    );
    expect(mine).toBe(false);
  });
});
