// Webhooks beside a hog (issue 51): an organisation registers 16 endpoints on a receiver that accepts
// connections and never answers (or answers after 9 s), and 11 of its events (a 10-item batch's: each
// job and the batch) are due, 176 deliveries of which each may hold a slot for the sender's 10 s; 4 s
// later another organisation writes one event to a healthy receiver. The figure: that event's time from
// its commit to the receiver, the reference its time with no hog. The goal: within 5 s (it took
// 107 s when the deliverer claimed the oldest deliveries whoever they belonged to).
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '../src/db/connection.js';
import { eventObjects } from '../src/http/views/webhooks.js';
import { newId } from '../src/ids.js';
import type { Operator } from '../src/operations/operator.js';
import { makeWebhookDeliverer } from '../src/webhooks/delivery.js';
import { insertEndpoint } from '../src/webhooks/endpoint-store.js';
import { makeWebhookOutbox } from '../src/webhooks/outbox.js';
import { makeSender } from '../src/webhooks/sender.js';
import type { NewEvent } from '../src/webhooks/types.js';
import type { BenchRow } from './report.js';

const HOG_ENDPOINTS = 16;
const HOG_EVENTS = 11;
const VICTIM_AFTER_MS = 4000;

/** A receiver that answers after `answerAfterMs` (never when null); resolves `arrived(id)` per event id. */
async function startSlowReceiver(answerAfterMs: number | null) {
  const arrivals = new Map<string, (at: number) => void>();
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const id = /"id":"(evt_[0-9A-Za-z]+)"/.exec(body)?.[1] ?? '';
      arrivals.get(id)?.(performance.now());
      if (answerAfterMs === null) held.push(res);
      else setTimeout(() => res.end(), answerAfterMs).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const arrived = (id: string) => new Promise<number>((resolve) => arrivals.set(id, resolve));
  const close = () => {
    server.closeAllConnections();
    server.close();
  };
  return { url, arrived, close };
}

async function register(db: Database, orgId: string, url: string): Promise<void> {
  await db.sql.begin((tx) =>
    insertEndpoint(
      tx,
      { orgId, mode: 'live' },
      { id: newId('we'), url, description: null, events: ['simulation.succeeded'], secret: 'whsec_bench' },
      16,
      new Date(),
    ),
  );
}

/** The victim's event latency in ms, beside a hog whose receivers answer after `answerAfterMs` (or never). */
async function victimLatency(
  db: Database,
  operator: Operator,
  hog: { answerAfterMs: number | null } | null,
): Promise<number> {
  const clock = () => new Date();
  const hogOrg = await operator.createOrg({ name: 'Benchmark hog', plan: 'pro' });
  const victim = await operator.createOrg({ name: 'Benchmark victim', plan: 'pro' });
  const slow = await startSlowReceiver(hog?.answerAfterMs ?? null);
  const healthy = await startSlowReceiver(0);
  for (let i = 0; i < (hog ? HOG_ENDPOINTS : 0); i++) await register(db, hogOrg.id, slow.url);
  await register(db, victim.id, healthy.url);
  const deliverer = makeWebhookDeliverer({
    sql: db.sql,
    clock,
    send: makeSender({ publicOnly: false }),
    workerId: 'bench-hog',
  });
  const outbox = makeWebhookOutbox({ clock, objects: eventObjects(), onCommitted: deliverer.wake });
  const event = (orgId: string): NewEvent => {
    const objectId = newId('job');
    return { orgId, mode: 'live', type: 'simulation.succeeded', objectId, object: { objectId } };
  };
  deliverer.start();
  await db.sql.begin((tx) =>
    outbox.write(
      tx,
      Array.from({ length: HOG_EVENTS }, () => event(hogOrg.id)),
    ),
  );
  await sleep(VICTIM_AFTER_MS);
  const [written] = await db.sql.begin((tx) => outbox.write(tx, [event(victim.id)]));
  const committed = performance.now();
  const arrived = await Promise.race([healthy.arrived(written!.id), sleep(180_000, Number.NaN)]);
  await deliverer.stop({ timeoutMs: 0 });
  slow.close();
  healthy.close();
  // Disabled, not deleted: a delete's cascade to the deliveries would deadlock with the outcomes still
  // being recorded (delivery row, then endpoint row).
  await db.sql`UPDATE webhook_endpoints SET enabled = false WHERE org_id IN (${hogOrg.id}, ${victim.id})`;
  return arrived - committed;
}

export async function benchWebhookHog(db: Database, operator: Operator): Promise<BenchRow[]> {
  const alone = await victimLatency(db, operator, null);
  const note = `${HOG_ENDPOINTS} hog endpoints, ${HOG_EVENTS * HOG_ENDPOINTS} hog deliveries due ${VICTIM_AFTER_MS / 1000} s before; database: ${db.kind}`;
  const reference = { name: 'the same event with no hog', value: alone };
  const row = (name: string, value: number): BenchRow => ({
    group: 'webhooks',
    name,
    value,
    unit: 'ms',
    reference,
    note,
  });
  return [
    row(
      "a victim's event beside a hog that never answers",
      await victimLatency(db, operator, { answerAfterMs: null }),
    ),
    row(
      "a victim's event beside a hog answering after 9 s",
      await victimLatency(db, operator, { answerAfterMs: 9000 }),
    ),
  ];
}
