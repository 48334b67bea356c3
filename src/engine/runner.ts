// The engine the workers run jobs on (ENGINE=auto|gpu|cpu, docs/decisions.md §10): compiles each job's
// inputs, runs them on the GPU engine (many jobs packed into one dispatch) or the CPU engine, and builds the
// simulation document. It also keeps the measured seconds per draw that GPU-seconds admission uses. The
// engine knows nothing of the queue, the database or HTTP: a job comes in as an EngineJob and leaves as a
// RunOutcome; the worker maps its queue jobs to and from these.
import { type CpuEngine, createCpuEngine, WHOLE_RUN_MAX_DRAWS } from '../../fallback/cpu-engine.js';
import { createGpuEngine, type GpuEngine, type GpuEngineState } from '../../gpu/engine.js';
import { seedFromHex } from '../engine-contract/layout.js';
import type { MarketInputs, MatchInputs } from '../engine-contract/match-inputs.js';
import { defaultModelParams, type ModelParams } from '../engine-contract/model-params.js';
import {
  type EngineRun,
  MAX_DRAWS_PER_JOB,
  MIN_DRAWS_PER_JOB,
  type RunShare,
} from '../engine-contract/run.js';
import { compileKey } from './compile.js';
import type { DocumentSummary } from './document-schema.js';
import { createJobThreads, type JobThreads } from './job-threads.js';
import type { FinishedDocument, HostJob, SharedCompiled } from './job-work.js';
import type { MarketFit } from './market-fit.js';
import { loadModelStatus } from './model-status.js';
import { type Begun, type LaneSlots, makeLaneSlots, makeStartGate, POOL_RUNS_AT_ONCE } from './start-gate.js';
import type { StoredDocument } from './stored-document.js';

/** One simulation for the engine: what the queue's job holds, as far as the engine needs it. */
export interface EngineJob {
  id: string;
  /** Test keys' jobs always run on the CPU engine. */
  mode: 'live' | 'test';
  draws: number;
  /** Up to 16 hex digits: the run's u64 seed. */
  seed: string;
  /** The JobPayload (job-work.ts) as the queue stored it: JSON text, parsed by the thread that uses it. */
  payloadJson: string;
  /** The data version of the inputs (simulation.basis.data_version). */
  dataVersion: string;
  /** How long the job waited in the queue (simulation.timing.queued_ms). */
  queuedMs: number;
  /**
   * Whose work it is, for the engine's fair shares of its draws (docs/decisions.md §6 "Fair shares"),
   * named by the worker; the engine compares lanes and weights and knows nothing else of them. Jobs
   * without one share one lane.
   */
  share?: RunShare | undefined;
}

export interface RunSuccess {
  jobId: string;
  /** The figures of the document that its fixture's summary shows. */
  summary: DocumentSummary;
  /** The document as the wire carries it (documentWireText), stored-form: what results store and deliveries send. */
  document: StoredDocument;
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
  /**
   * Asked just before the engine begins jobs' draws (a GPU dispatch's jobs together; on the CPU as each
   * comes up, start-gate.ts): the ids that may begin. A job left out (a batch's cancel took it while it
   * waited, docs/decisions.md §6) is not run and gets no outcome. Absent: every job may begin.
   */
  start?: ((jobIds: readonly string[]) => Promise<ReadonlySet<string>>) | undefined;
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

/** How far ahead of its engine a worker claims (drawsAhead): about this long of the engine's work. */
const CLAIM_AHEAD_SECONDS = 1;

export interface SimulationEngine {
  runBatch: RunBatch;
  /** Engine seconds a run of `draws` is expected to take, for the GPU-seconds budget (docs/decisions.md §3). */
  estimateSeconds(draws: number): number;
  /**
   * The draws this engine can begin within about CLAIM_AHEAD_SECONDS at its measured speed, and never
   * fewer than POOL_RUNS_AT_ONCE of the largest jobs: what a worker holds claimed (src/jobs/worker.ts
   * claimDraws; docs/decisions.md §6 "Claims").
   */
  drawsAhead(): number;
  /**
   * The draws of a run the engine begins beside large ones at once: the CPU engine counts such a run whole
   * on a job thread, not on the pool the large ones hold (fallback/cpu-engine.ts spreadOf). A worker claims
   * one even while its held draws leave no room (src/jobs/claim-loop.ts; docs/decisions.md §6 "Fair shares").
   */
  smallDraws: number;
  health(): EngineHealth;
  /** A fitted run's market fit, on a job thread (job-threads.ts fitMarket): its reach, before a hold. */
  fitMarket(match: MatchInputs & { market: MarketInputs }): Promise<MarketFit>;
  /** Resolves when the engine can take work (the GPU worker started or was found unavailable). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface SimulationEngineOptions {
  mode: 'auto' | 'gpu' | 'cpu';
  /**
   * Worker threads of the CPU engine and job threads (host work); default one per core; 0 does all of it
   * on the calling thread.
   */
  cpuThreads?: number | undefined;
  params?: ModelParams;
  clock?: () => Date;
}

export function createSimulationEngine(options: SimulationEngineOptions): SimulationEngine {
  const params = options.params ?? defaultModelParams;
  const clock = options.clock ?? (() => new Date());
  const cpu: CpuEngine = createCpuEngine(
    options.cpuThreads === undefined ? {} : { threads: options.cpuThreads },
  );
  const jobThreads = createJobThreads({
    setting: { params, modelStatus: loadModelStatus(params) },
    threads: options.cpuThreads,
  });
  const gpu: GpuEngine | null =
    options.mode === 'cpu' ? null : createGpuEngine({ mode: options.mode, fallback: cpu });
  const deps: RunnerDeps = {
    mode: options.mode,
    params,
    clock,
    jobThreads,
    cpu,
    gpu,
    gpuState: null,
    secondsPerDraw: { ...INITIAL_SECONDS_PER_DRAW },
    poolSlots: makeLaneSlots(POOL_RUNS_AT_ONCE),
  };
  const started = gpu ? gpu.started().then((state) => (deps.gpuState = state)) : Promise.resolve(null);
  return {
    runBatch: (jobs, context) => runBatch(deps, jobs, context),
    estimateSeconds(draws) {
      return draws * (usingGpu(deps) ? deps.secondsPerDraw.gpu : deps.secondsPerDraw.cpu);
    },
    drawsAhead: () => drawsAhead(deps),
    smallDraws: WHOLE_RUN_MAX_DRAWS,
    health: () => engineHealth(deps),
    fitMarket: (match) => jobThreads.fitMarket(match),
    async ready() {
      await started;
    },
    async close() {
      await gpu?.close();
      await cpu.close();
      await jobThreads.close();
    },
  };
}

/** What the engine's functions share: its configuration, its two engines and its measurements. */
interface RunnerDeps {
  mode: SimulationEngineOptions['mode'];
  params: ModelParams;
  clock: () => Date;
  jobThreads: JobThreads;
  cpu: CpuEngine;
  gpu: GpuEngine | null;
  /** The GPU engine's state once it started or was found unavailable; null until then. */
  gpuState: GpuEngineState | null;
  /** Measured engine seconds per draw, per engine. */
  secondsPerDraw: { cpu: number; gpu: number };
  /** The CPU pool's runs begun at a time by each lane, across every batch this engine runs (start-gate.ts). */
  poolSlots: LaneSlots;
}

/** SimulationEngine.drawsAhead: the GPU's measured speed, or the CPU's per thread times its threads. */
function drawsAhead(deps: RunnerDeps): number {
  const perSecond = usingGpu(deps)
    ? 1 / deps.secondsPerDraw.gpu
    : Math.max(1, deps.cpu.threads) / deps.secondsPerDraw.cpu;
  return Math.max(POOL_RUNS_AT_ONCE * MAX_DRAWS_PER_JOB, Math.round(perSecond * CLAIM_AHEAD_SECONDS));
}

/** A job whose draws are in range and whose inputs compiled; `release` once its outcome is known. */
interface PreparedJob {
  job: EngineJob;
  host: HostJob;
  compiled: SharedCompiled;
  release(): void;
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
  const record = (item: PreparedJob, engine: RunResult['engine'], finished: Finished) =>
    emit(recordRun(deps, item, engine, finished));
  if (!deps.gpu || !usingGpu(deps)) {
    await runOnCpu(deps, jobs, context, record, failed);
    return outcomes;
  }
  // Test keys always run on the CPU engine (docs/api.md §1: synthetic output); live jobs on the GPU, as
  // one dispatch, so they are begun together (RunContext.start) and all compiled first. A job whose
  // draws are out of range or whose inputs do not compile fails alone; the others run.
  const live = await begunTogether(
    jobs.filter((job) => job.mode === 'live'),
    context,
  );
  const onGpu = (
    await Promise.all(
      live.map(async (job) => {
        try {
          return [await prepareJob(deps, job)];
        } catch (error) {
          failed(job, error);
          return [];
        }
      }),
    )
  ).flat();
  let onCpu: (EngineJob | PreparedJob)[] = jobs.filter((job) => job.mode !== 'live');
  if (onGpu.length > 0 && !(await runOnGpu(deps, deps.gpu, onGpu, context, record, failed))) {
    // A dispatch that failed outright: the CPU engine gives the same counts.
    onCpu = [...onCpu, ...onGpu];
  }
  await runOnCpu(deps, onCpu, context, record, failed);
  return outcomes;
}

/** The jobs that may begin now (RunContext.start), asked together: one dispatch begins them all. */
async function begunTogether(jobs: EngineJob[], context: RunContext): Promise<EngineJob[]> {
  if (!context.start || jobs.length === 0) return jobs;
  const started = await context.start(jobs.map((job) => job.id));
  return jobs.filter((job) => started.has(job.id));
}

/** The job's draws checked, its seed read and its inputs compiled (once per fixture version, job-threads.ts). */
async function prepareJob(deps: RunnerDeps, job: EngineJob): Promise<PreparedJob> {
  const host = hostJobOf(deps, job);
  const { compiled, release } = await deps.jobThreads.acquire(host);
  return { job, host, compiled, release };
}

/**
 * A job to run whole on a job thread, prepared: a fixture not compiled yet is compiled and the job run
 * in one task (`finished`); one in the cache leaves `finished` null.
 */
async function prepareWholeJob(
  deps: RunnerDeps,
  job: EngineJob,
): Promise<PreparedJob & { finished: Finished | null }> {
  const host = hostJobOf(deps, job);
  const { compiled, release, finished } = await deps.jobThreads.acquireWhole(host);
  return { job, host, compiled, release, finished };
}

/** A job as the job threads see it, its draws checked first. */
function hostJobOf(deps: RunnerDeps, job: EngineJob): HostJob {
  checkDraws(job.draws);
  return {
    key: compileKey(job.payloadJson, deps.params),
    payloadJson: job.payloadJson,
    draws: job.draws,
    seed: seedFromHex(job.seed.padStart(16, '0').slice(-16)),
    dataVersion: job.dataVersion,
    queuedMs: job.queuedMs,
  };
}

/** A job's document and how long its draws took. */
type Finished = FinishedDocument & { runMs: number; gpuMs?: number | undefined };
type RecordOutcome = (item: PreparedJob, engine: RunResult['engine'], finished: Finished) => void;
type Failed = (job: EngineJob, error: unknown) => void;

/** Runs the jobs as one GPU batch and records them; false when the batch failed outright. */
async function runOnGpu(
  deps: RunnerDeps,
  gpu: GpuEngine,
  items: readonly PreparedJob[],
  context: RunContext,
  record: RecordOutcome,
  failed: Failed,
): Promise<boolean> {
  let runs: RunResult[];
  try {
    runs = await gpu.runBatch(
      items.map(({ job, host, compiled }) => ({
        compiled,
        draws: job.draws,
        seed: host.seed,
        onProgress: (done: number) => void context.progress(job.id, done),
        share: job.share,
      })),
    );
  } catch {
    return false;
  }
  // The documents on the job threads, all at once.
  await Promise.all(
    runs.map((run, i) => finishRun(deps, items[i]!, run, record, failed).finally(items[i]!.release)),
  );
  return true;
}

/** A run's counters into its document (on a job thread), then its outcome. */
async function finishRun(
  deps: RunnerDeps,
  item: PreparedJob,
  run: RunResult,
  record: RecordOutcome,
  failed: Failed,
) {
  try {
    const facts = { engine: run.engine, backend: run.backend, runMs: run.runMs };
    const finished = await deps.jobThreads.finish(item.host, item.compiled, run.counts, facts);
    record(item, run.engine, { ...finished, runMs: run.runMs, gpuMs: run.gpuMs });
  } catch (error) {
    failed(item.job, error);
  }
}

/**
 * Jobs in flight on the CPU path per job thread: enough that a thread always has its next task queued,
 * few enough that a batch of a thousand distinct fixtures holds a handful of compiled fixtures (about
 * 0.8 MB each) at a time, not all of them. Holding them all cost more in page faults than the compiles
 * themselves (docs/decisions.md §6, "What a job costs the host").
 */
const CPU_LANES_PER_THREAD = 4;

/**
 * Without a GPU: each job is begun as start-gate.ts lets it (asked of the caller just before, a run over
 * the pool once one of the engine's pool slots is free), compiled, then run as the CPU engine spreads its
 * draws (fallback/cpu-engine.ts spreadOf): 'whole' on a job thread, draws and document in one task
 * (compiled in that task too when its fixture is not compiled yet), or over the CPU engine's pool with its
 * document then built on a job thread. A job that fails fails alone. Aborted (a shutdown): the jobs not
 * yet begun get no outcome; their leases run out.
 */
async function runOnCpu(
  deps: RunnerDeps,
  jobs: readonly (EngineJob | PreparedJob)[],
  context: RunContext,
  record: RecordOutcome,
  failed: Failed,
): Promise<void> {
  const jobOf = (entry: EngineJob | PreparedJob) => ('host' in entry ? entry.job : entry);
  const gate = makeStartGate(jobs, {
    askId: (entry) => ('host' in entry ? null : entry.id),
    draws: (entry) => jobOf(entry).draws,
    pooled: (entry) => deps.cpu.spreadOf(jobOf(entry).draws) === 'pool',
    poolSlot: (entry) => deps.poolSlots.acquire(slotLaneOf(jobOf(entry))),
    start: context.start,
    signal: context.signal,
  });
  const lane = async () => {
    for (let begun = await gate.next(); begun; begun = await gate.next()) {
      await runBegun(deps, begun, context, record, failed);
    }
  };
  const lanes = Math.min(jobs.length, Math.max(1, deps.jobThreads.threads) * CPU_LANES_PER_THREAD);
  await Promise.all(Array.from({ length: lanes }, lane));
  // Aborted: jobs compiled for the GPU but not begun here give their compiled fixtures back.
  for (const entry of gate.left()) if ('host' in entry) entry.release();
}

/**
 * The pool slots a job takes its slot from: its lane's, its interactive runs apart from its others; jobs
 * without a share all share one set.
 */
function slotLaneOf(job: EngineJob): string {
  const share = job.share;
  return share === undefined ? '' : `${share.interactive ? 'interactive' : 'batch'} ${share.lane}`;
}

/**
 * One begun job on the CPU engine: whole on a job thread, or over the pool (its pool slot given back once
 * its draws are counted).
 */
async function runBegun(
  deps: RunnerDeps,
  { entry, release: releaseSlot }: Begun<EngineJob | PreparedJob>,
  context: RunContext,
  record: RecordOutcome,
  failed: Failed,
): Promise<void> {
  const job = 'host' in entry ? entry.job : entry;
  let item: PreparedJob | undefined;
  try {
    if (deps.cpu.spreadOf(job.draws) === 'whole') {
      const prepared = 'host' in entry ? { ...entry, finished: null } : await prepareWholeJob(deps, entry);
      item = prepared;
      if (context.signal.aborted) return;
      record(item, 'cpu', prepared.finished ?? (await deps.jobThreads.whole(item.host, item.compiled)));
      void context.progress(job.id, job.draws);
      return;
    }
    item = 'host' in entry ? entry : await prepareJob(deps, entry);
    if (context.signal.aborted) return;
    const run = await deps.cpu.run(item.compiled, {
      draws: job.draws,
      seed: item.host.seed,
      onProgress: (done) => void context.progress(job.id, done),
      share: job.share,
    });
    // Its draws are counted: the next run over the pool may begin while this one's document is built.
    releaseSlot();
    await finishRun(deps, item, run, record, failed);
  } catch (error) {
    failed(job, error);
  } finally {
    releaseSlot();
    item?.release();
  }
}

/** A finished run's outcome; the run also updates the engine's measured seconds per draw. */
function recordRun(
  deps: RunnerDeps,
  { job }: PreparedJob,
  engine: RunResult['engine'],
  finished: Finished,
): RunSuccess {
  const engineMs = engine === 'gpu' ? (finished.gpuMs ?? finished.runMs) : finished.runMs;
  // Exponential average of measured seconds per draw, per engine.
  const measured = engineMs / 1000 / job.draws;
  deps.secondsPerDraw[engine] = 0.8 * deps.secondsPerDraw[engine] + 0.2 * measured;
  return {
    jobId: job.id,
    summary: finished.summary,
    document: finished.document,
    engine,
    runMs: Math.round(finished.runMs),
    gpuMs: engine === 'gpu' ? Math.round((finished.gpuMs ?? 0) * 1000) / 1000 : 0,
  };
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
    compile_cache: deps.jobThreads.cacheStats(),
    gpu: state ?? null,
    model_version: deps.params.model_version,
    checked_at: deps.clock().toISOString(),
  };
}
