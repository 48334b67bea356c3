// Fault test: a batch reserves set-based (docs/api.md §4.5: the whole batch is held or nothing is). Its
// submitting transaction writes the admission, every hold and its ledger row, the batch and its jobs in a
// fixed number of statements, whatever the number of items. The connection is lost at each statement of
// that transaction before the statement reaches the server, and at its last write and its commit after
// the server ran them but before the answer came back. Every time: the answer is a 202 or a 503 with retry
// advice, never a 500; the batch is held whole or not at all (no batch, hold, ledger row or job of it
// otherwise); the ledger balances; and a retry with the same Idempotency-Key ends with one batch held whole.
// The service reaches its database through a proxy that reads the wire protocol
// (test/helpers/statement-proxy.ts). Real PostgreSQL only: PGlite's one connection cannot be lost.
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { FX, NOW } from '../fixtures/small-feed.js';
import type { TestContext } from '../helpers/app.js';
import { type TestDatabase, usingServer } from '../helpers/database.js';
import { type FaultService, startFaultService } from '../helpers/fault-service.js';
import type { CutMoment, StatementProxy } from '../helpers/statement-proxy.js';

if (!usingServer) {
  console.info('batch reservation faults: skipped, they need a PostgreSQL server (set DATABASE_URL)');
}

// Three runnable items and one that cannot run (it costs nothing and has no job).
const REQUEST = {
  draws: 300,
  fixtures: [
    { fixture_id: FX.upcoming },
    { fixture_id: FX.unlabelled },
    { fixture_id: FX.announced },
    { fixture_id: 999_999 },
  ],
};
const RUNNABLE = 3;

let service: FaultService;
let t: TestContext;
let proxy: StatementProxy;
let direct: TestDatabase;
let admin: postgres.Sql;
let freshOrg: FaultService['freshOrg'];

beforeAll(async () => {
  if (!usingServer) return;
  // No worker: the jobs stay queued, so what the submission wrote is what the test reads.
  service = await startFaultService({ worker: false });
  ({ t, proxy, direct, admin, freshOrg } = service);
}, 120_000);

afterAll(async () => {
  if (!usingServer) return;
  await service.close();
});

function submit(org: { auth: { authorization: string } }, key: string) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/simulations/batch',
    headers: { ...org.auth, 'idempotency-key': key },
    payload: REQUEST,
  });
}

/** The organisation's batches, holds and jobs, read over a connection of the test's own. */
async function heldOf(orgId: string) {
  const [row] = await admin<
    { batches: number; holds: number; holdEntries: number; pendingMilli: number; jobs: number }[]
  >`
    SELECT (SELECT count(*)::int FROM batches WHERE org_id = ${orgId}) AS batches,
           (SELECT count(*)::int FROM credit_holds WHERE org_id = ${orgId} AND status = 'pending') AS holds,
           (SELECT count(*)::int FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'hold') AS "holdEntries",
           (SELECT COALESCE(sum(amount), 0)::int FROM credit_holds WHERE org_id = ${orgId}) AS "pendingMilli",
           (SELECT count(*)::int FROM jobs WHERE org_id = ${orgId}) AS jobs`;
  const { balanced } = await makeLedger({ sql: direct.sql }).checkBalanced(orgId);
  return { ...row!, balanced };
}

/** The whole batch held (one batch, a hold, its ledger row and a job per runnable item), or nothing. */
function expectWholeOrNothing(held: Awaited<ReturnType<typeof heldOf>>, where: string) {
  expect(held.balanced, where).toBe(true);
  const { batches, holds, holdEntries, jobs } = held;
  if (batches === 0)
    expect({ holds, holdEntries, jobs }, where).toEqual({ holds: 0, holdEntries: 0, jobs: 0 });
  else {
    expect({ batches, holds, holdEntries, jobs }, where).toEqual({
      batches: 1,
      holds: RUNNABLE,
      holdEntries: RUNNABLE,
      jobs: RUNNABLE,
    });
  }
}

/** The submitting transaction, as the dry run met it: [BEGIN index, COMMIT index]. */
function submittingTransaction(statements: string[]): [number, number] {
  const batch = statements.findIndex((text) => /insert into batches/i.test(text));
  expect(batch, statements.join('\n')).toBeGreaterThan(0);
  let begin = batch;
  while (begin >= 0 && !/^\s*begin/i.test(statements[begin]!)) begin--;
  let commit = batch;
  while (commit < statements.length && !/^\s*commit/i.test(statements[commit]!)) commit++;
  expect(begin).toBeGreaterThanOrEqual(0);
  expect(commit).toBeLessThan(statements.length);
  return [begin, commit];
}

describe.skipIf(!usingServer)('a batch is held whole or not at all', () => {
  it('its submitting transaction has the same statements for 3 items as for 1', async () => {
    const one = await freshOrg();
    proxy.mark();
    const single = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations/batch',
      headers: { ...one.auth, 'idempotency-key': 'count' },
      payload: { draws: 300, fixtures: [REQUEST.fixtures[0]] },
    });
    expect(single.statusCode, single.body).toBe(202);
    const [b1, c1] = submittingTransaction(proxy.statements());
    const three = await freshOrg();
    proxy.mark();
    expect((await submit(three, 'count')).statusCode).toBe(202);
    const statements = proxy.statements();
    const [b3, c3] = submittingTransaction(statements);
    expect(c3 - b3, statements.slice(b3, c3 + 1).join('\n')).toBe(c1 - b1);
    expectWholeOrNothing(await heldOf(three.orgId), 'dry run');
    expect((await heldOf(three.orgId)).batches).toBe(1);
  });

  it('the connection lost at each statement of it: all of the batch held or none; a retry holds it once', async () => {
    const dry = await freshOrg();
    proxy.mark();
    expect((await submit(dry, 'dry-run')).statusCode).toBe(202);
    const statements = proxy.statements();
    const [begin, commit] = submittingTransaction(statements);
    const seen = { held: 0, nothing: 0 };
    for (let index = begin; index <= commit; index++) {
      const moments: CutMoment[] = index >= commit - 1 ? ['before', 'after'] : ['before'];
      for (const moment of moments) {
        const where = `${moment} statement ${index - begin}: ${statements[index]!.slice(0, 80)}`;
        const org = await freshOrg();
        proxy.mark();
        proxy.cutAt(index, moment);
        const response = await submit(org, 'cut');
        expect(proxy.cutStatement(), where).toBe(statements[index]);
        expect([202, 503], `${where}: ${response.body}`).toContain(response.statusCode);
        if (response.statusCode === 503) {
          expect(Number(response.headers['retry-after']), where).toBeGreaterThan(0);
        }
        const held = await heldOf(org.orgId);
        expectWholeOrNothing(held, where);
        seen[held.batches === 0 ? 'nothing' : 'held']++;

        // The same Idempotency-Key once the first attempt's record is free again: one batch in all.
        t.setNow(new Date(NOW.getTime() + 61_000));
        const retry = await submit(org, 'cut');
        t.setNow(NOW);
        expect([200, 202], `${where} retry: ${retry.body}`).toContain(retry.statusCode);
        const after = await heldOf(org.orgId);
        expectWholeOrNothing(after, `${where} retry`);
        expect(after.batches, `${where} retry`).toBe(1);
      }
    }
    expect(seen.held).toBeGreaterThan(0);
    expect(seen.nothing).toBeGreaterThan(0);
  }, 300_000);
});
