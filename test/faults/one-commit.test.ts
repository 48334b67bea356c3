// Fault test: a cache hit's submission commits once (admission, hold, job, settlement, delivery and the
// fixture summary in one transaction, docs/decisions.md §6). The connection is lost at each statement of
// that transaction before the statement reaches the server, and at its last write and its commit after
// the server ran them but before the answer came back. Every time: the answer is a 200 or a 503 with retry advice, never a 500;
// the organisation is charged nothing or charged once, never half (a hold without its charge, a job
// without its delivery); the ledger balances; and a retry with the same Idempotency-Key ends charged once.
// The service reaches its database through a proxy that reads the wire protocol
// (test/helpers/statement-proxy.ts). Real PostgreSQL only: PGlite's one connection cannot be lost.
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { FX } from '../fixtures/small-feed.js';
import type { TestContext } from '../helpers/app.js';
import { type TestDatabase, usingServer } from '../helpers/database.js';
import { type FaultService, startFaultService } from '../helpers/fault-service.js';
import type { CutMoment, StatementProxy } from '../helpers/statement-proxy.js';

if (!usingServer) {
  console.info('one-commit faults: skipped, they need a PostgreSQL server (set DATABASE_URL)');
}

const REQUEST = { fixture_id: FX.upcoming, draws: 300 };

let service: FaultService;
let t: TestContext;
let proxy: StatementProxy;
let direct: TestDatabase;
let admin: postgres.Sql;
let freshOrg: FaultService['freshOrg'];

beforeAll(async () => {
  if (!usingServer) return;
  service = await startFaultService({ worker: true });
  ({ t, proxy, direct, admin, freshOrg } = service);
  // The shared result every later request hits.
  const first = await t.newOrg();
  const warm = await t.app.inject({
    method: 'POST',
    url: '/v1/simulations',
    headers: first.auth,
    payload: { ...REQUEST, wait_seconds: 25 },
  });
  expect(warm.statusCode, warm.body).toBe(200);
  await t.stopWorker();
}, 120_000);

afterAll(async () => {
  if (!usingServer) return;
  await service.close();
});

function submit(org: { auth: { authorization: string } }, key: string) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/simulations',
    headers: { ...org.auth, 'idempotency-key': key },
    payload: REQUEST,
  });
}

/** What the organisation's money and work look like, read over a connection of the test's own. */
async function moneyOf(orgId: string) {
  const [row] = await admin<
    {
      charges: number;
      holds: number;
      pendingHolds: number;
      jobs: number;
      delivered: number;
      deliveries: number;
    }[]
  >`
    SELECT (SELECT count(*)::int FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'charge') AS charges,
           (SELECT count(*)::int FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'hold') AS holds,
           (SELECT count(*)::int FROM credit_holds WHERE org_id = ${orgId} AND status = 'pending') AS "pendingHolds",
           (SELECT count(*)::int FROM jobs WHERE org_id = ${orgId}) AS jobs,
           (SELECT count(*)::int FROM jobs WHERE org_id = ${orgId} AND status = 'delivered') AS delivered,
           (SELECT count(*)::int FROM deliveries WHERE org_id = ${orgId}) AS deliveries`;
  const { balanced } = await makeLedger({ sql: direct.sql }).checkBalanced(orgId);
  return { ...row!, balanced };
}

/** Charged once with everything beside it, or nothing at all. */
function expectWholeOrNothing(money: Awaited<ReturnType<typeof moneyOf>>, where: string) {
  expect(money.pendingHolds, where).toBe(0);
  if (money.charges === 0) {
    expect({ holds: money.holds, jobs: money.jobs, deliveries: money.deliveries }, where).toEqual({
      holds: 0,
      jobs: 0,
      deliveries: 0,
    });
  } else {
    expect(
      { charges: money.charges, holds: money.holds, jobs: money.jobs, delivered: money.delivered },
      where,
    ).toEqual({ charges: 1, holds: 1, jobs: 1, delivered: 1 });
    expect(money.deliveries, where).toBe(1);
  }
}

/** The statements of the cache hit's one transaction, as the dry run met them: [BEGIN index, COMMIT index]. */
function mergedTransaction(statements: string[]): [number, number] {
  const delivery = statements.findIndex((text) => /insert into deliveries/i.test(text));
  expect(delivery, statements.join('\n')).toBeGreaterThan(0);
  let begin = delivery;
  while (begin >= 0 && !/^\s*begin/i.test(statements[begin]!)) begin--;
  let commit = delivery;
  while (commit < statements.length && !/^\s*commit/i.test(statements[commit]!)) commit++;
  expect(begin).toBeGreaterThanOrEqual(0);
  expect(commit).toBeLessThan(statements.length);
  return [begin, commit];
}

describe.skipIf(!usingServer)('a cache hit commits once', () => {
  it('one transaction holds admission, hold, job, settlement, delivery and summary', async () => {
    const org = await freshOrg();
    proxy.mark();
    const response = await submit(org, 'dry-run');
    expect(response.statusCode, response.body).toBe(200);
    const statements = proxy.statements();
    const [begin, commit] = mergedTransaction(statements);
    const inside = statements.slice(begin, commit + 1).join('\n');
    for (const table of ['usage_days', 'credit_ledger', 'jobs', 'idempotency_keys', 'deliveries']) {
      expect(inside, table).toMatch(new RegExp(`(insert into|update) ${table}`, 'i'));
    }
    expect(inside).toMatch(/fixture_summaries/);
    // Only that one commit writes: every other transaction of the request is the idempotency record's.
    // The money and the work move in that one commit: no other statement of the request touches them.
    const outside = [...statements.slice(0, begin), ...statements.slice(commit + 1)];
    for (const text of outside) {
      expect(text).not.toMatch(
        /(insert into|update) (usage_days|credit_|jobs|deliveries|fixture_summaries)/i,
      );
    }
    expectWholeOrNothing(await moneyOf(org.orgId), 'dry run');
  });

  it('the connection lost at each statement of it: charged nothing or once, never half; a retry charges once', async () => {
    const dry = await freshOrg();
    proxy.mark();
    expect((await submit(dry, 'dry-run-2')).statusCode).toBe(200);
    const statements = proxy.statements();
    const [begin, commit] = mergedTransaction(statements);
    const seen = { charged: 0, nothing: 0 };
    for (let index = begin; index <= commit; index++) {
      // Before every statement; after the server ran it (its answer lost) for the last write and the
      // commit, where the transaction may have committed unseen.
      const moments: CutMoment[] = index >= commit - 1 ? ['before', 'after'] : ['before'];
      for (const moment of moments) {
        const where = `${moment} statement ${index - begin}: ${statements[index]!.slice(0, 80)}`;
        const org = await freshOrg();
        proxy.mark();
        proxy.cutAt(index, moment);
        const response = await submit(org, 'cut');
        expect(proxy.cutStatement(), where).toBe(statements[index]);
        expect([200, 503], `${where}: ${response.body}`).toContain(response.statusCode);
        if (response.statusCode === 503) {
          expect(['settlement_unknown', 'dependency_unavailable'], where).toContain(
            response.json().error.code,
          );
          expect(Number(response.headers['retry-after']), where).toBeGreaterThan(0);
        }
        const money = await moneyOf(org.orgId);
        expectWholeOrNothing(money, where);
        expect(money.balanced, where).toBe(true);
        seen[money.charges === 0 ? 'nothing' : 'charged']++;

        // The same Idempotency-Key at once: the first attempt has ended, so its key is free (or replays
        // its answer), never still in flight (docs/decisions.md §7); one charge in all.
        const retry = await submit(org, 'cut');
        expect(retry.statusCode, `${where} retry: ${retry.body}`).toBe(200);
        const after = await moneyOf(org.orgId);
        expectWholeOrNothing(after, `${where} retry`);
        expect(after.charges, `${where} retry`).toBe(1);
        expect(after.balanced, `${where} retry`).toBe(true);
      }
    }
    // Lost before its commit was answered, the transaction had committed: the one "charged" case.
    expect(seen.charged).toBeGreaterThan(0);
    expect(seen.nothing).toBeGreaterThan(0);
  }, 300_000);
});
