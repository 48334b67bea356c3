// The engine the workers run jobs on (ENGINE=auto|gpu|cpu, docs/decisions.md §10): compiles each job's
// inputs, runs them on the GPU engine (many jobs packed into one dispatch) or the CPU engine, and builds the
// simulation document. It also keeps the measured seconds per draw that GPU-seconds admission uses. The
// engine knows nothing of the queue, the database or HTTP: a job comes in as an EngineJob and leaves as a
// RunOutcome; the worker maps its queue jobs to and from these.
import { type CpuEngine, createCpuEngine } from '../../fallback/cpu-engine.js';
import { recordSamplePaths } from '../../fallback/engine.js';
import { createGpuEngine, type GpuEngine, type GpuEngineState } from '../../gpu/engine.js';
import { compileFixtureCached } from './compile.js';
import { type CompiledFixture, type EngineSeed, seedFromHex } from './contract/layout.js';
import type { MatchInputs } from './contract/match-inputs.js';
import { defaultModelParams, type ModelParams } from './contract/model-params.js';
import { type EngineRun, MAX_DRAWS_PER_JOB, MIN_DRAWS_PER_JOB } from './contract/run.js';
import { buildSimulationDocument, documentWireText, SAMPLE_PATHS } from './document.js';
import { loadModelStatus, type ModelStatus } from './model-status.js';

/** One simulation for the engine: what the queue's job holds, as far as the engine needs it. */
export interface EngineJob {
  id: string;
  /** Test keys' jobs always run on the CPU engine. */
  mode: 'live' | 'test';
  draws: number;
  /** Up to 16 hex digits: the run's u64 seed. */
  seed: string;
  payload: JobPayload;
  /** The data version of the inputs (simulation.basis.data_version). */
  dataVersion: string;
  /** How long the job waited in the queue (simulation.timing.queued_ms). */
  queuedMs: number;
}

/**
 * What a job carries for the engine (jobs.inputs): the resolved inputs and their watermark. The stored
 * payload may carry more fields (the request's view for its delivery); the engine ignores them.
 */
export interface JobPayload {
  match: MatchInputs;
  /** When the inputs were captured (simulation.basis.as_of). */
  as_of: string;
}

export interface RunSuccess {
  jobId: string;
  document: unknown;
  /** The document as the wire carries it (documentWireText): what results store and deliveries send. */
  documentJson: string;
  engine: string;
  runMs: number;
  gpuMs: number;
}

export interface RunFailure {
  jobId: string;
  error: { code: string; message: string };
}

export type RunOutcome = RunSuccess | RunFailure;

export interface RunContext {
  /** Report draws done for a job (shown as progress on the result path). */
  progress(jobId: string, drawsDone: number): Promise<void>;
  /** Aborted when the caller cannot wait (a shutdown); jobs not yet started then get no outcome. */
  signal: AbortSignal;
  /**
   * Told of each job's outcome as soon as it is known, before the whole batch ends: the CPU engine
   * finishes a pack's jobs one after another, and the worker stores each while the others still run.
   */
  onOutcome?: ((outcome: RunOutcome) => void) | undefined;
}

/** One outcome per job; a job that cannot run fails alone, the others run. */
export type RunBatch = (jobs: EngineJob[], context: RunContext) => Promise<RunOutcome[]>;

/** The engine's state for /healthz and the admission gate: `state` plus details. */
export interface EngineHealth {
  state: string;
  [detail: string]: unknown;
}

/** The one check of a job's draws: the engines below take the count as given. */
function checkDraws(draws: number): void {
  if (!Number.isInteger(draws) || draws < MIN_DRAWS_PER_JOB || draws > MAX_DRAWS_PER_JOB) {
    throw new RangeError(
      `draws must be an integer from ${MIN_DRAWS_PER_JOB} to ${MAX_DRAWS_PER_JOB}, not ${draws}`,
    );
  }
}

// Before a run has been measured: about 1 s per million draws on one CPU core, 2 ms on a GPU.
const INITIAL_SECONDS_PER_DRAW = { cpu: 1e-6, gpu: 2e-9 };

export interface SimulationEngine {
  runBatch: RunBatch;
  /** Engine seconds a run of `draws` is expected to take, for the GPU-seconds budget (docs/decisions.md §3). */
  estimateSeconds(draws: number): number;
  health(): EngineHealth;
  /** Resolves when the engine can take work (the GPU worker started or was found unavailable). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface SimulationEngineOptions {
  mode: 'auto' | 'gpu' | 'cpu';
  /** Worker threads of the CPU engine; default one per core; 0 simulates on the calling thread. */
  cpuThreads?: number | undefined;
  params?: ModelParams;
  clock?: () => Date;
}

export function createSimulationEngine(options: SimulationEngineOptions): SimulationEngine {
  const params = options.params ?? defaultModelParams;
  const clock = options.clock ?? (() => new Date());
  const modelStatus = loadModelStatus(params);
  const cpu: CpuEngine = createCpuEngine(
    options.cpuThreads === undefined ? {} : { threads: options.cpuThreads },
  );
  const gpu: GpuEngine | null =
    options.mode === 'cpu' ? null : createGpuEngine({ mode: options.mode, fallback: cpu });
  const deps: RunnerDeps = {
    mode: options.mode,
    params,
    clock,
    modelStatus,
    cpu,
    gpu,
    gpuState: null,
    secondsPerDraw: { ...INITIAL_SECONDS_PER_DRAW },
  };
  const started = gpu ? gpu.started().then((state) => (deps.gpuState = state)) : Promise.resolve(null);
  return {
    runBatch: (jobs, context) => runBatch(deps, jobs, context),
    estimateSeconds(draws) {
      return draws * (usingGpu(deps) ? deps.secondsPerDraw.gpu : deps.secondsPerDraw.cpu);
    },
    health: () => engineHealth(deps),
    async ready() {
      await started;
    },
    async close() {
      await gpu?.close();
      await cpu.close();
    },
  };
}

/** What the engine's functions share: its configuration, its two engines and its measurements. */
interface RunnerDeps {
  mode: SimulationEngineOptions['mode'];
  params: ModelParams;
  clock: () => Date;
  modelStatus: ModelStatus;
  cpu: CpuEngine;
  gpu: GpuEngine | null;
  /** The GPU engine's state once it started or was found unavailable; null until then. */
  gpuState: GpuEngineState | null;
  /** Measured engine seconds per draw, per engine. */
  secondsPerDraw: { cpu: number; gpu: number };
}

/** A job whose draws are in range and whose inputs compiled. */
interface PreparedJob {
  job: EngineJob;
  seed: EngineSeed;
  compiled: CompiledFixture;
}

type RunResult = EngineRun & { gpuMs?: number };

function usingGpu(deps: RunnerDeps): boolean {
  return deps.gpu !== null && (deps.gpuState?.state ?? deps.gpu.state().state) === 'ready';
}

async function runBatch(deps: RunnerDeps, jobs: EngineJob[], context: RunContext): Promise<RunOutcome[]> {
  const outcomes: RunOutcome[] = [];
  const emit = (outcome: RunOutcome) => {
    outcomes.push(outcome);
    context.onOutcome?.(outcome);
  };
  const failed = (job: EngineJob, error: unknown) =>
    emit({ jobId: job.id, error: { code: 'simulation_failed', message: (error as Error).message } });
  const record = (item: PreparedJob, run: RunResult) => emit(recordRun(deps, item, run));
  if (!deps.gpu || !usingGpu(deps)) {
    await compileAndRunOnCpu(deps, jobs, context, record, failed);
    return outcomes;
  }
  // A job whose draws are out of range or whose inputs do not compile fails alone; the others run.
  const prepared = jobs.flatMap((job) => {
    try {
      return [prepareJob(job, deps.params)];
    } catch (error) {
      failed(job, error);
      return [];
    }
  });
  // Test keys always run on the CPU engine (docs/api.md §1: synthetic output); live jobs on the GPU.
  const onGpu = prepared.filter(({ job }) => job.mode === 'live');
  let onCpu = prepared.filter((item) => !onGpu.includes(item));
  if (onGpu.length > 0 && !(await runOnGpu(deps.gpu, onGpu, context, record))) {
    // A dispatch that failed outright: the CPU engine gives the same counts.
    onCpu = [...onCpu, ...onGpu];
  }
  await runOnCpu(deps.cpu, onCpu, context, record, failed);
  return outcomes;
}

function prepareJob(job: EngineJob, params: ModelParams): PreparedJob {
  checkDraws(job.draws);
  const seed = seedFromHex(job.seed.padStart(16, '0').slice(-16));
  return { job, seed, compiled: compileFixtureCached(job.payload.match, params) };
}

/** Runs the jobs as one GPU batch and records them; false when the batch failed outright. */
async function runOnGpu(
  gpu: GpuEngine,
  items: readonly PreparedJob[],
  context: RunContext,
  record: (item: PreparedJob, run: RunResult) => void,
): Promise<boolean> {
  try {
    const runs = await gpu.runBatch(
      items.map(({ job, seed, compiled }) => ({
        compiled,
        draws: job.draws,
        seed,
        onProgress: (done: number) => void context.progress(job.id, done),
      })),
    );
    runs.forEach((run, i) => {
      record(items[i]!, run);
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * Without a GPU: each job is compiled just before it goes to the CPU engine's pool, with a turn of the
 * event loop between compiles (a compile takes milliseconds of calibration), so the pool starts on the
 * first job at once and the worker stores finished documents meanwhile, instead of every thread waiting
 * for the whole pack's compiles. A job that does not compile, or fails, fails alone.
 */
async function compileAndRunOnCpu(
  deps: RunnerDeps,
  jobs: readonly EngineJob[],
  context: RunContext,
  record: (item: PreparedJob, run: RunResult) => void,
  failed: (job: EngineJob, error: unknown) => void,
): Promise<void> {
  const runs: Promise<void>[] = [];
  for (const [index, job] of jobs.entries()) {
    if (index > 0) await new Promise((resolve) => setImmediate(resolve));
    // Aborted (a shutdown): the jobs not yet handed to the pool get no outcome; their leases run out.
    if (context.signal.aborted) break;
    let item: PreparedJob;
    try {
      item = prepareJob(job, deps.params);
    } catch (error) {
      failed(job, error);
      continue;
    }
    runs.push(runOnCpu(deps.cpu, [item], context, record, failed));
  }
  await Promise.all(runs);
}

/** Runs the jobs on the CPU engine; a job that fails there fails alone. */
async function runOnCpu(
  cpu: CpuEngine,
  items: readonly PreparedJob[],
  context: RunContext,
  record: (item: PreparedJob, run: RunResult) => void,
  failed: (job: EngineJob, error: unknown) => void,
): Promise<void> {
  // Concurrently: the pool spreads small jobs over its threads, large ones over all of them.
  await Promise.all(
    items.map(async (item) => {
      const { job, seed, compiled } = item;
      if (context.signal.aborted) return;
      try {
        const run = await cpu.run(compiled, {
          draws: job.draws,
          seed,
          onProgress: (done) => void context.progress(job.id, done),
        });
        record(item, run);
      } catch (error) {
        failed(job, error);
      }
    }),
  );
}

/** A finished run's outcome; the run also updates the engine's measured seconds per draw. */
function recordRun(deps: RunnerDeps, item: PreparedJob, run: RunResult): RunSuccess {
  const { job } = item;
  const engineMs = run.engine === 'gpu' ? (run.gpuMs ?? run.runMs) : run.runMs;
  // Exponential average of measured seconds per draw, per engine.
  const measured = engineMs / 1000 / job.draws;
  deps.secondsPerDraw[run.engine] = 0.8 * deps.secondsPerDraw[run.engine] + 0.2 * measured;
  const document = documentFor(deps, item, run);
  return {
    jobId: job.id,
    document,
    documentJson: documentWireText(document),
    engine: run.engine,
    runMs: Math.round(run.runMs),
    gpuMs: run.engine === 'gpu' ? Math.round((run.gpuMs ?? 0) * 1000) / 1000 : 0,
  };
}

function documentFor(deps: RunnerDeps, { job, seed, compiled }: PreparedJob, run: RunResult) {
  const { payload } = job;
  return buildSimulationDocument({
    inputs: payload.match,
    params: deps.params,
    counts: run.counts,
    samples: recordSamplePaths(compiled, seed, Math.min(SAMPLE_PATHS, job.draws)),
    draws: job.draws,
    seed,
    basis: { as_of: payload.as_of, data_version: job.dataVersion },
    timing: {
      engine: run.engine,
      backend: run.backend,
      queued_ms: job.queuedMs,
      run_ms: Math.round(run.runMs),
    },
    modelStatus: deps.modelStatus,
  });
}

function engineHealth(deps: RunnerDeps): EngineHealth {
  const { gpu } = deps;
  const state = gpu?.state();
  return {
    state: gpu
      ? state?.state === 'ready'
        ? 'ready'
        : state?.state === 'starting'
          ? 'starting'
          : 'cpu_fallback'
      : 'ready',
    engine: usingGpu(deps) ? 'gpu' : 'cpu',
    mode: deps.mode,
    cpu_threads: deps.cpu.threads,
    gpu: state ?? null,
    model_version: deps.params.model_version,
    checked_at: deps.clock().toISOString(),
  };
}
