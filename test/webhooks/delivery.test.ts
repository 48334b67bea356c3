// Delivery (docs/api.md §6): a receiver started by the test gets a job's and a batch's events with
// valid signatures (checked with the typed client's verifyWebhook), live events only at a live endpoint;
// a receiver that answers 500 then 200 gets the same event again after the backoff, on a clock the test
// moves; 3 days of failures fail the delivery and disable the endpoint with the reason; a worker that
// stops answering mid-delivery loses nothing: another sends the event again once the lease has run out,
// at most a duplicate with the same evt_ id and bytes; a rotated secret signs beside the new one.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../clients/typescript/src/index.js';
import { eventObjects } from '../../src/http/views/webhooks.js';
import {
  DELIVERY_LEASE_MS,
  makeWebhookDeliverer,
  RETRY_DELAY_FIRST_MS,
} from '../../src/webhooks/delivery.js';
import { makeWebhookOutbox } from '../../src/webhooks/outbox.js';
import { makeSender } from '../../src/webhooks/sender.js';
import { FX, NOW } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';
import { type Json, ROOMY, untilBatch } from '../helpers/batch-requests.js';
import { type Receiver, startReceiver } from './receiver.js';

let t: TestContext;
let receiver: Receiver;
let now = NOW;
const clock = () => now;
function moveTo(at: Date) {
  now = at;
  t.setNow(at);
}
const later = (ms: number) => new Date(now.getTime() + ms);
const seconds = (at: Date) => Math.floor(at.getTime() / 1000);

// Equal jitter with random() = 1: each delay is its full value (delivery.ts retryDelayMs).
const deliverer = (workerId: string) => {
  const outbox = makeWebhookOutbox({ clock, objects: eventObjects() });
  return makeWebhookDeliverer({
    sql: t.db.sql,
    clock,
    send: makeSender({ publicOnly: false }),
    workerId,
    random: () => 1,
    beforeRound: () => outbox.decideBatchChecks(t.db.sql),
  });
};

beforeAll(async () => {
  t = await createFeedTestContext({ worker: true });
  moveTo(NOW);
  receiver = await startReceiver();
});
// Each test's endpoints (and their deliveries) go with it, so that a round delivers only the next test's.
afterEach(async () => {
  await t.db.sql`DELETE FROM webhook_endpoints`;
  moveTo(NOW);
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

function call(method: 'GET' | 'POST' | 'PATCH', url: string, auth: Json, payload?: Json) {
  return t.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });
}

async function register(
  auth: Json,
  events = ['simulation.succeeded', 'simulation.failed', 'batch.completed'],
) {
  const response = await call('POST', '/v1/webhook_endpoints', auth, { url: receiver.url, events });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { id: string; secret: string };
}

/** Every delivery received from `from` on, verified with `secret` at `at`. */
async function verified(from: number, secret: string, at = now) {
  return Promise.all(
    receiver.received
      .slice(from)
      .map(({ headers, body }) =>
        verifyWebhook(body, headers['matchsim-signature'] as string, secret, 300, seconds(at)),
      ),
  );
}

/** An event written as a job's end writes it, in a transaction of its own. */
async function writeEvent(orgId: string, objectId: string) {
  const outbox = makeWebhookOutbox({ clock, objects: eventObjects() });
  const [event] = await t.db.sql.begin((tx) =>
    outbox.write(tx, [
      { orgId, mode: 'live', type: 'simulation.succeeded', objectId, object: { id: objectId } },
    ]),
  );
  return event!;
}

describe('a job and a batch', () => {
  it('reach the receiver as signed events: each job, then the batch with its counts; test events stay out', async () => {
    const { auth, orgId } = await t.newOrg({ limits: ROOMY });
    const test = await t.operator.createKey({ orgId, mode: 'test' });
    const endpoint = await register(auth);
    const from = receiver.received.length;
    const single = await call('POST', '/v1/simulations', auth, {
      fixture_id: FX.upcoming,
      draws: 1000,
      wait_seconds: 25,
    });
    expect(single.statusCode, single.body).toBe(200);
    const batch = (
      await call('POST', '/v1/simulations/batch', auth, {
        fixtures: [{ fixture_id: FX.upcoming }, { fixture_id: FX.announced }],
        draws: 2000,
      })
    ).json();
    await untilBatch(t, batch.batch_id, auth, (b) => b.status === 'completed');
    const testRun = await call(
      'POST',
      '/v1/simulations',
      { authorization: `Bearer ${test.secret}` },
      {
        fixture_id: FX.upcoming,
        draws: 1000,
        wait_seconds: 25,
      },
    );
    expect(testRun.statusCode).toBe(200);

    const hooks = deliverer('w1');
    for (let i = 0; i < 50 && receiver.received.length < from + 4; i++) await hooks.deliverDue();
    await receiver.until(from + 4);
    const events = await verified(from, endpoint.secret);
    expect(events.map((e) => e.livemode)).toEqual([true, true, true, true]);
    const jobs = events.filter((e) => e.type === 'simulation.succeeded').map((e) => e.data.object.job_id);
    expect(new Set(jobs)).toEqual(
      new Set([single.json().receipt.job_id, ...batch.items.map((item: Json) => item.job_id)]),
    );
    const [completed] = events.filter((e) => e.type === 'batch.completed');
    expect(completed!.data.object).toMatchObject({
      object: 'simulation_batch',
      batch_id: batch.batch_id,
      status: 'completed',
      counts: { total: 2, succeeded: 2, queued: 0, running: 0 },
    });
    // A job's object is its GET's view: its result_url, never the document.
    const job = events.find((e) => e.data.object.job_id === single.json().receipt.job_id)!;
    expect(job.data.object.result_url).toMatch(/^\/v1\/simulations\/jobs\/job_/);
    expect(job.data.object.simulation).toBeUndefined();
    // The same events, byte for byte, in the events API; the test key's run is there for the test key only.
    const listed = (await call('GET', '/v1/events?limit=100', auth)).json();
    expect(new Set(listed.data.map((e: Json) => e.id))).toEqual(new Set(events.map((e) => e.id)));
    const testEvents = (await call('GET', '/v1/events', { authorization: `Bearer ${test.secret}` })).json();
    expect(testEvents.data.map((e: Json) => [e.type, e.livemode])).toEqual([['simulation.succeeded', false]]);
    // A wrong secret or a stale timestamp does not verify.
    const { headers, body } = receiver.received[from]!;
    const header = headers['matchsim-signature'] as string;
    await expect(verifyWebhook(body, header, 'whsec_wrong', 300, seconds(now))).rejects.toThrow(
      /No signature/,
    );
    await expect(verifyWebhook(body, header, endpoint.secret, 300, seconds(now) + 301)).rejects.toThrow(
      /tolerance/,
    );
    await expect(verifyWebhook(`${body} `, header, endpoint.secret, 300, seconds(now))).rejects.toThrow(
      /No signature/,
    );
  }, 120_000);

  it('writes batch.completed after a cancel, with the counts', async () => {
    const { auth } = await t.newOrg({ limits: ROOMY });
    await register(auth, ['batch.completed']);
    await t.stopWorker();
    const batch = (
      await call('POST', '/v1/simulations/batch', auth, {
        fixtures: [{ fixture_id: FX.upcoming }, { fixture_id: FX.announced }],
        draws: 3000,
      })
    ).json();
    const cancelled = await call('POST', `/v1/simulations/batch/${batch.batch_id}/cancel`, auth);
    expect(cancelled.json().status).toBe('cancelled');
    const [event] = (await call('GET', '/v1/events?type=batch.completed', auth)).json().data;
    expect(event.data.object).toMatchObject({
      batch_id: batch.batch_id,
      status: 'cancelled',
      counts: { total: 2, cancelled: 2 },
    });
    expect(event.data.object.cancel_requested_at).not.toBeNull();
  });
});

describe('retries', () => {
  it('sends the same event again after the backoff when the receiver answered 500, then 200', async () => {
    const { auth, orgId } = await t.newOrg();
    const endpoint = await register(auth);
    const event = await writeEvent(orgId, 'job_retry');
    const from = receiver.received.length;
    const hooks = deliverer('w1');
    receiver.answers.push(500);
    expect(await hooks.deliverDue()).toEqual({ delivered: 0, failed: 1 });
    const failing = (await call('GET', `/v1/webhook_endpoints/${endpoint.id}`, auth)).json();
    expect(failing).toMatchObject({ status: 'failing', failing_since: now.toISOString(), enabled: true });
    // Not before its time: the first retry waits a minute (with random() = 1, the whole minute).
    moveTo(later(RETRY_DELAY_FIRST_MS - 1000));
    expect(await hooks.deliverDue()).toEqual({ delivered: 0, failed: 0 });
    moveTo(later(1000));
    expect(await hooks.deliverDue()).toEqual({ delivered: 1, failed: 0 });
    const twice = await verified(from, endpoint.secret);
    expect(twice.map((e) => e.id)).toEqual([event.id, event.id]);
    expect(receiver.received[from]!.body).toBe(receiver.received[from + 1]!.body);
    const healthy = (await call('GET', `/v1/webhook_endpoints/${endpoint.id}`, auth)).json();
    expect(healthy).toMatchObject({ status: 'enabled', failing_since: null });
  });

  it('gives up after 3 days and disables the endpoint with the reason; enabling it again clears that', async () => {
    const { auth, orgId } = await t.newOrg();
    const endpoint = await register(auth);
    await writeEvent(orgId, 'job_gone');
    const hooks = deliverer('w1');
    const start = now;
    receiver.answers.push(500, 500);
    expect(await hooks.deliverDue()).toEqual({ delivered: 0, failed: 1 });
    moveTo(new Date(start.getTime() + 3 * 24 * 3600 * 1000 + 1000));
    expect(await hooks.deliverDue()).toEqual({ delivered: 0, failed: 1 });
    const [delivery] = await t.db.sql<{ status: string; attempts: number; lastStatus: number }[]>`
      SELECT status, attempts, last_status FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}`;
    expect(delivery).toEqual({ status: 'failed', attempts: 2, lastStatus: 500 });
    const disabled = (await call('GET', `/v1/webhook_endpoints/${endpoint.id}`, auth)).json();
    expect(disabled).toMatchObject({ status: 'disabled', enabled: false });
    expect(disabled.disabled_reason).toMatch(/failed for 3 days; the last: HTTP 500/);
    // A disabled endpoint gets nothing new.
    await writeEvent(orgId, 'job_after');
    expect(await hooks.deliverDue()).toEqual({ delivered: 0, failed: 0 });
    const enabled = (
      await call('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, auth, { enabled: true })
    ).json();
    expect(enabled).toMatchObject({ status: 'enabled', disabled_reason: null, failing_since: null });
    moveTo(NOW);
  });
});

describe('a worker lost mid-delivery', () => {
  it('loses nothing: another worker sends it again after the lease, the same evt_ id, recorded once', async () => {
    const { auth, orgId } = await t.newOrg();
    const endpoint = await register(auth);
    const event = await writeEvent(orgId, 'job_lost');
    const from = receiver.received.length;
    receiver.answers.push('hold');
    // Worker a sends and never hears back (its process stopped, as far as the database can tell).
    const lost = deliverer('a').deliverDue();
    await receiver.until(from + 1);
    // Before its lease ends nobody else takes the delivery.
    expect(await deliverer('b').deliverDue()).toEqual({ delivered: 0, failed: 0 });
    moveTo(later(DELIVERY_LEASE_MS));
    expect(await deliverer('b').deliverDue()).toEqual({ delivered: 1, failed: 0 });
    // Worker a's answer arrives late: it no longer holds the delivery and records nothing.
    receiver.release(200);
    await lost;
    const events = await verified(from, endpoint.secret);
    expect(events.map((e) => e.id)).toEqual([event.id, event.id]);
    expect(receiver.received[from]!.body).toBe(receiver.received[from + 1]!.body);
    const rows = await t.db.sql<{ status: string; attempts: number; deliveredAt: Date }[]>`
      SELECT status, attempts, delivered_at FROM webhook_deliveries WHERE event_id = ${event.id}`;
    expect(rows).toEqual([{ status: 'succeeded', attempts: 2, deliveredAt: now }]);
    moveTo(NOW);
  });
});

describe('a deliverer stopped by a shutdown', () => {
  it('stops within the time it is given, leaving a request still in flight to its lease', async () => {
    const { auth, orgId } = await t.newOrg();
    await register(auth);
    const event = await writeEvent(orgId, 'job_shutdown');
    const from = receiver.received.length;
    receiver.answers.push('hold');
    const stopping = deliverer('s');
    stopping.start();
    await receiver.until(from + 1);
    // The receiver holds the request (the sender would wait for it up to its 10 s timeout).
    await stopping.stop({ timeoutMs: 10 });
    const [row] = await t.db.sql<{ status: string; leaseOwner: string | null }[]>`
      SELECT status, lease_owner FROM webhook_deliveries WHERE event_id = ${event.id}`;
    // Not recorded: the lease decides, and another round sends it again once it ends.
    expect(row).toMatchObject({ status: 'pending', leaseOwner: 's' });
    receiver.release(200);
  });
});

describe('a rotated secret', () => {
  it('signs beside the new one for 24 hours, then only the new one signs', async () => {
    const { auth, orgId } = await t.newOrg();
    const endpoint = await register(auth);
    const rotated = (await call('POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, auth)).json();
    const from = receiver.received.length;
    await writeEvent(orgId, 'job_rotated');
    expect(await deliverer('w1').deliverDue()).toEqual({ delivered: 1, failed: 0 });
    const header = receiver.received[from]!.headers['matchsim-signature'] as string;
    expect(header.match(/v1=/g)).toHaveLength(2);
    await verified(from, endpoint.secret);
    await verified(from, rotated.secret);
    moveTo(later(24 * 3600 * 1000 + 1000));
    await writeEvent(orgId, 'job_rotated_later');
    expect(await deliverer('w1').deliverDue()).toEqual({ delivered: 1, failed: 0 });
    await verified(from + 1, rotated.secret);
    await expect(verified(from + 1, endpoint.secret)).rejects.toThrow(/No signature/);
    moveTo(NOW);
  });
});
