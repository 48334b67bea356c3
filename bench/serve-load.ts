// serve-bench's workloads (docs/gpu.md "The service on a GPU host"), driven over HTTP as clients drive
// the service, each giving one record: its figures, the jobs the GPU and the CPU ran (from the worker's
// /metrics), and GPU figures only when the GPU ran every job (a CPU share would make them a speed nobody
// measured, as gpu-check's records do).
import { spawn } from 'node:child_process';
import { cpuFields, cpuPerJob, cpuReading } from './cpu.js';
import { median } from './host.js';
import { percentile, round } from './report.js';
import { type JobCounters, type RunningStack, readJobCounters, readJobCountersAfter } from './serve-stack.js';
import {
  readAllResults,
  type ServiceApi,
  type SubmittedBatch,
  submitBatch,
  untilFinished,
} from './simulations.js';

export interface Scale {
  name: 'tiny' | 'full';
  /** (a) and (b): draws of a "million-draw" simulation (fewer on llvmpipe). */
  largeDraws: number;
  warmUps: number;
  sequentialRuns: number;
  clients: readonly number[];
  concurrentSeconds: number;
  batchItems: number;
  /** (c): draws per item of the large batch. */
  batchDraws: number;
  /** (d): draws per item of the host-bound batch. */
  smallBatchDraws: number;
  misses: number;
  /** (f): draws of each minute of the win-probability path. */
  pathDraws: number;
  apiProcesses: number;
}

export const SCALES: Record<Scale['name'], Scale> = {
  full: {
    name: 'full',
    largeDraws: 1_000_000,
    warmUps: 5,
    sequentialRuns: 20,
    clients: [16, 64],
    concurrentSeconds: 30,
    batchItems: 1000,
    batchDraws: 100_000,
    smallBatchDraws: 1000,
    misses: 40,
    pathDraws: 100_000,
    apiProcesses: 2,
  },
  // CI on llvmpipe (two cores): every workload and record, on work llvmpipe runs in seconds.
  tiny: {
    name: 'tiny',
    largeDraws: 2000,
    warmUps: 1,
    sequentialRuns: 3,
    clients: [2, 4],
    concurrentSeconds: 3,
    batchItems: 20,
    batchDraws: 1000,
    smallBatchDraws: 100,
    misses: 5,
    pathDraws: 200,
    apiProcesses: 1,
  },
};

export interface LoadContext {
  stack: RunningStack;
  scale: Scale;
  inTime(): boolean;
  emit(record: Record<string, unknown>): void;
  /** A number no request of this stack had: its inputs (missBody) are new. */
  nextRequest(): number;
}

/** The batch status poll: fine enough for a 1.3 s goal, coarse enough not to load the event loop. */
const BATCH_POLL_MS = 50;
/** How long a request may wait for its result (docs/api.md: wait_seconds). */
const WAIT_SECONDS = 25;

/** The stack's API for client `index`: API processes taken in turn. */
function apiFor(stack: RunningStack, index = 0): ServiceApi {
  const base = stack.apiBases[index % stack.apiBases.length]!;
  const headers = { authorization: `Bearer ${stack.secret}`, 'content-type': 'application/json' };
  return {
    base,
    headers,
    simulate: (body) =>
      fetch(`${base}/v1/simulations`, { method: 'POST', headers, body: JSON.stringify(body) }),
  };
}

/** Which engine ran the jobs between two readings, and their GPU time only when the GPU ran all. */
export function jobsBetween(before: JobCounters, after: JobCounters) {
  const gpu = after.gpuJobs - before.gpuJobs;
  const cpu = after.cpuJobs - before.cpuJobs;
  return {
    jobs_gpu: gpu,
    jobs_cpu: cpu,
    engine: gpu + cpu === 0 ? 'none' : cpu === 0 ? 'gpu' : gpu === 0 ? 'cpu' : 'gpu, partly on the CPU',
    gpuSeconds: cpu === 0 && gpu > 0 ? after.gpuSeconds - before.gpuSeconds : null,
  };
}

interface Timed {
  ms: number;
  runMs: number;
  queuedMs: number;
  engine: string;
  refusals: number;
}

/**
 * One POST /v1/simulations until it is answered 200, as a client does: a 503 (back-pressure, the engine
 * starting) is retried after its Retry-After, and counted; anything else fails the workload.
 */
async function simulate(api: ServiceApi, body: object): Promise<Timed> {
  const t0 = performance.now();
  let refusals = 0;
  for (;;) {
    const response = await api.simulate({ ...body, wait_seconds: WAIT_SECONDS });
    const text = await response.text();
    if (response.status === 200) {
      const timing = (
        JSON.parse(text) as { simulation: { timing: { run_ms: number; queued_ms: number; engine: string } } }
      ).simulation.timing;
      return {
        ms: performance.now() - t0,
        runMs: timing.run_ms,
        queuedMs: timing.queued_ms,
        engine: timing.engine,
        refusals,
      };
    }
    if (response.status !== 503 || refusals >= 100)
      throw new Error(`simulation: ${response.status} ${text.slice(0, 300)}`);
    refusals++;
    await new Promise((r) => setTimeout(r, Number(response.headers.get('retry-after') ?? 1) * 1000));
  }
}

/**
 * Request `i`'s inputs, never an earlier request's (no cache hit, no loop guard): the fixtures in turn,
 * and one draw fewer each round of them.
 */
function missBody(stack: RunningStack, i: number, draws: number) {
  const fixtures = stack.fixtureIds.length;
  return { fixture_id: stack.fixtureIds[i % fixtures], draws: draws - Math.floor(i / fixtures) };
}

function latencies(timed: readonly Timed[]) {
  const sorted = timed.map((t) => t.ms).sort((a, b) => a - b);
  return {
    p50_ms: round(percentile(sorted, 50), 1),
    p99_ms: round(percentile(sorted, 99), 1),
    run_ms_median: median(timed.map((t) => t.runMs)),
    queued_ms_median: median(timed.map((t) => t.queuedMs)),
    refusals_503: timed.reduce((sum, t) => sum + t.refusals, 0),
  };
}

/** (a) One large simulation at a time, after a warm-up: end to end beside each job's own GPU time. */
export async function sequentialLarge(context: LoadContext): Promise<void> {
  const { stack, scale } = context;
  const api = apiFor(stack);
  for (let w = 0; w < scale.warmUps; w++)
    await simulate(api, missBody(stack, context.nextRequest(), scale.largeDraws));
  const first = await readJobCounters(stack.workerMetrics);
  const timed: Timed[] = [];
  const gpuMs: Array<number | null> = [];
  while (timed.length < scale.sequentialRuns && context.inTime()) {
    const before = await readJobCounters(stack.workerMetrics);
    timed.push(await simulate(api, missBody(stack, context.nextRequest(), scale.largeDraws)));
    const own = jobsBetween(before, await readJobCountersAfter(stack.workerMetrics, before, 1));
    gpuMs.push(own.gpuSeconds === null ? null : own.gpuSeconds * 1000);
  }
  const ran = jobsBetween(first, await readJobCountersAfter(stack.workerMetrics, first, timed.length));
  const allGpu = ran.engine === 'gpu' && gpuMs.every((ms) => ms !== null);
  const sortedGpu = allGpu ? (gpuMs as number[]).sort((a, b) => a - b) : [];
  context.emit({
    record: 'sequential',
    work: `one ${scale.largeDraws}-draw simulation at a time, ${timed.length} after ${scale.warmUps} warm-up`,
    draws: scale.largeDraws,
    runs: timed.length,
    complete: timed.length === scale.sequentialRuns,
    ...latencies(timed),
    gpu_ms_p50: allGpu ? round(percentile(sortedGpu, 50), 3) : null,
    gpu_ms_p99: allGpu ? round(percentile(sortedGpu, 99), 3) : null,
    engine: ran.engine,
    jobs_gpu: ran.jobs_gpu,
    jobs_cpu: ran.jobs_cpu,
  });
}

/** nvidia-smi's utilisation samples while `work` runs, where the tool exists; null elsewhere. */
async function withUtilisation<T>(
  work: () => Promise<T>,
): Promise<{ result: T; utilisation: number | null }> {
  const samples: number[] = [];
  let sampler: ReturnType<typeof spawn> | null = null;
  try {
    sampler = spawn(
      'nvidia-smi',
      ['--query-gpu=utilization.gpu', '--format=csv,noheader,nounits', '-lms', '200'],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    sampler.on('error', () => {});
    sampler.stdout?.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n'))
        if (/^\d+/.test(line.trim())) samples.push(Number(line));
    });
  } catch {
    sampler = null;
  }
  try {
    const result = await work();
    return { result, utilisation: samples.length ? round(median(samples), 1) : null };
  } finally {
    sampler?.kill();
  }
}

/** (b) `clients` concurrent clients of large simulations for the scale's seconds. */
export async function concurrentLarge(context: LoadContext, clients: number): Promise<void> {
  const { stack, scale } = context;
  const timed: Timed[] = [];
  const before = await readJobCounters(stack.workerMetrics);
  const started = performance.now();
  const end = started + scale.concurrentSeconds * 1000;
  const { utilisation } = await withUtilisation(() =>
    Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        const api = apiFor(stack, client);
        while (performance.now() < end && context.inTime())
          timed.push(await simulate(api, missBody(stack, context.nextRequest(), scale.largeDraws)));
      }),
    ),
  );
  const wallS = (performance.now() - started) / 1000;
  const ran = jobsBetween(before, await readJobCountersAfter(stack.workerMetrics, before, timed.length));
  context.emit({
    record: 'concurrent',
    work: `${clients} concurrent clients of ${scale.largeDraws}-draw simulations for ${scale.concurrentSeconds} s`,
    clients,
    draws: scale.largeDraws,
    simulations: timed.length,
    wall_s: round(wallS, 3),
    complete: wallS >= scale.concurrentSeconds,
    simulations_per_s: round(timed.length / wallS),
    ...latencies(timed),
    gpu_busy: ran.gpuSeconds === null ? null : round(ran.gpuSeconds / wallS, 3),
    gpu_s: ran.gpuSeconds === null ? null : round(ran.gpuSeconds, 3),
    nvidia_smi_utilisation_median: ran.engine === 'gpu' ? utilisation : null,
    engine: ran.engine,
    jobs_gpu: ran.jobs_gpu,
    jobs_cpu: ran.jobs_cpu,
  });
}

/**
 * (c) and (d): a batch of the scale's items from submission to the last NDJSON result (its summary polled,
 * then its results read), with CPU per job by phase and thread kind as bench/host.ts reports it.
 */
export async function batch(
  context: LoadContext,
  record: string,
  draws: number,
  reference: Record<string, unknown> | null,
): Promise<void> {
  const { stack, scale } = context;
  const api = apiFor(stack);
  const items = scale.batchItems;
  const before = await readJobCounters(stack.workerMetrics);
  const start = cpuReading(stack.pids, stack.backend);
  const t0 = performance.now();
  const submitted = await submitBatch(api, stack.fixtureIds.slice(0, items), draws);
  const submitMs = performance.now() - t0;
  const afterSubmission = cpuReading(stack.pids, stack.backend);
  await untilFinished(api, submitted, BATCH_POLL_MS);
  const finishedMs = performance.now() - t0;
  const afterRunning = cpuReading(stack.pids, stack.backend);
  await readAllResults(api, submitted);
  const totalMs = performance.now() - t0;
  const end = cpuReading(stack.pids, stack.backend);
  const ran = jobsBetween(before, await readJobCountersAfter(stack.workerMetrics, before, items));
  const perJob = cpuPerJob(start, end, items);
  context.emit({
    record,
    work: `batch of ${items} fixtures x ${draws} draws: submission to the last NDJSON result`,
    items,
    draws,
    seconds: round(totalMs / 1000, 3),
    submission_s: round(submitMs / 1000, 3),
    results_stream_s: round((totalMs - finishedMs) / 1000, 3),
    ms_per_job: round(totalMs / items, 3),
    gpu_s: ran.gpuSeconds === null ? null : round(ran.gpuSeconds, 3),
    gpu_busy: ran.gpuSeconds === null ? null : round(ran.gpuSeconds / (totalMs / 1000), 3),
    engine_alone: reference,
    cpu_ms_per_job: {
      all: cpuFields(perJob, stack.backend),
      submission: cpuFields(cpuPerJob(start, afterSubmission, items), stack.backend),
      running: cpuFields(cpuPerJob(afterSubmission, afterRunning, items), stack.backend),
      results: cpuFields(cpuPerJob(afterRunning, end, items), stack.backend),
    },
    engine: ran.engine,
    jobs_gpu: ran.jobs_gpu,
    jobs_cpu: ran.jobs_cpu,
  });
}

/** (e) 1,000-draw cache misses one at a time: p50 end to end. */
export async function sequentialMisses(context: LoadContext): Promise<void> {
  const { stack, scale } = context;
  const api = apiFor(stack);
  const before = await readJobCounters(stack.workerMetrics);
  const timed: Timed[] = [];
  // From 1,100 draws down: no request repeats an earlier workload's inputs (the batches ran 1,000).
  while (timed.length < scale.misses && context.inTime())
    timed.push(await simulate(api, missBody(stack, context.nextRequest(), 1100)));
  const ran = jobsBetween(before, await readJobCountersAfter(stack.workerMetrics, before, timed.length));
  context.emit({
    record: 'misses',
    work: `about 1,000-draw cache misses one at a time, ${timed.length} requests`,
    requests: timed.length,
    complete: timed.length === scale.misses,
    ...latencies(timed),
    gpu_ms_per_job:
      ran.gpuSeconds === null || timed.length === 0 ? null : round((ran.gpuSeconds * 1000) / timed.length, 3),
    engine: ran.engine,
    jobs_gpu: ran.jobs_gpu,
    jobs_cpu: ran.jobs_cpu,
  });
}

/** The path's minutes: kick-off to the tenth minute of the second half's added time (docs/api.md §4.14). */
const PATH_THROUGH = '90+10';
/** Issue 52's goal for a path of 100,000 draws a minute on a GPU host. */
const PATH_GOAL_MS = 150;

/**
 * (f) A win-probability path (docs/api.md §4.14): one in-play run a minute from kick-off, 110 of them,
 * queued as a batch; from submission to the last NDJSON line, beside the GPU time of its jobs. A goal
 * in the 23rd minute: the minutes after it start from 1–0, so no two minutes share their inputs.
 */
export async function winProbabilityPath(context: LoadContext): Promise<void> {
  const { stack, scale } = context;
  const api = apiFor(stack);
  const draws = scale.pathDraws;
  const before = await readJobCounters(stack.workerMetrics);
  const fixture = stack.fixtureIds[context.nextRequest() % stack.fixtureIds.length];
  const t0 = performance.now();
  const answer = await fetch(`${api.base}/v1/simulations/path`, {
    method: 'POST',
    headers: api.headers,
    body: JSON.stringify({
      fixture_id: fixture,
      events: [{ minute: '23', type: 'goal', team: 'home' }],
      through: PATH_THROUGH,
      draws,
    }),
  });
  const submitted = (await answer.json()) as SubmittedBatch;
  if (answer.status !== 202)
    throw new Error(`path: ${answer.status} ${JSON.stringify(submitted).slice(0, 300)}`);
  const submitMs = performance.now() - t0;
  await untilFinished(api, submitted, BATCH_POLL_MS);
  const finishedMs = performance.now() - t0;
  await readAllResults(api, submitted);
  const totalMs = performance.now() - t0;
  const steps = submitted.items.length;
  const ran = jobsBetween(before, await readJobCountersAfter(stack.workerMetrics, before, steps));
  context.emit({
    record: 'path',
    work: `win-probability path: ${steps} minutes x ${draws} draws, submission to the last NDJSON result`,
    steps,
    draws_per_step: draws,
    ms: round(totalMs, 1),
    submission_ms: round(submitMs, 1),
    results_stream_ms: round(totalMs - finishedMs, 1),
    gpu_ms: ran.gpuSeconds === null ? null : round(ran.gpuSeconds * 1000, 1),
    goal_ms: scale.name === 'full' ? PATH_GOAL_MS : null,
    engine: ran.engine,
    jobs_gpu: ran.jobs_gpu,
    jobs_cpu: ran.jobs_cpu,
  });
}
