// Fault test: a projection's delivery (the result path settling its hold, recording the delivery and
// marking the job delivered in one transaction, docs/decisions.md §12) loses its connection at each
// statement of that transaction before the statement reaches the server, and at its last write and its
// commit after the server ran them. Every time: a 200 or a 503 with retry advice, never a 500; the hold,
// the delivery and the job move together or not at all; the ledger balances; reading the result path
// again ends charged exactly once. The service reaches its database through the wire-protocol proxy
// (test/helpers/statement-proxy.ts); the projection runs beside it on a connection of its own.
// Real PostgreSQL only: PGlite's one connection cannot be lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { makeProjectionRunner } from '../../src/projections/projection-worker.js';
import { simulateSeasons } from '../../src/projections/season-sampler.js';
import { usingServer } from '../helpers/database.js';
import { type FaultService, startFaultService } from '../helpers/fault-service.js';
import type { CutMoment } from '../helpers/statement-proxy.js';

if (!usingServer) {
  console.info('projection delivery faults: skipped, they need a PostgreSQL server (set DATABASE_URL)');
}

let service: FaultService;

beforeAll(async () => {
  if (!usingServer) return;
  service = await startFaultService({ worker: false });
}, 120_000);

afterAll(async () => {
  if (!usingServer) return;
  await service.close();
});

/** Seasons of the next job: each job its own, since a repeat would be served from a stored table. */
let nextSeasons = 1000;

/** A live projection job, run to `succeeded` on the test's own connection; its result path. */
async function succeededJob(org: { auth: { authorization: string } }): Promise<string> {
  const { t, direct } = service;
  const response = await t.app.inject({
    method: 'POST',
    url: '/v1/projections',
    headers: org.auth,
    payload: { competition_id: 1, seasons: nextSeasons++, wait_seconds: 0 },
  });
  expect(response.statusCode, response.body).toBe(202);
  const run = makeProjectionRunner({
    sql: direct.sql,
    ledger: makeLedger({ sql: direct.sql }),
    runSeasons: async (input, seasons, seed) => simulateSeasons(input, seasons, seed),
    clock: () => new Date(),
    workerId: 'fault-test',
    holdTtlSeconds: 3600,
  });
  expect(await run()).toBe(true);
  return response.json().result_url;
}

async function moneyOf(orgId: string) {
  const [row] = await service.admin<
    { charges: number; pendingHolds: number; delivered: number; deliveries: number }[]
  >`
    SELECT (SELECT count(*)::int FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'charge') AS charges,
           (SELECT count(*)::int FROM credit_holds WHERE org_id = ${orgId} AND status = 'pending') AS "pendingHolds",
           (SELECT count(*)::int FROM projection_jobs WHERE org_id = ${orgId} AND status = 'delivered') AS delivered,
           (SELECT count(*)::int FROM projections WHERE org_id = ${orgId}) AS deliveries`;
  const { balanced } = await makeLedger({ sql: service.direct.sql }).checkBalanced(orgId);
  return { ...row!, balanced };
}

/** Delivered with its charge, or untouched with its hold still pending: never a half. */
function expectWholeOrNothing(money: Awaited<ReturnType<typeof moneyOf>>, where: string) {
  expect(money.balanced, where).toBe(true);
  if (money.charges === 0) {
    expect(
      { pending: money.pendingHolds, delivered: money.delivered, deliveries: money.deliveries },
      where,
    ).toEqual({
      pending: 1,
      delivered: 0,
      deliveries: 0,
    });
  } else {
    expect(
      {
        charges: money.charges,
        pending: money.pendingHolds,
        delivered: money.delivered,
        deliveries: money.deliveries,
      },
      where,
    ).toEqual({
      charges: 1,
      pending: 0,
      delivered: 1,
      deliveries: 1,
    });
  }
}

/** The delivery transaction's statements as the dry run met them: [BEGIN index, COMMIT index]. */
function deliveryTransaction(statements: string[]): [number, number] {
  const delivery = statements.findIndex((text) => /insert into projections/i.test(text));
  expect(delivery, statements.join('\n')).toBeGreaterThan(0);
  let begin = delivery;
  while (begin >= 0 && !/^\s*begin/i.test(statements[begin]!)) begin--;
  let commit = delivery;
  while (commit < statements.length && !/^\s*commit/i.test(statements[commit]!)) commit++;
  return [begin, commit];
}

describe.skipIf(!usingServer)('a projection delivery commits once', () => {
  it('the connection lost at each statement of it: charged nothing or once, never half; reading again charges once', async () => {
    const { t, proxy } = service;
    const get = (org: { auth: { authorization: string } }, url: string) =>
      t.app.inject({ method: 'GET', url, headers: org.auth });
    const dry = await service.freshOrg();
    const dryUrl = await succeededJob(dry);
    proxy.mark();
    expect((await get(dry, dryUrl)).statusCode).toBe(200);
    const statements = proxy.statements();
    const [begin, commit] = deliveryTransaction(statements);
    expect(statements.slice(begin, commit + 1).join('\n')).toMatch(/update projection_jobs/i);
    const seen = { charged: 0, nothing: 0 };
    for (let index = begin; index <= commit; index++) {
      const moments: CutMoment[] = index >= commit - 1 ? ['before', 'after'] : ['before'];
      for (const moment of moments) {
        const where = `${moment} statement ${index - begin}: ${statements[index]!.slice(0, 80)}`;
        const org = await service.freshOrg();
        const url = await succeededJob(org);
        proxy.mark();
        proxy.cutAt(index, moment);
        const response = await get(org, url);
        expect(proxy.cutStatement(), where).toBe(statements[index]);
        expect([200, 503], `${where}: ${response.body}`).toContain(response.statusCode);
        if (response.statusCode === 503) {
          expect(['settlement_unknown', 'dependency_unavailable'], where).toContain(
            response.json().error.code,
          );
          expect(
            response.json().error.recovery.result_url ?? response.json().error.recovery.job_id,
            where,
          ).toBeTruthy();
        }
        const money = await moneyOf(org.orgId);
        expectWholeOrNothing(money, where);
        seen[money.charges === 0 ? 'nothing' : 'charged']++;
        const again = await get(org, url);
        expect(again.statusCode, `${where} again: ${again.body}`).toBe(200);
        const after = await moneyOf(org.orgId);
        expectWholeOrNothing(after, `${where} again`);
        expect(after.charges, `${where} again`).toBe(1);
      }
    }
    expect(seen.charged).toBeGreaterThan(0);
    expect(seen.nothing).toBeGreaterThan(0);
  }, 300_000);
});
