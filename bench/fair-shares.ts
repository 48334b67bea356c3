// Fair shares of the engine (docs/decisions.md §6 "Fair shares"), as two customers meet them on the CPU
// engine: organisation A's batch of 8 × 1,000,000 draws (the size of a paid 8-minute win-probability
// path), and organisation B's five 1,000-draw simulations a second apart while it runs. Rows: B's answers
// beside the same simulations with the engine idle, and A's batch beside the same batch alone, all in
// this run on one service (ENGINE as configured: CPU here; DATABASE_URL for a PostgreSQL server).
import type { BenchRow } from './report.js';
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
const LARGE_DRAWS = 1_000_000;
const SMALL_RUNS = 5;
const SMALL_DRAWS = 1000;
const SMALL_EVERY_MS = 1000;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** One 1,000-draw simulation waited for in its request: its time to the answer, in ms. */
async function smallRun(api: ServiceApi, secret: string, fixtureId: number, draws: number): Promise<number> {
  const t0 = performance.now();
  const response = await api.simulate({ fixture_id: fixtureId, draws, wait_seconds: 25 }, secret);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`small run: ${response.status} ${text.slice(0, 300)}`);
  return performance.now() - t0;
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
    times.push(smallRun(api, secret, fixtureId, SMALL_DRAWS + round * SMALL_RUNS + i));
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

export async function benchFairShares(): Promise<BenchRow[]> {
  const service = await startServer('service', {
    BENCH_FIXTURES: String(LARGE_ITEMS + 1),
    BENCH_ORGS: '2',
  });
  try {
    const api = serviceApi(service.info);
    // The benchmark organisation's key (api's own) is A's; the second organisation's is B's.
    const small = service.info.secrets[1]!;
    const fixtures = service.info.fixtureIds.slice(0, LARGE_ITEMS);
    const smallFixture = service.info.fixtureIds[LARGE_ITEMS]!;
    await untilServing(api, smallFixture);
    // Alone: B's runs on an idle engine, then A's batch on its own.
    const idle = await smallRuns(api, small, smallFixture, 0);
    const largeAlone = await largeBatch(api, fixtures, LARGE_DRAWS);
    // Together: A's batch (other draws, so nothing comes from the cache), B's runs starting a second in.
    const together = largeBatch(api, fixtures, LARGE_DRAWS - 1);
    await new Promise((resolve) => setTimeout(resolve, SMALL_EVERY_MS));
    const busy = await smallRuns(api, small, smallFixture, 1);
    const largeTogether = await together;
    const note = `database: ${service.info.database}; A's batch ${LARGE_ITEMS} × ${LARGE_DRAWS.toLocaleString('en-US')} draws, B's ${SMALL_RUNS} runs of ${SMALL_DRAWS.toLocaleString('en-US')} draws ${SMALL_EVERY_MS / 1000} s apart`;
    return [
      {
        group: 'Fair shares',
        name: "1,000-draw simulation while another organisation's 8 × 1,000,000 batch runs: p50",
        value: percentile(busy, 50),
        unit: 'ms',
        reference: { name: 'the same with the engine idle, p50', value: percentile(idle, 50) },
        note: `${note}; max ${Math.round(busy.at(-1) ?? 0)} ms (idle ${Math.round(idle.at(-1) ?? 0)} ms); goal: p50 ≤ 1,000 ms, max ≤ 2,000 ms`,
        fields: { busy_ms: busy.map(Math.round), idle_ms: idle.map(Math.round) },
      },
      {
        group: 'Fair shares',
        name: "  the 8 × 1,000,000 batch with the other organisation's runs beside it",
        value: largeTogether,
        unit: 's',
        reference: { name: 'the same batch alone', value: largeAlone },
        note: 'goal: ratio ≤ 1.15',
      },
    ];
  } finally {
    service.stop();
  }
}
