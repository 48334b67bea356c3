// The GPU engine as the rest of the service sees it: the run() shape of src/engine-contract/run.ts
// (the CPU engine's) plus the GPU time of each job, a state object for /healthz and /metrics, and the
// promise that no job is lost with the device. Jobs queue here, in the fair order of their lanes
// (src/engine-contract/fair-slices.ts), and are packed into a dispatch whenever
// the worker has fewer than MAX_DISPATCHES_IN_FLIGHT, so small jobs of several organisations share a
// dispatch instead of paying one each, and the worker packs and uploads the next dispatch while the GPU
// runs the one before it. A lost device sends the jobs in flight (and any that arrive while it is lost)
// to the CPU engine and the worker restarts.
import { SHARE_ENV, Worker, type WorkerOptions } from 'node:worker_threads';
import { eventTablesOf } from '../src/engine-contract/event-tables.js';
import { type FairSlices, makeFairSlices } from '../src/engine-contract/fair-slices.js';
import { type CompiledFixture, finalizeCounters } from '../src/engine-contract/layout.js';
import type { EngineRun, EngineRunOptions, FixtureRunner, RunShare } from '../src/engine-contract/run.js';
import type { AdapterPolicy } from './adapter.js';
import type { FromWorker, RunMessage, ToWorker, WorkerData } from './worker-protocol.js';

export interface GpuEngineRun extends EngineRun {
  /** GPU time of this job: its share (by draws) of its dispatch; 0 when the CPU ran it. */
  gpuMs: number;
  /** How gpuMs was measured: timestamp queries around the pass, submit-to-readback wall time, or not (CPU). */
  timing: 'timestamp' | 'wall' | 'cpu';
}

/** Which engine ran a set of jobs, and GPU time only when the GPU ran every one of them. */
export interface RunsEngine {
  /** `gpu`, `cpu`, or `gpu, partly re-run on the CPU`: a row or record names it beside its figures. */
  label: 'gpu' | 'cpu' | 'gpu, partly re-run on the CPU';
  jobs: number;
  jobsOnCpu: number;
  /**
   * Summed GPU time of the jobs; null unless the GPU ran all of them, since a CPU share would turn
   * draws over GPU time into a speed nobody measured (or a division by zero).
   */
  gpuMs: number | null;
  timing: 'timestamp' | 'wall' | null;
}

export function runsEngine(runs: readonly GpuEngineRun[]): RunsEngine {
  const jobsOnCpu = runs.filter((run) => run.engine !== 'gpu').length;
  const allGpu = jobsOnCpu === 0 && runs.length > 0;
  const label = allGpu ? 'gpu' : jobsOnCpu === runs.length ? 'cpu' : 'gpu, partly re-run on the CPU';
  const timings = new Set(runs.map((run) => run.timing));
  return {
    label,
    jobs: runs.length,
    jobsOnCpu,
    gpuMs: allGpu ? runs.reduce((sum, run) => sum + run.gpuMs, 0) : null,
    timing: allGpu && timings.size === 1 ? (runs[0]!.timing as 'timestamp' | 'wall') : null,
  };
}

export interface BatchJob extends EngineRunOptions {
  compiled: CompiledFixture;
}

export type GpuEngineStatus = 'starting' | 'ready' | 'lost' | 'unavailable';

export interface GpuEngineState {
  state: GpuEngineStatus;
  /** Adapter description once the worker has one, e.g. `nvidia / NVIDIA H100 ... (vulkan)`. */
  adapter: string | null;
  software: boolean | null;
  timing: 'timestamp' | 'wall' | null;
  /** Worker restarts after device losses or crashes. */
  restarts: number;
  /** Why the engine is unavailable or was last lost or failed. */
  reason: string | null;
  dispatches: number;
  gpuDraws: number;
  /** Jobs the CPU engine ran because the GPU was lost, failing or unavailable. */
  cpuRetries: number;
  queuedJobs: number;
  /** Dispatches that ran past their deadline and were taken for a lost device (docs/gpu.md "Watchdog"). */
  watchdogFirings: number;
  /** Workers left behind by the watchdog: no longer used, never destroyed (destroy waits for the queue). */
  abandonedWorkers: number;
}

/**
 * The watchdog's deadline for a dispatch: `multiple` times its estimate (draws times the measured
 * milliseconds per draw), and never less than `floorMs`.
 */
export interface WatchdogOptions {
  /** Default 10. */
  multiple?: number;
  /** Default 60,000 ms; tests set a tiny one to make the watchdog fire on llvmpipe. */
  floorMs?: number;
}

export interface GpuEngineOptions extends AdapterPolicy {
  /** The CPU engine that takes over jobs when the GPU is lost or unavailable (same counts, bit for bit). */
  fallback?: FixtureRunner;
  /** Pause before a lost worker is restarted. */
  restartDelayMs?: number;
  /**
   * Upper bound of draws per dispatch, so one huge batch does not hold small jobs back for long
   * (2^24 draws by default: about 0.1 s of kernel on an H100-class GPU by instruction count).
   */
  maxDrawsPerDispatch?: number;
  watchdog?: WatchdogOptions;
}

export interface GpuEngine {
  run(compiled: CompiledFixture, options: EngineRunOptions): Promise<GpuEngineRun>;
  /** Queues every job at once, so they are packed into as few dispatches as the limits allow. */
  runBatch(jobs: readonly BatchJob[]): Promise<GpuEngineRun[]>;
  state(): GpuEngineState;
  /** Resolves once the worker is ready or known to be unavailable (or lost while starting). */
  started(): Promise<GpuEngineState>;
  /** Destroys the GPU device on purpose (fault drills): jobs in flight go to the CPU, the worker restarts. */
  loseDevice(): void;
  close(): Promise<void>;
}

const DEFAULT_RESTART_DELAY_MS = 1_000;
/**
 * Dispatches the worker holds at once: while the GPU runs one, the worker packs, copies and uploads the
 * next (its tables reach the GPU in queue order, after the running dispatch has read its own). On an
 * H200 the host work of a 2^24-draw dispatch of 100,000-draw jobs was about a third of its GPU time;
 * overlapping it took 1,000 x 100,000 draws from 1.72 to 1.40 s (docs/gpu.md "The first NVIDIA runs").
 */
const MAX_DISPATCHES_IN_FLIGHT = 2;
const DEFAULT_MAX_DRAWS_PER_DISPATCH = 1 << 24;
/** How long a worker may take to settle its dispatch before it is terminated regardless. */
const RETIRE_TIMEOUT_MS = 30_000;
const DEFAULT_WATCHDOG_MULTIPLE = 10;
const DEFAULT_WATCHDOG_FLOOR_MS = 60_000;
/**
 * Milliseconds per draw before the first dispatch is measured, on the slow side: a hardware GPU at a
 * million draws per second (an H100 should do far better), a software adapter at a thousand.
 */
const INITIAL_MS_PER_DRAW = { hardware: 1e-3, software: 1 };

/**
 * Starts the worker: dist/gpu/gpu-worker.js when built; under tsx/vitest the .ts source, through tsx's
 * hooks registered inside the worker (Node 20 workers ignore `--import` in execArgv), as the CPU pool
 * does. SHARE_ENV makes the worker's process.env the process's real environment, so the EGL_PLATFORM
 * that gpu/adapter.ts sets reaches Mesa (a worker's private copy never reaches C code).
 */
function spawnWorker(data: WorkerData): Worker {
  const options: WorkerOptions = { workerData: data, name: 'matchsim-gpu', env: SHARE_ENV };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./gpu-worker.js', import.meta.url), options);
  const source = new URL('./gpu-worker.ts', import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/**
 * Stops a worker without tearing Dawn down under its feet: the worker settles its dispatch, destroys
 * the device and says so before it is terminated (terminating a thread that still holds an unsettled
 * Dawn promise aborts the whole process). A worker that does not answer in time is terminated anyway.
 */
/**
 * The watchdog's way out of a dispatch that does not finish: the worker is left alone, not destroyed
 * (`device.destroy()` waits for the queue, so it would block behind the hung dispatch) and not
 * terminated (terminating a thread that holds an unsettled Dawn promise aborts the whole process). It is
 * asked to close once its dispatch settles, if it ever does, and it no longer keeps the process alive.
 */
function abandonWorker(abandoned: Worker): void {
  abandoned.removeAllListeners();
  abandoned.on('error', () => {});
  abandoned.unref();
  if (abandoned.threadId !== -1) {
    const close: ToWorker = { kind: 'close' };
    abandoned.postMessage(close);
  }
}

async function retireWorker(retiring: Worker): Promise<void> {
  retiring.removeAllListeners();
  retiring.on('error', () => {});
  if (retiring.threadId !== -1) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, RETIRE_TIMEOUT_MS);
      const finish = () => {
        clearTimeout(timer);
        resolve();
      };
      retiring.on('message', (message: FromWorker) => {
        if (message.kind === 'closed') finish();
      });
      retiring.on('exit', finish);
      const close: ToWorker = { kind: 'close' };
      retiring.postMessage(close);
    });
  }
  await retiring.terminate();
}

export function createGpuEngine(options: GpuEngineOptions): GpuEngine {
  const core: EngineCore = {
    options,
    policy: {
      mode: options.mode,
      ...(options.allowSoftware === undefined ? {} : { allowSoftware: options.allowSoftware }),
    },
    restartDelayMs: options.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS,
    maxDrawsPerDispatch: options.maxDrawsPerDispatch ?? DEFAULT_MAX_DRAWS_PER_DISPATCH,
    status: {
      state: 'starting',
      adapter: null,
      software: null,
      timing: null,
      restarts: 0,
      reason: null,
      dispatches: 0,
      gpuDraws: 0,
      cpuRetries: 0,
      queuedJobs: 0,
      watchdogFirings: 0,
      abandonedWorkers: 0,
    },
    watchdog: {
      multiple: options.watchdog?.multiple ?? DEFAULT_WATCHDOG_MULTIPLE,
      floorMs: options.watchdog?.floorMs ?? DEFAULT_WATCHDOG_FLOOR_MS,
    },
    msPerDraw: INITIAL_MS_PER_DRAW.hardware,
    queue: makeFairSlices<PendingJob>(),
    worker: null,
    maxRuns: 1,
    inFlight: [],
    lastDoneAt: 0,
    nextDispatchId: 1,
    closed: false,
    restartTimer: null,
    startWaiters: [],
  };
  startWorker(core);
  return {
    run(compiled, runOptions) {
      const result = enqueue(core, compiled, runOptions);
      pump(core);
      return result;
    },
    runBatch(jobs) {
      const results = jobs.map((job) => enqueue(core, job.compiled, job));
      pump(core);
      return Promise.all(results);
    },
    state: () => snapshot(core),
    started: () =>
      core.status.state === 'starting'
        ? new Promise<GpuEngineState>((resolve) => core.startWaiters.push(resolve))
        : Promise.resolve(snapshot(core)),
    loseDevice() {
      const message: ToWorker = { kind: 'lose-device' };
      core.worker?.postMessage(message);
    },
    close: () => closeEngine(core),
  };
}

/** The lane of jobs without a share: one, whose jobs go in the order they came. */
const UNNAMED_SHARE: RunShare = { lane: '', weight: 1, interactive: false };

interface InFlight {
  id: number;
  jobs: PendingJob[];
  draws: number;
  postedAt: number;
  watchdog: NodeJS.Timeout;
}

interface PendingJob {
  /** What its lane is charged: its draws. */
  draws: number;
  compiled: CompiledFixture;
  options: EngineRunOptions;
  resolve: (result: GpuEngineRun) => void;
  reject: (error: unknown) => void;
}

/** One engine's state, shared by the functions below (createGpuEngine makes it; nothing else sees it). */
interface EngineCore {
  options: GpuEngineOptions;
  /** What the worker starts with: the adapter policy. */
  policy: WorkerData;
  restartDelayMs: number;
  maxDrawsPerDispatch: number;
  status: GpuEngineState;
  /**
   * Jobs waiting for the worker, in the fair order of their lanes (src/engine-contract/fair-slices.ts): a
   * dispatch takes the next job of the lane that has had least of the GPU lately, so a job of one lane
   * goes into the next dispatch however many of another lane's wait before it.
   */
  queue: FairSlices<PendingJob>;
  worker: Worker | null;
  /** Most runs one dispatch holds, as the worker's device allows. */
  maxRuns: number;
  /** Dispatches sent to the worker, oldest first (MAX_DISPATCHES_IN_FLIGHT at most), each with its watchdog. */
  inFlight: InFlight[];
  /** When the worker last finished a dispatch: a dispatch queued behind another starts then. */
  lastDoneAt: number;
  watchdog: Required<WatchdogOptions>;
  /** Measured wall milliseconds per draw of the last dispatches (the watchdog's estimate). */
  msPerDraw: number;
  nextDispatchId: number;
  closed: boolean;
  restartTimer: NodeJS.Timeout | null;
  /** Callers of started() while the worker is starting. */
  startWaiters: ((state: GpuEngineState) => void)[];
}

function snapshot(core: EngineCore): GpuEngineState {
  return { ...core.status, queuedJobs: core.queue.size() };
}

function settleStart(core: EngineCore): void {
  const waiters = core.startWaiters;
  core.startWaiters = [];
  for (const waiter of waiters) waiter(snapshot(core));
}

/** Queues a job; the caller pumps, so a batch is queued whole before the first dispatch packs it. */
function enqueue(
  core: EngineCore,
  compiled: CompiledFixture,
  runOptions: EngineRunOptions,
): Promise<GpuEngineRun> {
  return new Promise<GpuEngineRun>((resolve, reject) => {
    if (core.closed) throw new Error('The GPU engine is closed.');
    const job: PendingJob = { draws: runOptions.draws, compiled, options: runOptions, resolve, reject };
    if (core.status.state === 'lost' || core.status.state === 'unavailable') {
      runOnCpu(core, job, core.status.state);
      return;
    }
    core.queue.add(runOptions.share ?? UNNAMED_SHARE, [job]);
  });
}

function runOnCpu(core: EngineCore, job: PendingJob, why: string): void {
  const fallback = core.options.fallback;
  if (!fallback) {
    job.reject(new Error(`The GPU engine is ${why} and no CPU engine is configured.`));
    return;
  }
  core.status.cpuRetries++;
  fallback
    .run(job.compiled, job.options)
    .then((run) => job.resolve({ ...run, gpuMs: 0, timing: 'cpu' }), job.reject);
}

/** Sends the dispatches in flight and every queued job to the CPU engine. */
function drainToCpu(core: EngineCore, why: string): void {
  const jobs = core.inFlight.flatMap((sent) => sent.jobs);
  for (let job = core.queue.next(); job !== null; job = core.queue.next()) jobs.push(job);
  for (const sent of core.inFlight) clearTimeout(sent.watchdog);
  core.inFlight = [];
  for (const job of jobs) runOnCpu(core, job, why);
}

/** Takes the dispatch `id` out of the ones in flight (null if it is not there any more). */
function takeInFlight(core: EngineCore, id: number): InFlight | null {
  const at = core.inFlight.findIndex((sent) => sent.id === id);
  if (at < 0) return null;
  const [sent] = core.inFlight.splice(at, 1);
  clearTimeout(sent!.watchdog);
  return sent!;
}

/** Packs queued jobs into dispatches while the worker is ready and holds fewer than it may. */
function pump(core: EngineCore): void {
  while (core.inFlight.length < MAX_DISPATCHES_IN_FLIGHT && sendDispatch(core)) {}
}

/** Packs the queued jobs into the next dispatch and sends it; false when there is nothing to send. */
function sendDispatch(core: EngineCore): boolean {
  const { worker, queue } = core;
  if (core.closed || !worker || core.status.state !== 'ready' || queue.size() === 0) return false;
  const jobs: PendingJob[] = [];
  let draws = 0;
  for (let next = queue.peek(); next !== null && jobs.length < core.maxRuns; next = queue.peek()) {
    if (jobs.length > 0 && draws + next.draws > core.maxDrawsPerDispatch) break;
    jobs.push(queue.next()!);
    draws += next.draws;
  }
  const id = core.nextDispatchId++;
  // A dispatch sent behind others runs after them: its deadline covers their draws too.
  const ahead = core.inFlight.reduce((sum, sent) => sum + sent.draws, 0);
  const deadlineMs = Math.max(
    core.watchdog.floorMs,
    core.watchdog.multiple * (ahead + draws) * core.msPerDraw,
  );
  // Unreferenced like the worker: a waiting job keeps its caller waiting, not the process alive.
  const watchdog = setTimeout(() => onWatchdog(core, id, draws, deadlineMs), deadlineMs).unref();
  core.inFlight.push({ id, jobs, draws, postedAt: performance.now(), watchdog });
  const runs: RunMessage[] = jobs.map((job) => ({
    fixture: job.compiled.fixture,
    // Only the tables the kernel reads cross to the worker; event tables are built once per fixture.
    eventTables: eventTablesOf(job.compiled.thresholds),
    seedLo: job.options.seed.lo >>> 0,
    seedHi: job.options.seed.hi >>> 0,
    firstDraw: 0,
    drawCount: job.options.draws,
  }));
  const message: ToWorker = { kind: 'dispatch', id, runs };
  worker.postMessage(message);
  return true;
}

function completeDispatch(core: EngineCore, message: Extract<FromWorker, { kind: 'done' }>): void {
  const { status } = core;
  const sent = takeInFlight(core, message.id);
  if (!sent) return;
  const { jobs, postedAt, draws: totalDraws } = sent;
  const now = performance.now();
  const runMs = now - postedAt;
  // The watchdog's estimate: the dispatch's own time, from when the worker finished the one before it.
  const ownMs = now - Math.max(postedAt, core.lastDoneAt);
  core.lastDoneAt = now;
  core.msPerDraw = 0.7 * core.msPerDraw + 0.3 * (ownMs / totalDraws);
  status.dispatches++;
  status.gpuDraws += totalDraws;
  jobs.forEach((job, index) => {
    const counts = message.counters[index]!;
    finalizeCounters(counts);
    job.options.onProgress?.(job.options.draws, job.options.draws);
    job.resolve({
      counts,
      engine: 'gpu',
      backend: status.adapter ?? 'gpu',
      runMs,
      gpuMs: (message.gpuMs * job.options.draws) / totalDraws,
      timing: message.timing,
    });
  });
  pump(core);
}

function startWorker(core: EngineCore): void {
  core.status.state = 'starting';
  const spawned = spawnWorker(core.policy);
  core.worker = spawned;
  // Pending jobs keep the caller waiting, not the process alive: the service's server does that.
  spawned.unref();
  spawned.on('message', (message: FromWorker) => onWorkerMessage(core, message));
  spawned.on('error', (error) => {
    if (core.worker === spawned) onLost(core, `GPU worker crashed: ${error.message}`);
  });
  spawned.on('exit', (code) => {
    if (core.worker === spawned) onLost(core, `GPU worker exited with code ${code}`);
  });
}

/** A dispatch ran past its deadline: a lost device, whose worker is abandoned rather than retired. */
function onWatchdog(core: EngineCore, id: number, draws: number, deadlineMs: number): void {
  const sent = core.inFlight.find((each) => each.id === id);
  if (core.closed || !sent) return;
  const elapsed = performance.now() - sent.postedAt;
  core.status.watchdogFirings++;
  onLost(
    core,
    `watchdog: dispatch ${id} of ${draws} draws ran ${elapsed.toFixed(0)} ms, past its deadline of ${deadlineMs.toFixed(0)} ms`,
    'abandon',
  );
}

/** The worker or its device is gone: its jobs go to the CPU and a new worker starts after a pause. */
function onLost(core: EngineCore, reason: string, worker: 'retire' | 'abandon' = 'retire'): void {
  if (core.closed) return;
  core.status.state = 'lost';
  core.status.reason = reason;
  const dying = core.worker;
  core.worker = null;
  if (dying && worker === 'abandon') {
    core.status.abandonedWorkers++;
    abandonWorker(dying);
  } else if (dying) void retireWorker(dying);
  drainToCpu(core, 'recovering from a lost device');
  settleStart(core);
  const restartTimer = setTimeout(() => {
    core.restartTimer = null;
    if (core.closed) return;
    core.status.restarts++;
    startWorker(core);
  }, core.restartDelayMs);
  core.restartTimer = restartTimer;
  restartTimer.unref();
}

function onWorkerMessage(core: EngineCore, message: FromWorker): void {
  const { status } = core;
  switch (message.kind) {
    case 'ready':
      status.state = 'ready';
      status.adapter = message.description;
      status.software = message.software;
      status.timing = message.timing;
      status.reason = null;
      core.maxRuns = message.maxRuns;
      if (status.restarts === 0) {
        core.msPerDraw = message.software ? INITIAL_MS_PER_DRAW.software : INITIAL_MS_PER_DRAW.hardware;
      }
      settleStart(core);
      pump(core);
      break;
    case 'unavailable':
      status.state = 'unavailable';
      status.reason = message.reason;
      if (core.worker) void retireWorker(core.worker);
      core.worker = null;
      drainToCpu(core, 'unavailable');
      settleStart(core);
      break;
    case 'done':
      completeDispatch(core, message);
      break;
    case 'failed':
      // Not a device loss (that is reported on its own): the CPU engine redoes the jobs.
      status.reason = message.message;
      for (const job of takeInFlight(core, message.id)?.jobs ?? []) {
        runOnCpu(core, job, `failing (${message.message})`);
      }
      pump(core);
      break;
    case 'lost':
      onLost(core, `device lost (${message.reason}): ${message.message}`);
      break;
    case 'closed':
      break;
  }
}

async function closeEngine(core: EngineCore): Promise<void> {
  if (core.closed) return;
  core.closed = true;
  if (core.restartTimer) clearTimeout(core.restartTimer);
  drainToCpu(core, 'closing');
  settleStart(core);
  const closing = core.worker;
  core.worker = null;
  if (closing) await retireWorker(closing);
}
