// Issue 51's reproducer at a small scale, with real receivers on 127.0.0.1: an organisation whose 16
// endpoints accept connections and never answer holds none of another organisation's deliveries back
// (src/webhooks/delivery.ts keeps its slots busy one delivery at a time, the claim is fair per
// organisation and endpoint); and an endpoint that does not answer has its breaker opened: no attempt
// until its back-off has passed, then one at a time until one is answered.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventObjects } from '../../src/http/views/webhooks.js';
import { newId } from '../../src/ids.js';
import {
  makeWebhookDeliverer,
  PER_ORGANISATION_IN_FLIGHT,
  RETRY_DELAY_FIRST_MS,
} from '../../src/webhooks/delivery.js';
import { insertEndpoint } from '../../src/webhooks/endpoint-store.js';
import { makeWebhookOutbox } from '../../src/webhooks/outbox.js';
import { makeSender } from '../../src/webhooks/sender.js';
import { insertOrg } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { type Receiver, startReceiver } from './receiver.js';

/** A receiver that accepts every request and never answers, unless told to answer 200 from now on. */
interface Sink {
  base: string;
  /** The path of every request that arrived. */
  arrived: string[];
  /** Requests whose connection closed before an answer (the sender gave up). */
  abandoned: number;
  answering: boolean;
  until(n: number): Promise<void>;
  close(): Promise<void>;
}

async function startSink(): Promise<Sink> {
  const held: ServerResponse[] = [];
  const sink: Sink = {
    base: '',
    arrived: [],
    abandoned: 0,
    answering: false,
    async until(n) {
      for (let i = 0; i < 4000 && sink.arrived.length < n; i++) await new Promise((r) => setTimeout(r, 5));
      if (sink.arrived.length < n) throw new Error(`the sink got ${sink.arrived.length} of ${n} requests`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      sink.arrived.push(request.url ?? '');
      if (sink.answering) return void response.end();
      held.push(response);
      response.on('close', () => {
        if (!response.writableEnded) sink.abandoned++;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sink.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sink;
}

let db: TestDatabase;
let sink: Sink;
let healthy: Receiver;
beforeAll(async () => {
  db = await createTestDatabase();
  sink = await startSink();
  healthy = await startReceiver();
});
afterAll(async () => {
  await sink.close();
  await healthy.close();
  await db.close();
});

async function endpoint(orgId: string, url: string, now: Date): Promise<string> {
  const id = newId('we');
  await db.sql.begin((tx) =>
    insertEndpoint(
      tx,
      { orgId, mode: 'live' },
      { id, url, description: null, events: ['simulation.succeeded'], secret: 'whsec_test' },
      16,
      now,
    ),
  );
  return id;
}

describe("a hog's receivers that never answer", () => {
  it("hold back none of another organisation's deliveries", async () => {
    const clock = () => new Date();
    const hog = await insertOrg(db.sql);
    const victim = await insertOrg(db.sql);
    for (let i = 0; i < 16; i++) await endpoint(hog, `${sink.base}/hog/${i}`, clock());
    await endpoint(victim, healthy.url, clock());
    const deliverer = makeWebhookDeliverer({
      sql: db.sql,
      clock,
      // Longer than the test: every request of the hog stays open while the victim's event goes.
      send: makeSender({ publicOnly: false }, 120_000),
      workerId: 'fair',
      concurrency: 16,
    });
    const outbox = makeWebhookOutbox({ clock, objects: eventObjects(), onCommitted: deliverer.wake });
    const succeeded = (orgId: string) => {
      const objectId = newId('job');
      return {
        orgId,
        mode: 'live' as const,
        type: 'simulation.succeeded' as const,
        objectId,
        object: { objectId },
      };
    };
    deliverer.start();
    try {
      // 3 events to 16 endpoints: 48 deliveries, older than the victim's, each of which would hang.
      await db.sql.begin((tx) => outbox.write(tx, [succeeded(hog), succeeded(hog), succeeded(hog)]));
      await sink.until(PER_ORGANISATION_IN_FLIGHT);
      await db.sql.begin((tx) => outbox.write(tx, [succeeded(victim)]));
      await healthy.until(1);
      // Delivered while every request of the hog still hangs: it held at most its share of the slots,
      // one per endpoint (round-robin between its endpoints), and none was given up.
      expect(sink.abandoned).toBe(0);
      expect(sink.arrived).toHaveLength(PER_ORGANISATION_IN_FLIGHT);
      expect(new Set(sink.arrived).size).toBe(PER_ORGANISATION_IN_FLIGHT);
      expect(JSON.parse(healthy.received[0]!.body).type).toBe('simulation.succeeded');
    } finally {
      await deliverer.stop({ timeoutMs: 10 });
    }
  }, 60_000);
});

describe('the breaker of an endpoint that does not answer', () => {
  it('opens after an attempt without an answer, then lets one attempt through at a time until one is answered', async () => {
    let now = new Date('2026-03-10T12:00:00Z');
    const clock = () => now;
    const org = await insertOrg(db.sql);
    const other = await insertOrg(db.sql);
    await endpoint(org, `${sink.base}/dead`, now);
    await endpoint(other, healthy.url, now);
    await db.sql`DELETE FROM webhook_deliveries`;
    const outbox = makeWebhookOutbox({ clock, objects: eventObjects() });
    const event = (orgId: string) => ({
      orgId,
      mode: 'live' as const,
      type: 'simulation.succeeded' as const,
      objectId: newId('job'),
      object: {},
    });
    await db.sql.begin((tx) =>
      outbox.write(
        tx,
        [1, 2, 3, 4, 5, 6].map(() => event(org)),
      ),
    );
    await db.sql.begin((tx) => outbox.write(tx, [event(other)]));
    const deliverer = makeWebhookDeliverer({
      sql: db.sql,
      clock,
      // A short time limit so that the test does not wait 10 s for each attempt.
      send: makeSender({ publicOnly: false }, 200),
      workerId: 'breaker',
      random: () => 1,
    });
    const from = sink.arrived.length;
    const sent = () => sink.arrived.length - from;
    // Four at once to the endpoint (its limit), all unanswered; the other organisation's goes through.
    expect(await deliverer.deliverDue()).toEqual({ delivered: 1, failed: 4 });
    expect(sent()).toBe(4);
    // Open: its two deliveries never tried are due, and not sent.
    expect(await deliverer.deliverDue()).toEqual({ delivered: 0, failed: 0 });
    // After the back-off (a minute, random() = 1): one attempt, unanswered: open again, for two minutes.
    now = new Date(now.getTime() + RETRY_DELAY_FIRST_MS);
    expect(await deliverer.deliverDue()).toEqual({ delivered: 0, failed: 1 });
    expect(sent()).toBe(5);
    now = new Date(now.getTime() + RETRY_DELAY_FIRST_MS);
    expect(await deliverer.deliverDue()).toEqual({ delivered: 0, failed: 0 });
    // The receiver answers again: one attempt, answered, closes the breaker; then four at once.
    sink.answering = true;
    now = new Date(now.getTime() + RETRY_DELAY_FIRST_MS);
    expect(await deliverer.deliverDue()).toEqual({ delivered: 1, failed: 0 });
    expect(await deliverer.deliverDue()).toEqual({ delivered: 4, failed: 0 });
    expect(sent()).toBe(10);
  }, 60_000);
});
