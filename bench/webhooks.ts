// Webhooks (issue 29): 1,000 events, each written in a transaction of its own as a job's end writes it
// (src/webhooks/outbox.ts), delivered by a deliverer (src/webhooks/delivery.ts) to a receiver on
// 127.0.0.1: time from the change's commit to the receiver's read of the request, p50 and p99. The
// reference is a bare POST of the same body to the same receiver from this process. PGlite unless
// DATABASE_URL names a server. Then a victim's event beside a hog (bench/webhook-hog.ts, issue 51).
import { mkdtempSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeLedger } from '../src/billing/ledger.js';
import { openDatabase } from '../src/db/connection.js';
import { runMigrations } from '../src/db/migrations.js';
import { eventObjects } from '../src/http/views/webhooks.js';
import { makeOperator } from '../src/operations/operator.js';
import { makeWebhookDeliverer } from '../src/webhooks/delivery.js';
import { insertEndpoint } from '../src/webhooks/endpoint-store.js';
import { makeWebhookOutbox } from '../src/webhooks/outbox.js';
import { makeSender } from '../src/webhooks/sender.js';
import { type BenchRow, percentile } from './report.js';
import { benchWebhookHog } from './webhook-hog.js';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1000);

/** A receiver that notes when each event id arrived. */
async function startReceiver() {
  const arrived = new Map<string, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const id = /"id":"(evt_[0-9A-Za-z]+)"/.exec(body)?.[1];
      if (id && !arrived.has(id)) arrived.set(id, performance.now());
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, arrived, close: () => server.close() };
}

/** The reference: POSTs of an event-sized body to the receiver, one at a time; their latencies sorted. */
async function barePosts(url: string, n: number, body: string): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const req = request(url, { method: 'POST', agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(body);
    });
    latencies.push(performance.now() - t0);
  }
  return latencies.sort((a, b) => a - b);
}

export async function benchWebhooks(): Promise<BenchRow[]> {
  const db = await openDatabase({
    databaseUrl: process.env.DATABASE_URL,
    dataDir: mkdtempSync(path.join(tmpdir(), 'matchsim-bench-hooks-')),
  });
  await runMigrations(db.sql);
  const clock = () => new Date();
  const operator = makeOperator({ sql: db.sql, ledger: makeLedger({ sql: db.sql, clock }), clock });
  const org = await operator.createOrg({ name: 'Benchmark webhooks', plan: 'pro' });
  const receiver = await startReceiver();
  const owner = { orgId: org.id, mode: 'live' as const };
  await db.sql.begin((tx) =>
    insertEndpoint(
      tx,
      owner,
      {
        id: `we_bench_${org.id}`,
        url: receiver.url,
        description: null,
        events: ['simulation.succeeded'],
        secret: 'whsec_bench',
      },
      16,
      clock(),
    ),
  );
  const deliverer = makeWebhookDeliverer({
    sql: db.sql,
    clock,
    send: makeSender({ publicOnly: false }),
    workerId: 'bench',
  });
  const outbox = makeWebhookOutbox({ clock, objects: eventObjects(), onCommitted: () => deliverer.wake() });
  deliverer.start();
  const committed = new Map<string, number>();
  const object = { object: 'simulation_job', job_id: 'job_bench', status: 'succeeded' };
  for (let i = 0; i < EVENTS; i++) {
    const [event] = await db.sql.begin((tx) =>
      outbox.write(tx, [{ ...owner, type: 'simulation.succeeded', objectId: `job_bench_${i}`, object }]),
    );
    committed.set(event!.id, performance.now());
  }
  for (let i = 0; i < 6000 && receiver.arrived.size < EVENTS; i++)
    await new Promise((r) => setTimeout(r, 10));
  await deliverer.stop();
  const latencies = [...committed].map(([id, at]) => (receiver.arrived.get(id) ?? Number.NaN) - at);
  const delivered = latencies.filter((ms) => Number.isFinite(ms)).sort((a, b) => a - b);
  const reference = await barePosts(
    receiver.url,
    200,
    JSON.stringify({ id: 'evt_reference', data: { object } }),
  );
  receiver.close();
  const hog = await benchWebhookHog(db, operator);
  await db.close();
  const note = `database: ${db.kind}; ${EVENTS} events written back to back, ${delivered.length} delivered`;
  const bare = (p: number) => ({ name: `bare POST to the receiver p${p}`, value: percentile(reference, p) });
  return [
    {
      group: 'webhooks',
      name: 'change → delivery p50',
      value: percentile(delivered, 50),
      unit: 'ms',
      reference: bare(50),
      note,
    },
    {
      group: 'webhooks',
      name: 'change → delivery p99',
      value: percentile(delivered, 99),
      unit: 'ms',
      reference: bare(99),
    },
    ...hog,
  ];
}
