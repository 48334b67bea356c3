// Webhook endpoints and the events API (docs/api.md §6): the secret shown once, changes and
// rotation, 16 endpoints an organisation, the simulations.run scope, isolation between organisations and
// between live and test keys; events listed with cursors and a type filter for 30 days, read, resent; the
// credits.low threshold and the event a charge across it writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventObjects } from '../../src/http/views/webhooks.js';
import { makeWebhookOutbox } from '../../src/webhooks/outbox.js';
import type { NewEvent } from '../../src/webhooks/types.js';
import { NOW } from '../fixtures/small-feed.js';
import { createTestContext, type TestContext } from '../helpers/app.js';
import type { Json } from '../helpers/batch-requests.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
  t.setNow(NOW);
});
afterAll(async () => t.close());

function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, auth: Json, payload?: Json) {
  return t.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });
}

const hook = (n = 0) => ({ url: `http://127.0.0.1:9/hook/${n}`, events: ['simulation.succeeded'] });

describe('endpoints', () => {
  it('shows the secret once, changes, rotates and deletes', async () => {
    const { auth } = await t.newOrg();
    const created = await call('POST', '/v1/webhook_endpoints', auth, { ...hook(), description: 'ops' });
    expect(created.statusCode, created.body).toBe(200);
    const endpoint = created.json();
    expect(endpoint).toMatchObject({
      object: 'webhook_endpoint',
      url: hook().url,
      events: ['simulation.succeeded'],
      enabled: true,
      status: 'enabled',
      livemode: true,
      description: 'ops',
    });
    expect(endpoint.id).toMatch(/^we_/);
    expect(endpoint.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    const read = (await call('GET', `/v1/webhook_endpoints/${endpoint.id}`, auth)).json();
    expect(read.secret).toBeUndefined();
    const listed = (await call('GET', '/v1/webhook_endpoints', auth)).json();
    expect(listed.data.map((e: Json) => e.id)).toEqual([endpoint.id]);
    expect(listed.data[0].secret).toBeUndefined();

    const changed = await call('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, auth, {
      events: ['batch.completed', 'simulation.failed', 'batch.completed'],
      enabled: false,
      description: null,
    });
    expect(changed.json()).toMatchObject({
      events: ['batch.completed', 'simulation.failed'],
      enabled: false,
      status: 'disabled',
      description: null,
      url: hook().url,
    });

    const rotated = (await call('POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, auth)).json();
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(endpoint.secret);
    const [row] = await t.db.sql<{ previousSecret: string; previousSecretExpiresAt: Date }[]>`
      SELECT previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id = ${endpoint.id}`;
    expect(row!.previousSecret).toBe(endpoint.secret);
    expect(row!.previousSecretExpiresAt.getTime()).toBe(NOW.getTime() + 24 * 3600 * 1000);

    const deleted = await call('DELETE', `/v1/webhook_endpoints/${endpoint.id}`, auth);
    expect(deleted.json()).toEqual({ object: 'webhook_endpoint', id: endpoint.id, deleted: true });
    expect((await call('GET', `/v1/webhook_endpoints/${endpoint.id}`, auth)).statusCode).toBe(404);
  });

  it('allows 16 endpoints an organisation, live and test together, and pages through them', async () => {
    const { auth, orgId } = await t.newOrg();
    const test = await t.operator.createKey({ orgId, mode: 'test' });
    const testAuth = { authorization: `Bearer ${test.secret}` };
    for (let n = 0; n < 16; n++) {
      const response = await call('POST', '/v1/webhook_endpoints', n < 12 ? auth : testAuth, hook(n));
      expect(response.statusCode).toBe(200);
    }
    const refused = await call('POST', '/v1/webhook_endpoints', auth, hook(16));
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('webhook_endpoints_exceeded');
    const first = (await call('GET', '/v1/webhook_endpoints?limit=10', auth)).json();
    expect(first.data).toHaveLength(10);
    expect(first.has_more).toBe(true);
    const rest = (
      await call('GET', `/v1/webhook_endpoints?limit=10&starting_after=${first.data[9].id}`, auth)
    ).json();
    expect(rest.data).toHaveLength(2);
    expect(rest.has_more).toBe(false);
    // The test key sees its own four, all livemode false.
    const tests = (await call('GET', '/v1/webhook_endpoints?limit=100', testAuth)).json();
    expect(tests.data.map((e: Json) => e.livemode)).toEqual([false, false, false, false]);
  });

  it('isolates organisations and key modes: anyone else gets 404, as for an unknown id', async () => {
    const owner = await t.newOrg();
    const other = await t.newOrg();
    const test = await t.operator.createKey({ orgId: owner.orgId, mode: 'test' });
    const testAuth = { authorization: `Bearer ${test.secret}` };
    const endpoint = (await call('POST', '/v1/webhook_endpoints', owner.auth, hook())).json();
    for (const auth of [other.auth, testAuth]) {
      for (const [method, url, payload] of [
        ['GET', `/v1/webhook_endpoints/${endpoint.id}`],
        ['PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { enabled: false }],
        ['POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`],
        ['DELETE', `/v1/webhook_endpoints/${endpoint.id}`],
      ] as const) {
        const response = await call(method, url, auth, payload);
        expect(response.statusCode, `${method} ${url}`).toBe(404);
        expect(response.json().error.code).toBe('resource_missing');
      }
      expect((await call('GET', '/v1/webhook_endpoints', auth)).json().data).toEqual([]);
    }
    expect((await call('GET', `/v1/webhook_endpoints/${endpoint.id}`, owner.auth)).statusCode).toBe(200);
  });

  it('needs the simulations.run scope and a valid request', async () => {
    const readOnly = await t.newOrg({ scopes: ['data.read'] });
    const refused = await call('POST', '/v1/webhook_endpoints', readOnly.auth, hook());
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('scope_missing');
    const { auth } = await t.newOrg();
    const unknownType = await call('POST', '/v1/webhook_endpoints', auth, {
      ...hook(),
      events: ['job.done'],
    });
    expect(unknownType.statusCode).toBe(400);
    const noEvents = await call('POST', '/v1/webhook_endpoints', auth, { ...hook(), events: [] });
    expect(noEvents.statusCode).toBe(400);
    const ftp = await call('POST', '/v1/webhook_endpoints', auth, { ...hook(), url: 'ftp://example.com/x' });
    expect(ftp.json().error.code).toBe('webhook_url_refused');
  });
});

describe('events', () => {
  let clockNow = NOW;
  const outbox = makeWebhookOutbox({ clock: () => clockNow, objects: eventObjects() });
  const write = (events: NewEvent[]) => t.db.sql.begin((tx) => outbox.write(tx, events));
  const event = (orgId: string, n: number, overrides: Partial<NewEvent> = {}): NewEvent => ({
    orgId,
    mode: 'live',
    type: n % 2 === 0 ? 'simulation.succeeded' : 'simulation.failed',
    objectId: `job_${orgId}_${n}`,
    object: { object: 'simulation_job', job_id: `job_${n}` },
    ...overrides,
  });

  it('lists the last 30 days newest first, with cursors and a type filter, for their owner only', async () => {
    const owner = await t.newOrg();
    const other = await t.newOrg();
    const test = await t.operator.createKey({ orgId: owner.orgId, mode: 'test' });
    const testAuth = { authorization: `Bearer ${test.secret}` };
    clockNow = new Date(NOW.getTime() - 31 * 24 * 3600 * 1000);
    await write([event(owner.orgId, 100)]);
    for (let n = 0; n < 5; n++) {
      clockNow = new Date(NOW.getTime() - (5 - n) * 60_000);
      await write([event(owner.orgId, n)]);
    }
    await write([event(owner.orgId, 9, { mode: 'test' }), event(other.orgId, 0)]);
    clockNow = NOW;

    const page = (await call('GET', '/v1/events?limit=3', owner.auth)).json();
    expect(page.url).toBe('/v1/events');
    expect(page.data.map((e: Json) => e.data.object.job_id)).toEqual(['job_4', 'job_3', 'job_2']);
    expect(page.has_more).toBe(true);
    const rest = (
      await call('GET', `/v1/events?limit=3&starting_after=${page.data[2].id}`, owner.auth)
    ).json();
    expect(rest.data.map((e: Json) => e.data.object.job_id)).toEqual(['job_1', 'job_0']);
    expect(rest.has_more).toBe(false);
    const failed = (await call('GET', '/v1/events?type=simulation.failed', owner.auth)).json();
    expect(failed.data.map((e: Json) => e.data.object.job_id)).toEqual(['job_3', 'job_1']);
    const first = page.data[0];
    expect(first).toMatchObject({ object: 'event', type: 'simulation.succeeded', livemode: true });
    expect(first.id).toMatch(/^evt_/);
    expect(first.created).toBe(Math.floor((NOW.getTime() - 60_000) / 1000));

    expect((await call('GET', `/v1/events/${first.id}`, owner.auth)).json()).toEqual(first);
    for (const auth of [other.auth, testAuth]) {
      const refused = await call('GET', `/v1/events/${first.id}`, auth);
      expect(refused.statusCode).toBe(404);
      expect(refused.json().error.code).toBe('resource_missing');
    }
    const tests = (await call('GET', '/v1/events', testAuth)).json();
    expect(tests.data.map((e: Json) => [e.livemode, e.data.object.job_id])).toEqual([[false, 'job_9']]);
    // The 31-day-old event is neither listed nor readable; the sweeper's chore deletes it.
    const [old] = await t.db.sql<{ id: string }[]>`
      SELECT id FROM webhook_events WHERE object_id = ${`job_${owner.orgId}_100`}`;
    expect((await call('GET', `/v1/events/${old!.id}`, owner.auth)).statusCode).toBe(404);
    await t.graph.sweeper.sweep(NOW);
    expect(await t.db.sql`SELECT 1 FROM webhook_events WHERE id = ${old!.id}`).toHaveLength(0);
  });

  it('fans out to the subscribed endpoints of the same mode; resends to one endpoint', async () => {
    const { auth, orgId } = await t.newOrg();
    const failedOnly = (
      await call('POST', '/v1/webhook_endpoints', auth, {
        url: 'http://127.0.0.1:9/a',
        events: ['simulation.failed'],
      })
    ).json();
    const succeeded = (await call('POST', '/v1/webhook_endpoints', auth, hook())).json();
    const [written] = await write([event(orgId, 0)]);
    const deliveries = await t.db.sql<{ endpointId: string; status: string }[]>`
      SELECT endpoint_id, status FROM webhook_deliveries WHERE event_id = ${written!.id}`;
    expect(deliveries).toEqual([{ endpointId: succeeded.id, status: 'pending' }]);

    // A resend to the other endpoint adds its delivery; one to the same endpoint brings the pending one forward.
    clockNow = new Date(NOW.getTime() + 60_000);
    t.setNow(clockNow);
    const resent = await call('POST', `/v1/events/${written!.id}/resend`, auth, {
      endpoint_id: failedOnly.id,
    });
    expect(resent.statusCode, resent.body).toBe(200);
    expect(resent.json().id).toBe(written!.id);
    await call('POST', `/v1/events/${written!.id}/resend`, auth, { endpoint_id: succeeded.id });
    const after = await t.db.sql<{ endpointId: string; nextAttemptAt: Date }[]>`
      SELECT endpoint_id, next_attempt_at FROM webhook_deliveries WHERE event_id = ${written!.id} ORDER BY id`;
    expect(after.map((d) => d.endpointId)).toEqual([succeeded.id, failedOnly.id]);
    expect(after.map((d) => d.nextAttemptAt.getTime())).toEqual([clockNow.getTime(), clockNow.getTime()]);
    const other = await t.newOrg();
    const foreign = (await call('POST', '/v1/webhook_endpoints', other.auth, hook())).json();
    const refused = await call('POST', `/v1/events/${written!.id}/resend`, auth, { endpoint_id: foreign.id });
    expect(refused.statusCode).toBe(404);
    t.setNow(NOW);
    clockNow = NOW;
  });
});

describe('credits.low', () => {
  it('is written when a charge takes the balance below the threshold the organisation set, once', async () => {
    const { auth, orgId } = await t.newOrg();
    expect((await call('GET', '/v1/credits/low_threshold', auth)).json()).toEqual({
      object: 'credits_low_threshold',
      threshold: null,
    });
    const balance = await t.services.ledger.balance(orgId);
    const remaining = (balance.monthlyRemaining + balance.topupRemaining) / 1000;
    const set = await call('PUT', '/v1/credits/low_threshold', auth, { threshold: remaining - 1.5 });
    expect(set.json().threshold).toBe(remaining - 1.5);
    const charge = (milli: number) => t.services.ledger.chargeDirect(orgId, milli, { requestId: 'req_low' });
    await charge(1000);
    const events = async () => (await call('GET', '/v1/events?type=credits.low', auth)).json().data;
    expect(await events()).toEqual([]);
    await charge(1000);
    const [low] = await events();
    expect(low.data.object).toEqual({
      object: 'credits_low',
      balance: remaining - 2,
      threshold: remaining - 1.5,
    });
    // Already below: another charge writes nothing more.
    await charge(1000);
    expect(await events()).toHaveLength(1);
    await call('PUT', '/v1/credits/low_threshold', auth, { threshold: null });
    await charge(1000);
    expect(await events()).toHaveLength(1);
  });
});
