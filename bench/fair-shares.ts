// Fair shares of the engine (docs/decisions.md §6 "Fair shares"), as two customers meet them on the CPU
// engine: organisation A's batch of 8 × 1,000,000 draws (the size of a paid 8-minute win-probability
// path), and organisation B's five 1,000-draw simulations a second apart while it runs, then three of
// 100,000 draws (each over the CPU pool, by turns with A's runs). Rows: B's answers beside the same
// simulations with the engine idle, and A's batch beside the same batch alone, all in this run on one
// service (ENGINE as configured: CPU here; DATABASE_URL for a PostgreSQL server).
import { type BenchRow, percentile } from './report.js';
import { startServer } from './servers.js';
import {
  readAllResults,
  type ServiceApi,
  serviceApi,
  submitBatch,
  untilFinished,
  untilServing,
} from './simulations.js';

const LARGE_ITEMS = 8;
/** The organisation's own batch in the within-organisation rows: 1,000 items of OWN_DRAWS draws. */
const OWN_ITEMS = 1000;
const OWN_DRAWS = 2000;
const LARGE_DRAWS = 1_000_000;
const SMALL_RUNS = 5;
const SMALL_DRAWS = 1000;
const SMALL_EVERY_MS = 1000;
/** B's runs over the CPU pool (more than its engine counts whole, 20,000 draws), one after another. */
const POOLED_RUNS = 3;
const POOLED_DRAWS = 100_000;
/**
 * Draws of this run's own, so that no result comes from the cache that an earlier run left on a
 * PostgreSQL server: A's batches 990,001 to 1,000,000 draws, B's runs 900 to 1,099.
 */
const SALT = Math.floor(Math.random() * 2500);
const largeDraws = (scenario: number) => LARGE_DRAWS - 4 * SALT - scenario;
/**
 * The batch case, scaled to this 2-core machine: A's batch of BATCH_CASE_ITEMS × 100,000 draws (the
 * goal's 1,000 × 100,000 is 100,000,000 draws, some 50 s of this engine alone on an idle machine; 80 ×
 * 100,000 is the path's 8,000,000 draws, as 80 runs), one process.
 */
const BATCH_CASE_ITEMS = 80;
const BATCH_CASE_DRAWS = 100_000;
const batchCaseDraws = (scenario: number) => BATCH_CASE_DRAWS - 4 * SALT - 3 * POOLED_RUNS - scenario;
const smallDraws = (scenario: number, i: number) => 900 + ((SALT * 20 + scenario * SMALL_RUNS + i) % 200);
const pooledDraws = (scenario: number, i: number) => POOLED_DRAWS - 4 * SALT - scenario * POOLED_RUNS - i;

/**
 * POST /v1/simulations, sent again after a 503 (the service's back-pressure on a loaded machine) as a
 * client that honours it would: the time to the answer counts the retries.
 */
async function simulate(api: ServiceApi, secret: string, body: object): Promise<Response> {
  for (;;) {
    const response = await api.simulate(body, secret);
    if (response.status !== 503) return response;
    await response.text();
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** One 1,000-draw simulation waited for in its request: its time to the answer, in ms. */
async function smallRun(api: ServiceApi, secret: string, fixtureId: number, draws: number): Promise<number> {
  const t0 = performance.now();
  const response = await simulate(api, secret, { fixture_id: fixtureId, draws, wait_seconds: 25 });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`small run: ${response.status} ${text.slice(0, 300)}`);
  return performance.now() - t0;
}

/**
 * One 100,000-draw simulation: its time to the answer, in ms. Past its request's wait (25 s at most) it
 * is read from its result path until delivered, as a client would.
 */
async function pooledRun(api: ServiceApi, secret: string, fixtureId: number, draws: number): Promise<number> {
  const t0 = performance.now();
  let response = await simulate(api, secret, { fixture_id: fixtureId, draws, wait_seconds: 25 });
  while (response.status === 202) {
    const job = (await response.json()) as { result_url: string };
    await new Promise((resolve) => setTimeout(resolve, 250));
    response = await fetch(new URL(job.result_url, api.base), {
      headers: { ...api.headers, authorization: `Bearer ${secret}` },
    });
  }
  const text = await response.text();
  if (response.status !== 200) throw new Error(`pooled run: ${response.status} ${text.slice(0, 300)}`);
  return performance.now() - t0;
}

/** B's 100,000-draw runs, one after another: their times, sorted. */
async function pooledRuns(api: ServiceApi, secret: string, fixtureId: number, round: number) {
  const times: number[] = [];
  for (let i = 0; i < POOLED_RUNS; i++)
    times.push(await pooledRun(api, secret, fixtureId, pooledDraws(round, i)));
  return times.sort((a, b) => a - b);
}

/** B's runs, a second apart, each with draws never run before (no cache hit): their times, sorted. */
async function smallRuns(
  api: ServiceApi,
  secret: string,
  fixtureId: number,
  round: number,
): Promise<number[]> {
  const times: Promise<number>[] = [];
  for (let i = 0; i < SMALL_RUNS; i++) {
    times.push(smallRun(api, secret, fixtureId, smallDraws(round, i)));
    await new Promise((resolve) => setTimeout(resolve, SMALL_EVERY_MS));
  }
  return (await Promise.all(times)).sort((a, b) => a - b);
}

/** A's batch from its submission until every item has been delivered, in seconds. */
async function largeBatch(api: ServiceApi, fixtures: readonly number[], draws: number): Promise<number> {
  const t0 = performance.now();
  const batch = await submitBatch(api, fixtures, draws);
  await untilFinished(api, batch);
  await readAllResults(api, batch);
  return (performance.now() - t0) / 1000;
}

/**
 * A's batch alone, B's runs on an idle engine, then both together: A's batch through `large`, B's runs
 * through `small` (another process of the same service on a PostgreSQL server, or the same one). `round`
 * keeps each scenario's draws apart from the others', so nothing comes from the cache.
 */
async function scenario(
  large: ServiceApi,
  small: ServiceApi,
  secret: string,
  fixtures: number[],
  round: number,
  batch: LargeBatch = { items: fixtures.slice(0, LARGE_ITEMS), draws: largeDraws },
) {
  const smallFixture = fixtures[LARGE_ITEMS]!;
  const idle = await smallRuns(small, secret, smallFixture, 2 * round);
  const pooledIdle = await pooledRuns(small, secret, smallFixture, 2 * round);
  const largeAlone = await largeBatch(large, batch.items, batch.draws(2 * round));
  const together = largeBatch(large, batch.items, batch.draws(2 * round + 1));
  await new Promise((resolve) => setTimeout(resolve, SMALL_EVERY_MS));
  const busy = await smallRuns(small, secret, smallFixture, 2 * round + 1);
  const pooledBusy = await pooledRuns(small, secret, smallFixture, 2 * round + 1);
  return { idle, busy, pooledIdle, pooledBusy, largeAlone, largeTogether: await together };
}

/** A's batch: its items' fixtures, and its draws in each round of the scenario. */
interface LargeBatch {
  items: number[];
  draws(round: number): number;
}

function rows(
  outcome: Awaited<ReturnType<typeof scenario>>,
  where: string,
  shape = `${LARGE_ITEMS} × ${LARGE_DRAWS.toLocaleString('en-US')}`,
): BenchRow[] {
  const { idle, busy, pooledIdle, pooledBusy, largeAlone, largeTogether } = outcome;
  const note = `${where}; A's batch ${shape} draws, B's ${SMALL_RUNS} runs of about ${SMALL_DRAWS.toLocaleString('en-US')} draws ${SMALL_EVERY_MS / 1000} s apart`;
  return [
    {
      group: 'Fair shares',
      name: `1,000-draw simulation while another organisation's ${shape} batch runs (${where}): p50`,
      value: percentile(busy, 50),
      unit: 'ms',
      reference: { name: 'the same with the engine idle, p50', value: percentile(idle, 50) },
      note: `${note}; max ${Math.round(busy.at(-1) ?? 0)} ms (idle ${Math.round(idle.at(-1) ?? 0)} ms); goal: p50 ≤ 1,000 ms, max ≤ 2,000 ms`,
      fields: { busy_ms: busy.map(Math.round), idle_ms: idle.map(Math.round) },
    },
    {
      group: 'Fair shares',
      name: `  100,000-draw simulation then, one after another (${where}): p50`,
      value: percentile(pooledBusy, 50),
      unit: 'ms',
      reference: { name: 'the same with the engine idle, p50', value: percentile(pooledIdle, 50) },
      note: `${POOLED_RUNS} runs of about ${POOLED_DRAWS.toLocaleString('en-US')} draws after the 1,000-draw ones, while A's batch still runs; max ${Math.round(pooledBusy.at(-1) ?? 0)} ms (idle ${Math.round(pooledIdle.at(-1) ?? 0)} ms)`,
      fields: { busy_ms: pooledBusy.map(Math.round), idle_ms: pooledIdle.map(Math.round) },
    },
    {
      group: 'Fair shares',
      name: `  the ${shape} batch with the other organisation's runs beside it (${where})`,
      value: largeTogether,
      unit: 's',
      reference: { name: 'the same batch alone', value: largeAlone },
      note: 'goal: ratio ≤ 1.15',
    },
  ];
}

/**
 * Within one organisation: its single runs while its own 1,000-item batch runs, beside the same runs on an
 * idle engine (measured before, in `scenario`). The singles go ahead of the organisation's batch items.
 */
async function ownBatchRow(
  api: ServiceApi,
  secret: string,
  fixtures: number[],
  idle: number[],
): Promise<BenchRow> {
  const items = fixtures.slice(LARGE_ITEMS + 1, LARGE_ITEMS + 1 + OWN_ITEMS);
  const batch = largeBatch(api, items, OWN_DRAWS - (SALT % 100));
  await new Promise((resolve) => setTimeout(resolve, SMALL_EVERY_MS));
  const busy = await smallRuns(api, secret, fixtures[LARGE_ITEMS]!, 4);
  const batchS = await batch;
  return {
    group: 'Fair shares',
    name: `1,000-draw simulation while its own organisation's ${OWN_ITEMS.toLocaleString('en-US')}-item batch runs: p50`,
    value: percentile(busy, 50),
    unit: 'ms',
    reference: { name: 'the same with the engine idle, p50', value: percentile(idle, 50) },
    note: `one process; the batch ${OWN_ITEMS.toLocaleString('en-US')} × ${OWN_DRAWS.toLocaleString('en-US')} draws took ${batchS.toFixed(1)} s; max ${Math.round(busy.at(-1) ?? 0)} ms; goal: p50 ≤ 1,000 ms`,
    fields: { busy_ms: busy.map(Math.round), batch_s: batchS },
  };
}

export async function benchFairShares(): Promise<BenchRow[]> {
  const service = await startServer('service', {
    BENCH_FIXTURES: String(LARGE_ITEMS + 1 + OWN_ITEMS),
    BENCH_ORGS: '2',
  });
  const stops = [service.stop];
  try {
    const api = serviceApi(service.info);
    // The benchmark organisation's key (api's own) is A's; the second organisation's is B's.
    const secret = service.info.secrets[1]!;
    const fixtures = service.info.fixtureIds;
    await untilServing(api, fixtures[LARGE_ITEMS]!);
    const one = await scenario(api, api, secret, fixtures, 0);
    const out = rows(one, `one process, database: ${service.info.database}`);
    out.push(await ownBatchRow(api, service.info.secret, fixtures, one.idle));
    // The batch case (its scenario's rounds 6 and 7: draws of their own); its items are fixtures the
    // other rows' large batches do not use.
    const batchCase: LargeBatch = {
      items: fixtures.slice(LARGE_ITEMS + 1, LARGE_ITEMS + 1 + BATCH_CASE_ITEMS),
      draws: batchCaseDraws,
    };
    const shape = `${BATCH_CASE_ITEMS} × ${BATCH_CASE_DRAWS.toLocaleString('en-US')}`;
    const where = `one process, database: ${service.info.database}`;
    out.push(...rows(await scenario(api, api, secret, fixtures, 3, batchCase), where, shape));
    if (service.info.database === 'server') {
      // Two API and worker processes on one PostgreSQL: A's batch sent to the first, B's runs to the
      // second; both processes' workers claim from the one queue by the same rule.
      const second = await startServer('service', { BENCH_ROLE: 'second', BENCH_ORGS: '0' });
      stops.push(second.stop);
      const other = serviceApi({ ...second.info, secret: service.info.secret });
      await untilServing(other, fixtures[LARGE_ITEMS]!);
      out.push(...rows(await scenario(api, other, secret, fixtures, 1), 'two processes, one PostgreSQL'));
    }
    return out;
  } finally {
    for (const stop of stops) stop();
  }
}
