// The race between a worker starting a job it holds and a batch's cancel (docs/decisions.md §6 "Cancel"):
// exactly one wins, in the database. Started first, the job is left to finish, and is delivered and
// charged; cancelled first, the worker is refused it (the engine never runs it) and a run that raced
// anyway stores nothing and charges nothing: the hold stays released. Each order is taken one after the
// other and, on a PostgreSQL server, at once: both queued on the job's row lock in one order or the
// other (PGlite's one connection runs one transaction at a time: there the orders are the first ones).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulationEngine, type RunContext, type RunOutcome } from '../../src/engine/runner.js';
import { engineJob, recordOutcomes } from '../../src/jobs/job-outcomes.js';
import type { Job } from '../../src/jobs/types.js';
import { MANY_FIXTURES_FROM, NOW, withManyFixtures } from '../fixtures/small-feed.js';
import { createTestContext, type TestContext } from '../helpers/app.js';
import { get, type Json, lines, money, post, ROOMY } from '../helpers/batch-requests.js';
import { usingServer } from '../helpers/database.js';

const DRAWS = 1000;
const engine = createSimulationEngine({ mode: 'cpu', cpuThreads: 0 });
let t: TestContext;
let nextFixture = 0;

beforeAll(async () => {
  t = await createTestContext({ worker: false });
  t.setNow(NOW);
  await t.loadFeed(withManyFixtures(40), { clock: () => NOW });
});
afterAll(async () => {
  await t.close();
  await engine.close();
});

/** A live batch of `items` fixtures no other test here uses, all claimed by worker `workerId`. */
async function claimedBatch(items: number, workerId: string) {
  const { auth, orgId } = await t.newOrg({ limits: ROOMY });
  const fixtures = Array.from({ length: items }, () => ({ fixture_id: MANY_FIXTURES_FROM + nextFixture++ }));
  const batch = (await post(t, '/v1/simulations/batch', auth, { fixtures, draws: DRAWS })).json();
  const claimed = await t.graph.queue.claim(workerId, items, 60_000);
  expect(claimed.map((job) => job.batchId)).toEqual(Array(items).fill(batch.batch_id));
  return { auth, orgId, batch, claimed };
}

/** The worker's part: the real engine runs the jobs, asking `start` first; their outcomes are stored. */
async function runAndStore(workerId: string, jobs: Job[], start: RunContext['start']) {
  const outcomes = await engine.runBatch(jobs.map(engineJob), {
    progress: async () => {},
    signal: new AbortController().signal,
    start,
  });
  const byId = new Map(outcomes.map((outcome) => [outcome.jobId, outcome]));
  const context = {
    queue: t.graph.queue,
    sql: t.db.sql,
    knownResults: t.graph.knownResults,
    workerId,
    clock: () => NOW,
  };
  const ran = jobs.filter((job) => byId.has(job.id));
  const recorded = await recordOutcomes(
    context,
    ran.map((job) => ({ job, outcome: byId.get(job.id) as RunOutcome })),
  );
  return { outcomes, recorded };
}

const startAs = (workerId: string) => async (ids: readonly string[]) =>
  new Set(await t.graph.queue.start(workerId, ids));

const cancel = (auth: Json, batchId: string) => post(t, `/v1/simulations/batch/${batchId}/cancel`, auth);

/**
 * Every item is settled and charged (delivered) or released and not charged (cancelled), and the books
 * balance.
 */
async function checkMoney(orgId: string, auth: Json, batch: Json, delivered: number) {
  expect(lines((await get(t, batch.results_url, auth)).body)).toHaveLength(batch.counts.total);
  const final = (await get(t, `/v1/simulations/batch/${batch.batch_id}`, auth)).json();
  const { holds, charges } = await money(t, orgId);
  const charged = new Set(charges.map((charge) => charge.holdId));
  for (const item of final.items) {
    const settled = item.status === 'delivered';
    if (!settled) expect(item.status).toBe('cancelled');
    expect(holds.get(item.reservation_id)).toBe(settled ? 'settled' : 'released');
    expect(charged.has(item.reservation_id)).toBe(settled);
  }
  expect(final.counts).toMatchObject({ delivered, cancelled: batch.counts.total - delivered });
  expect(await t.services.ledger.balance(orgId)).toMatchObject({
    held: 0,
    spentThisMonth: delivered * DRAWS,
  });
  expect((await t.services.ledger.checkBalanced(orgId)).balanced).toBe(true);
}

describe('a worker starts a job it holds, and its batch is cancelled', () => {
  it('started first: the job is left to finish, delivered and charged; the others are cancelled', async () => {
    const { auth, orgId, batch, claimed } = await claimedBatch(3, 'w-start-first');
    const [first] = claimed;
    // The cancel comes once the worker has marked its first job started, before the engine runs it.
    const { outcomes, recorded } = await runAndStore('w-start-first', [first!], async (ids) => {
      const started = await startAs('w-start-first')(ids);
      expect((await cancel(auth, batch.batch_id)).statusCode).toBe(200);
      return started;
    });
    expect(outcomes.map((outcome) => outcome.jobId)).toEqual([first!.id]);
    expect(recorded).toEqual(['completed']);
    // The others were held by the worker, not started: cancelled, and refused to it.
    expect(await startAs('w-start-first')(claimed.slice(1).map((job) => job.id))).toEqual(new Set());
    await checkMoney(orgId, auth, batch, 1);
  });

  it('cancelled first: the worker is refused the job; a run that raced stores and charges nothing', async () => {
    const { auth, orgId, batch, claimed } = await claimedBatch(2, 'w-cancel-first');
    expect((await cancel(auth, batch.batch_id)).json().counts).toMatchObject({ cancelled: 2, running: 0 });
    // The engine asks before it begins: refused, it runs nothing and gives no outcome.
    const asked = await runAndStore('w-cancel-first', claimed, startAs('w-cancel-first'));
    expect(asked.outcomes).toEqual([]);
    // A run that did not ask (an engine that began before the cancel) is dropped at its store.
    const raced = await runAndStore('w-cancel-first', claimed, undefined);
    expect(raced.recorded).toEqual(['dropped', 'dropped']);
    const refused = await get(t, batch.items[0].result_url, auth);
    expect(refused.json().error.code).toBe('simulation_cancelled');
    const [stored] = await t.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM jobs WHERE batch_id = ${batch.batch_id} AND result_id IS NOT NULL`;
    expect(stored!.n).toBe(0);
    await checkMoney(orgId, auth, batch, 0);
  });
});

/**
 * Holds the job's row locked in a transaction of its own until `release`: what the start and the cancel
 * sent meanwhile wait for it, in the order sent.
 */
async function lockRow(jobId: string) {
  let release = () => {};
  let locked = () => {};
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const done = t.db.sql.begin(async (tx) => {
    await tx`SELECT id FROM jobs WHERE id = ${jobId} FOR UPDATE`;
    locked();
    await new Promise<void>((resolve) => {
      release = resolve;
    });
  });
  await isLocked;
  return { release: () => release(), done };
}

/** Until `n` statements of this database wait for a lock. */
async function untilWaiting(n: number) {
  for (;;) {
    const [row] = await t.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    if (row!.n >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.skipIf(!usingServer)('the start and the cancel racing for the same row', () => {
  it('the start queued first wins: the cancel leaves the job started', async () => {
    const { auth, orgId, batch, claimed } = await claimedBatch(2, 'w-race-start');
    const [first] = claimed;
    const row = await lockRow(first!.id);
    const started = startAs('w-race-start')([first!.id]);
    await untilWaiting(1);
    const cancelled = cancel(auth, batch.batch_id);
    await untilWaiting(2);
    row.release();
    await row.done;
    expect(await started).toEqual(new Set([first!.id]));
    expect((await cancelled).json().counts).toMatchObject({ running: 1, cancelled: 1 });
    const { recorded } = await runAndStore('w-race-start', [first!], startAs('w-race-start'));
    expect(recorded).toEqual(['completed']);
    await checkMoney(orgId, auth, batch, 1);
  });

  it('the cancel queued first wins: the start finds the job cancelled', async () => {
    const { auth, orgId, batch, claimed } = await claimedBatch(2, 'w-race-cancel');
    const [first] = claimed;
    const row = await lockRow(first!.id);
    const cancelled = cancel(auth, batch.batch_id);
    await untilWaiting(1);
    const started = startAs('w-race-cancel')([first!.id]);
    await untilWaiting(2);
    row.release();
    await row.done;
    expect((await cancelled).json().counts).toMatchObject({ running: 0, cancelled: 2 });
    expect(await started).toEqual(new Set());
    const { outcomes } = await runAndStore('w-race-cancel', [first!], startAs('w-race-cancel'));
    expect(outcomes).toEqual([]);
    await checkMoney(orgId, auth, batch, 0);
  });
});
