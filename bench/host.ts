// The host around the engine (issue figures of "the host at GPU speed"): what a job costs besides its
// draws, on each back end. Rows:
// - a 1,000-draw cache miss on an idle service, end to end (p50/p99), beside the engine's own run_ms;
// - a 1,000,000-draw simulation end to end, beside its run_ms;
// - a batch of 1,000 fixtures × about 100 draws from submission to the last delivery (its summary polled,
//   then its NDJSON results), beside the engine alone
//   on the same work, and the CPU time per job of the service process and of the PostgreSQL server, in
//   all and by phase (submission, running, results stream), the bench's own client apart.
// PGlite always; the PostgreSQL server too when DATABASE_URL is set. The service runs in its own process.
import { type CpuReading, cpuFields, cpuPerJob, cpuReading, cpuSecondsOf } from './cpu.js';
import { type BenchRow, percentile, round } from './report.js';
import { freePort, startServer } from './servers.js';
import {
  engineAloneSeconds,
  readAllResults,
  type ServiceApi,
  serviceApi,
  submitBatch,
  untilFinished,
  untilServing,
} from './simulations.js';

const IDLE_REQUESTS = Number(process.env.BENCH_IDLE_REQUESTS ?? 40);
/** Pause between idle requests, so each one finds the worker asleep (the case a user meets). */
const IDLE_PAUSE_MS = 150;
const LARGE_RUNS = 3;
const BATCH_ITEMS = 1000;
/**
 * Fixtures and draws differ from run to run (the draws by at most 10%), so a run on a database that an
 * earlier run filled finds (almost surely) no cached result: every row measures cache misses.
 */
const SALT = Math.floor(Math.random() * 1000);
const BATCH_DRAWS = 100 + (SALT % 50);

/**
 * The goals of issue 54 on a quiet 2-core machine (docs/decisions.md §6, "What a job costs"). CPU figures
 * are per batch job; where the engine alone measures slower than on that machine, the CPU goals scale by
 * the same ratio (the row's fields carry the engine-alone figure for that).
 */
const GOALS = {
  missP50Ms: 50,
  millionOverRunMs: 50,
  batchS: 2.5,
  engineAloneMs: 0.8,
  hostMs: 3.5,
  eventLoopMs: 0.6,
  pgliteServiceMs: 5,
};

export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** One POST /v1/simulations answered 200: its end-to-end time and the document's own timing. */
async function timedSimulation(api: ServiceApi, body: object) {
  const t0 = performance.now();
  const response = await api.simulate({ ...body, wait_seconds: 25 });
  const text = await response.text();
  const ms = performance.now() - t0;
  if (response.status !== 200) throw new Error(`simulation: ${response.status} ${text.slice(0, 300)}`);
  const timing = (JSON.parse(text) as { simulation: { timing: { run_ms: number; queued_ms: number } } })
    .simulation.timing;
  return { ms, runMs: timing.run_ms, queuedMs: timing.queued_ms };
}

/** The service's and PostgreSQL's CPU per job, the client's apart (it shares the two cores). */
function phaseNote(phase: string, ms: CpuReading): string {
  const host = ms.eventLoop + ms.workers + ms.v8 + ms.other + ms.postgres;
  return `${phase} ${host.toFixed(2)} (event loop ${ms.eventLoop.toFixed(2)}, engine threads ${ms.workers.toFixed(2)}, V8 ${ms.v8.toFixed(2)}, pool ${ms.other.toFixed(2)}, PostgreSQL ${ms.postgres.toFixed(2)}; client ${ms.client.toFixed(2)})`;
}

/** Garbage collections of the service process so far by kind (prom-client's `nodejs_gc_duration_seconds`). */
async function gcCounts(metricsBase: string): Promise<{ minor: number; major: number }> {
  const text = await (await fetch(`${metricsBase}/metrics`)).text();
  const count = (kind: string) =>
    Number(
      new RegExp(`^nodejs_gc_duration_seconds_count\\{kind="${kind}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0,
    );
  return { minor: count('minor'), major: count('major') + count('incremental') };
}

/**
 * The batch from submission to its last delivery, and the CPU time per job it cost: in all, and in each
 * phase (submission; the items running while the client polls; the results stream), since each phase
 * has its own costs (docs/decisions.md §6).
 */
async function timedBatch(
  api: ServiceApi,
  fixtureIds: readonly number[],
  servicePid: number,
  database: 'embedded' | 'server',
  metricsBase: string,
) {
  const gc0 = await gcCounts(metricsBase);
  const serviceCpu0 = cpuSecondsOf(servicePid);
  const start = cpuReading([servicePid], database);
  const t0 = performance.now();
  const batch = await submitBatch(api, fixtureIds.slice(0, BATCH_ITEMS), BATCH_DRAWS);
  const submitMs = performance.now() - t0;
  const submitted = cpuReading([servicePid], database);
  await untilFinished(api, batch);
  const finishedMs = performance.now() - t0;
  const finished = cpuReading([servicePid], database);
  await readAllResults(api, batch);
  const totalMs = performance.now() - t0;
  const end = cpuReading([servicePid], database);
  const gc1 = await gcCounts(metricsBase);
  return {
    gc: { minor: gc1.minor - gc0.minor, major: gc1.major - gc0.major },
    batchS: totalMs / 1000,
    submitMs,
    resultsMs: totalMs - finishedMs,
    serviceCpuMs: ((cpuSecondsOf(servicePid) - serviceCpu0) * 1000) / BATCH_ITEMS,
    cpuMs: cpuPerJob(start, end, BATCH_ITEMS),
    phases: {
      submission: cpuPerJob(start, submitted, BATCH_ITEMS),
      running: cpuPerJob(submitted, finished, BATCH_ITEMS),
      results: cpuPerJob(finished, end, BATCH_ITEMS),
    },
  };
}

type Timed = Awaited<ReturnType<typeof timedSimulation>>;

/** The idle misses' and the million-draw runs' rows. */
function latencyRows(group: string, idle: Timed[], large: Timed[]): BenchRow[] {
  const idleMs = idle.map((r) => r.ms).sort((a, b) => a - b);
  const missP50 = percentile(idleMs, 50);
  const largeMs = median(large.map((r) => r.ms));
  const largeRunMs = median(large.map((r) => r.runMs));
  return [
    {
      group,
      name: '1,000-draw cache miss on an idle service: p50 end to end',
      value: missP50,
      unit: 'ms',
      reference: { name: "the engine's run_ms (median)", value: median(idle.map((r) => r.runMs)) },
      note: `p99 ${percentile(idleMs, 99).toFixed(0)} ms; queued_ms median ${median(idle.map((r) => r.queuedMs))}; ${IDLE_REQUESTS} requests one at a time; goal p50 ≤ ${GOALS.missP50Ms} ms`,
      fields: { p99_ms: percentile(idleMs, 99), requests: IDLE_REQUESTS, goal_ms: GOALS.missP50Ms },
    },
    {
      group,
      name: '1,000,000-draw simulation end to end (median)',
      value: largeMs,
      unit: 'ms',
      reference: { name: 'its run_ms (median)', value: largeRunMs },
      note: `${LARGE_RUNS} runs; goal ≤ run_ms + ${GOALS.millionOverRunMs} ms`,
      fields: {
        over_run_ms: largeMs - largeRunMs,
        runs: LARGE_RUNS,
        goal_over_run_ms: GOALS.millionOverRunMs,
      },
    },
  ];
}

/** The batch's rows: its wall time beside the engine alone, and its CPU per job by thread kind and phase. */
function batchRows(
  group: string,
  database: 'embedded' | 'server',
  measured: Awaited<ReturnType<typeof timedBatch>>,
  engineBatchS: number,
): BenchRow[] {
  const engineMsPerJob = (engineBatchS * 1000) / BATCH_ITEMS;
  const { batchS, submitMs, resultsMs, serviceCpuMs, cpuMs, phases, gc } = measured;
  const server = database === 'server';
  const all = cpuFields(cpuMs, database);
  return [
    {
      group,
      name: `batch ${BATCH_ITEMS} × ${BATCH_DRAWS} draws, submit → last delivery`,
      value: batchS,
      unit: 's',
      reference: {
        name: 'the CPU engine alone, same work (runs, sample paths, documents)',
        value: engineBatchS,
      },
      note: `submission ${(submitMs / 1000).toFixed(2)} s, results stream ${(resultsMs / 1000).toFixed(2)} s; ${((batchS * 1000) / BATCH_ITEMS).toFixed(2)} ms a job; engine alone ${engineMsPerJob.toFixed(2)} ms a job (goal ≤ ${GOALS.engineAloneMs})${server ? `; goal ≤ ${GOALS.batchS} s on PostgreSQL` : ''}`,
      fields: {
        submission_s: round(submitMs / 1000, 3),
        results_stream_s: round(resultsMs / 1000, 3),
        ms_per_job: round((batchS * 1000) / BATCH_ITEMS, 3),
        engine_alone_ms_per_job: round(engineMsPerJob, 3),
        goal_engine_alone_ms_per_job: GOALS.engineAloneMs,
        goal_s: server ? GOALS.batchS : null,
      },
    },
    {
      group,
      name: '  CPU time per batch job: service process',
      value: serviceCpuMs,
      unit: 'ms',
      // The event loop is what a GPU host cannot spread over its cores: it bounds the jobs a second.
      note: `event loop ${cpuMs.eventLoop.toFixed(2)}, engine threads ${cpuMs.workers.toFixed(2)}, V8 background ${cpuMs.v8.toFixed(2)}, libuv pool ${cpuMs.other.toFixed(2)} ms a job; ${
        server
          ? `PostgreSQL server processes: ${cpuMs.postgres.toFixed(2)} ms a job`
          : 'PGlite runs inside the service process (on its event loop)'
      }; the bench's client ${cpuMs.client.toFixed(2)} ms a job; ${gc.minor} scavenges and ${gc.major} mark-sweeps in the batch${server ? '' : `; goal ≤ ${GOALS.pgliteServiceMs} ms`}`,
      fields: {
        cpu_ms_per_job: all,
        gc_scavenges: gc.minor,
        gc_mark_sweeps: gc.major,
        goal_ms: server ? null : GOALS.pgliteServiceMs,
      },
    },
    {
      group,
      name: '  CPU time per batch job: event loop',
      value: cpuMs.eventLoop,
      unit: 'ms',
      reference: { name: 'the CPU engine alone, a job', value: engineMsPerJob },
      // It bounds the jobs a second of one process, however many cores the host has.
      note: server ? `goal ≤ ${GOALS.eventLoopMs} ms on PostgreSQL` : 'PGlite answers its queries on it',
      fields: { goal_ms: server ? GOALS.eventLoopMs : null },
    },
    {
      group,
      name: '  CPU time per batch job, service and PostgreSQL: by phase',
      value: all.host,
      unit: 'ms',
      reference: { name: 'the CPU engine alone, a job', value: engineMsPerJob },
      // The engine threads run the engine (compile, draws, sample paths, document): the rest is the host's.
      note: `ms a job: ${phaseNote('submission', phases.submission)}; ${phaseNote('running', phases.running)}; ${phaseNote('results stream', phases.results)}${server ? `; goal ≤ ${GOALS.hostMs} ms in all` : ''}`,
      fields: {
        cpu_ms_per_job: all,
        cpu_ms_per_job_by_phase: {
          submission: cpuFields(phases.submission, database),
          running: cpuFields(phases.running, database),
          results: cpuFields(phases.results, database),
        },
        goal_ms: server ? GOALS.hostMs : null,
      },
    },
  ];
}

async function hostRows(database: 'embedded' | 'server', engineBatchS: number): Promise<BenchRow[]> {
  const group = `Host (${database === 'server' ? 'PostgreSQL server' : 'PGlite'})`;
  const metricsPort = await freePort();
  const service = await startServer('service', {
    BENCH_FIXTURES: String(BATCH_ITEMS),
    // /metrics on a listener of its own: the service's garbage collections during the batch.
    METRICS_PORT: String(metricsPort),
    ...(database === 'embedded' ? { DATABASE_URL: undefined } : {}),
  });
  try {
    const api = serviceApi(service.info);
    const fixtureIds = service.info.fixtureIds;
    await untilServing(api, fixtureIds[0]!);

    const idle: Timed[] = [];
    for (let i = 0; i < IDLE_REQUESTS; i++) {
      await new Promise((r) => setTimeout(r, IDLE_PAUSE_MS));
      // Fixture and draws picked apart at random for each request: taken in step from SALT, a run's 40
      // pairs overlapped an earlier run's whenever their SALTs were less than 40 apart, and on a database
      // that keeps results those requests were cache hits, timed as misses.
      idle.push(
        await timedSimulation(api, {
          fixture_id: fixtureIds[Math.floor(Math.random() * fixtureIds.length)],
          draws: 1000 + Math.floor(Math.random() * 100),
        }),
      );
    }

    const large: Timed[] = [];
    for (let i = 0; i < LARGE_RUNS; i++) {
      await new Promise((r) => setTimeout(r, IDLE_PAUSE_MS));
      large.push(
        await timedSimulation(api, {
          fixture_id: fixtureIds[50 + i]!,
          draws: 1_000_000 - SALT * LARGE_RUNS - i,
        }),
      );
    }

    const batch = await timedBatch(api, fixtureIds, service.pid, database, `http://127.0.0.1:${metricsPort}`);
    return [...latencyRows(group, idle, large), ...batchRows(group, database, batch, engineBatchS)];
  } finally {
    service.stop();
  }
}

export async function benchHost(): Promise<BenchRow[]> {
  const engineBatchS = await engineAloneSeconds(BATCH_ITEMS, BATCH_DRAWS);
  const rows = await hostRows('embedded', engineBatchS);
  if (process.env.DATABASE_URL) rows.push(...(await hostRows('server', engineBatchS)));
  return rows;
}
