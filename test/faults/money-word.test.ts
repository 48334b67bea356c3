// Fault test (issue 33, items 1 and 2): the money word of an answer is true whatever connection is lost,
// and a key whose request has ended is free at once or replays its answer. A cache hit's submission with
// an Idempotency-Key loses its connection at the statements around its one commit (docs/decisions.md §6):
// the commit's acknowledgement, the commit itself, the idempotency record's completion, its release after
// an error, and the record's own first commit. Each time:
// - an answer that says `not_charged` comes with nothing charged; a charge is answered as one (200 with
//   `credits_charged`) or as `settlement_unknown`;
// - a job named by `recovery.job_id` exists (its result path is not 404);
// - the same key at once is never `idempotency_conflict`: it replays the answer (`Idempotent-Replayed`)
//   or runs again, and the organisation ends charged once, with the charge reported by an answer.
// The service reaches its database through the statement proxy (test/helpers/statement-proxy.ts) on one
// pooled connection. Real PostgreSQL only: PGlite's one connection cannot be lost.
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { FX } from '../fixtures/small-feed.js';
import type { TestContext } from '../helpers/app.js';
import { type TestDatabase, usingServer } from '../helpers/database.js';
import { type FaultService, startFaultService } from '../helpers/fault-service.js';
import type { CutMoment, StatementProxy } from '../helpers/statement-proxy.js';

if (!usingServer) {
  console.info('money-word faults: skipped, they need a PostgreSQL server (set DATABASE_URL)');
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

const REQUEST = { fixture_id: FX.upcoming, draws: 300 };
/** Its price in credits: draws / 1000. */
const PRICE = 0.3;

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

async function chargesOf(orgId: string): Promise<number> {
  const [row] = await admin<{ n: number }[]>`
    SELECT count(*)::int AS n FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'charge'`;
  return row!.n;
}

type Answer = Awaited<ReturnType<typeof submit>>;

/** The money word of `response` is true: not_charged only when nothing was charged. */
async function expectTrueMoneyWord(response: Answer, orgId: string, where: string) {
  const charges = await chargesOf(orgId);
  expect([200, 503], `${where}: ${response.body}`).toContain(response.statusCode);
  if (response.statusCode === 200) {
    expect(response.json().credits_charged, where).toBe(charges === 1 ? PRICE : 0);
    return;
  }
  const error: Json = response.json().error;
  if (error.credit_effect === 'not_charged') expect(charges, `${where}: ${response.body}`).toBe(0);
  else expect(error.code, where).toBe('settlement_unknown');
  if (error.recovery?.job_id) {
    // A job an answer names exists (its result path would otherwise answer 404 resource_missing).
    const [job] = await admin`SELECT id FROM jobs WHERE id = ${error.recovery.job_id}`;
    expect(job, `${where}: ${response.body}`).toBeDefined();
  }
}

/** The same key at once: never a conflict; a replay of a stored answer; one charge in all, reported. */
async function expectKeyFree(
  org: { orgId: string; auth: { authorization: string } },
  first: Answer,
  where: string,
) {
  const retry = await submit(org, 'cut');
  expect(retry.statusCode, `${where} retry: ${retry.body}`).toBe(200);
  if (first.statusCode === 200) {
    expect(retry.headers['idempotent-replayed'], where).toBe('true');
    expect(retry.body, where).toBe(first.body);
  }
  expect(await chargesOf(org.orgId), where).toBe(1);
  // Whichever answer carried the charge said so: the first 200 or, after a 503, the retry.
  const reported = first.statusCode === 200 ? first.json().credits_charged : retry.json().credits_charged;
  expect(reported, `${where}: the charge reported`).toBe(PRICE);
  expect((await makeLedger({ sql: direct.sql }).checkBalanced(org.orgId)).balanced, where).toBe(true);
}

/** The statements a keyed cache hit sends when nothing fails, and where its one commit is. */
async function dryRun() {
  const org = await freshOrg();
  proxy.mark();
  const response = await submit(org, 'dry-run');
  expect(response.statusCode, response.body).toBe(200);
  const statements = proxy.statements();
  const delivery = statements.findIndex((text) => /insert into deliveries/i.test(text));
  let commit = delivery;
  while (commit < statements.length && !/^\s*commit/i.test(statements[commit]!)) commit++;
  const recordInsert = statements.findIndex((text) => /insert into idempotency_keys/i.test(text));
  let recordCommit = recordInsert;
  while (recordCommit < statements.length && !/^\s*commit/i.test(statements[recordCommit]!)) recordCommit++;
  const completion = statements.findIndex((text, i) => i > commit && /update idempotency_keys/i.test(text));
  expect(delivery, statements.join('\n')).toBeGreaterThan(0);
  expect(recordInsert).toBeGreaterThanOrEqual(0);
  expect(completion, statements.join('\n')).toBeGreaterThan(commit);
  return { statements, commit, recordCommit, completion };
}

async function cutAndSubmit(index: number, moment: CutMoment) {
  const org = await freshOrg();
  proxy.mark();
  proxy.cutAt(index, moment);
  const response = await submit(org, 'cut');
  return { org, response };
}

describe.skipIf(!usingServer)('the money word under a lost connection', () => {
  it('the record completion lost after the charge: the charge is answered, and the key replays it', async () => {
    const { completion, statements } = await dryRun();
    for (const moment of ['before', 'after'] as const) {
      const where = `${moment} the completion: ${statements[completion]!.slice(0, 60)}`;
      const { org, response } = await cutAndSubmit(completion, moment);
      expect(proxy.cutStatement(), where).toBe(statements[completion]);
      expect(response.statusCode, `${where}: ${response.body}`).toBe(200);
      await expectTrueMoneyWord(response, org.orgId, where);
      await expectKeyFree(org, response, where);
    }
  });

  it('the commit acknowledged to nobody: found out and answered as charged; the key replays it', async () => {
    const { commit, statements } = await dryRun();
    const where = 'after the commit';
    const { org, response } = await cutAndSubmit(commit, 'after');
    expect(proxy.cutStatement(), where).toBe(statements[commit]);
    expect(await chargesOf(org.orgId)).toBe(1);
    await expectTrueMoneyWord(response, org.orgId, where);
    await expectKeyFree(org, response, where);
  });

  it('the commit never reaching the server: not charged, no job named that does not exist, the key free', async () => {
    const { commit, statements } = await dryRun();
    const where = 'before the commit';
    const { org, response } = await cutAndSubmit(commit, 'before');
    expect(proxy.cutStatement(), where).toBe(statements[commit]);
    expect(await chargesOf(org.orgId)).toBe(0);
    await expectTrueMoneyWord(response, org.orgId, where);
    await expectKeyFree(org, response, where);
  });

  it('the commit acknowledged to nobody and the look-up lost too: settlement_unknown naming no job; the retry reports the charge', async () => {
    const { commit } = await dryRun();
    // Where the look-up takes the account lock once the commit's answer is lost: learnt from that cut alone.
    const learn = await cutAndSubmit(commit, 'after');
    expect(learn.response.statusCode).toBe(200);
    const learnt = proxy.statements();
    const lookup = learnt.findIndex((text, i) => i > commit && /from credit_accounts/i.test(text));
    expect(lookup, learnt.join('\n')).toBeGreaterThan(commit);

    const org = await freshOrg();
    proxy.mark();
    proxy.cutAt(commit, 'after');
    proxy.cutAt(lookup, 'before');
    const response = await submit(org, 'cut');
    expect(proxy.cutStatement()).toBe(learnt[lookup]);
    expect(response.statusCode, response.body).toBe(503);
    const error: Json = response.json().error;
    expect(error).toMatchObject({ code: 'settlement_unknown', credit_effect: 'unknown', recovery: null });
    await expectTrueMoneyWord(response, org.orgId, 'look-up lost');
    // The retry continues with the job the record names and answers its delivery as charged.
    await expectKeyFree(org, response, 'look-up lost');
  });

  it("the record's release lost after an error answer: the key is free at once", async () => {
    const { commit } = await dryRun();
    // Where the release goes once the commit is cut: learnt from a run with that cut alone.
    const learn = await cutAndSubmit(commit, 'before');
    expect(learn.response.statusCode).toBe(503);
    const learnt = proxy.statements();
    const release = learnt.findIndex((text, i) => i > commit && /delete from idempotency_keys/i.test(text));
    expect(release, learnt.join('\n')).toBeGreaterThan(commit);

    const org = await freshOrg();
    proxy.mark();
    proxy.cutAt(commit, 'before');
    proxy.cutAt(release, 'before');
    const response = await submit(org, 'cut');
    expect(proxy.cutStatement()).toBe(learnt[release]);
    await expectTrueMoneyWord(response, org.orgId, 'release lost');
    await expectKeyFree(org, response, 'release lost');
  });

  it("the record's own first commit acknowledged to nobody: the request goes on, the key is not left locked", async () => {
    const { recordCommit, statements } = await dryRun();
    const where = "after the record's commit";
    const { org, response } = await cutAndSubmit(recordCommit, 'after');
    expect(proxy.cutStatement(), where).toBe(statements[recordCommit]);
    await expectTrueMoneyWord(response, org.orgId, where);
    await expectKeyFree(org, response, where);
  });
});
