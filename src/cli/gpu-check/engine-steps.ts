// gpu-check's steps through the service's own GPU engine (gpu/engine.ts: worker thread, packing,
// watchdog, CPU fallback): one million-draw job and a batch of 1,000 fixtures x 100,000 draws, each
// beside the CPU engine on all the host's cores on the same work. A job the engine ran on the CPU is
// reported as such and never counted as GPU speed.
import type { CpuEngine } from '../../../fallback/cpu-engine.js';
import { type BatchJob, type GpuEngine, type GpuEngineRun, runsEngine } from '../../../gpu/engine.js';
import { createSlotPool } from '../../engine/compiled-slots.js';
import { compileShared } from '../../engine/job-work.js';
import type { CompiledFixture } from '../../engine-contract/layout.js';
import { defaultModelParams } from '../../engine-contract/model-params.js';
import { countersDigest, median, TIMED_RUNS, WARM_UP_MS, warmUp } from './kernel-steps.js';
import { differingWords } from './parity-cases.js';
import { plausibleFixture } from './plausible-teams.js';
import type { CheckReport } from './report.js';

export const BATCH_FIXTURES = 1_000;
const BATCH_DRAWS = 100_000;
/** The CPU reference of the batch runs its first jobs up to this many draws (reported as a rate). */
const CPU_BATCH_REFERENCE_DRAWS = 4_000_000;

export interface EngineContext {
  report: CheckReport;
  gpu: GpuEngine;
  cpu: CpuEngine;
  scale: number;
  batchFixtures: number;
  inTime(): boolean;
}

/**
 * The batch's fixtures, compiled as the service's job threads compile them (src/engine/job-work.ts
 * compileShared): onto slots of shared memory, event tables built with the rest. Compiled without them,
 * the engine built each fixture's event tables on the main thread while packing a dispatch and copied
 * them into the worker's message, host work that is compile work in the service (on the H200 it doubled
 * the batch's wall time: 3.24 s for 1.26 s of GPU).
 */
export function batchFixtures(count: number): CompiledFixture[] {
  const slots = createSlotPool();
  return Array.from({ length: count }, (_, index) =>
    compileShared(
      plausibleFixture(
        index + 1,
        { teamId: 2 * index + 1, attack: ((index % 7) - 3) * 0.08, defence: ((index % 5) - 2) * 0.06 },
        { teamId: 2 * index + 2, attack: ((index % 3) - 1) * 0.1, defence: ((index % 4) - 1.5) * 0.05 },
      ),
      defaultModelParams,
      slots.take(),
    ),
  );
}

/** How a set of engine runs went: which engine ran them, and GPU figures only when the GPU ran all. */
export function summarizeRuns(runs: readonly GpuEngineRun[], wallMs: number) {
  const ran = runsEngine(runs);
  return {
    engine: ran.label,
    jobs: ran.jobs,
    jobs_on_cpu: ran.jobsOnCpu,
    wall_ms: Math.round(wallMs),
    wall_ms_per_job: Math.round((wallMs / runs.length) * 100) / 100,
    gpu_ms: ran.gpuMs === null ? null : Math.round(ran.gpuMs * 1000) / 1000,
    timing: ran.timing,
  };
}

async function cpuReference(cpu: CpuEngine, jobs: readonly BatchJob[], limit: number) {
  const measured: BatchJob[] = [];
  let draws = 0;
  for (const job of jobs) {
    if (measured.length > 0 && draws + job.draws > limit) break;
    measured.push(job);
    draws += job.draws;
  }
  const started = performance.now();
  const runs = await Promise.all(measured.map((job) => cpu.run(job.compiled, job)));
  const ms = performance.now() - started;
  return { runs, jobs: measured.length, draws, ms, rate: Math.round((draws / ms) * 1000) };
}

/** Runs the jobs on the GPU engine and the CPU engine (a part, for big batches) and reports both. */
/** Runs `jobs` on the engine and beside them the CPU; returns the digest of the engine's counters. */
async function engineCase(
  context: EngineContext,
  work: string,
  jobs: BatchJob[],
  cpuLimit: number,
): Promise<string> {
  const { report, gpu, cpu } = context;
  const draws = jobs.reduce((sum, job) => sum + job.draws, 0);
  const before = gpu.state();
  const started = performance.now();
  const runs = await gpu.runBatch(jobs);
  const summary = summarizeRuns(runs, performance.now() - started);
  const after = gpu.state();
  const digest = countersDigest(
    runs.map((run) => run.counts),
    true,
  );
  const reference = context.inTime() ? await cpuReference(cpu, jobs, cpuLimit) : null;
  const differing = reference
    ? differingWords(
        reference.runs.map((_, index) => runs[index]!.counts),
        reference.runs.map((run) => run.counts),
      )
    : null;
  report.emit({
    record: 'engine',
    work,
    draws,
    ...summary,
    draws_per_s_wall: summary.engine === 'gpu' ? Math.round((draws / summary.wall_ms) * 1000) : null,
    draws_per_s_gpu_time: summary.gpu_ms ? Math.round((draws / summary.gpu_ms) * 1000) : null,
    dispatches: after.dispatches - before.dispatches,
    watchdog_firings: after.watchdogFirings - before.watchdogFirings,
    reason: after.reason,
    cpu_engine: reference
      ? {
          threads: cpu.threads,
          jobs: reference.jobs,
          draws: reference.draws,
          ms: Math.round(reference.ms),
          draws_per_s: reference.rate,
        }
      : 'skipped: deadline',
    identical_to_cpu: differing === null ? null : differing === 0,
    counters_digest: digest,
  });
  if (differing)
    report.problem('parityMismatch', `${work}: the GPU engine's counts differ from the CPU engine's`);
  if (summary.jobs_on_cpu > 0) {
    report.problem(
      'ranOnCpu',
      `${work}: ${summary.jobs_on_cpu} of ${runs.length} jobs ran on the CPU (${after.reason ?? 'no reason given'})`,
    );
  }
  return digest;
}

/**
 * The one job on a warm GPU: its first run above met a GPU that had idled while the batch compiled, so
 * the engine runs it again for a warm-up (./kernel-steps.ts warmUp), then TIMED_RUNS times.
 */
async function warmJob(
  context: EngineContext,
  compiled: CompiledFixture,
  draws: number,
  seed: BatchJob['seed'],
) {
  const job = () => context.gpu.runBatch([{ compiled, draws, seed }]);
  const warmUpMs = await warmUp(job, WARM_UP_MS / context.scale);
  const runs: ReturnType<typeof summarizeRuns>[] = [];
  for (let run = 0; run < TIMED_RUNS && context.inTime(); run++) {
    const started = performance.now();
    const done = await job();
    runs.push(summarizeRuns(done, performance.now() - started));
  }
  if (runs.length === 0) return;
  context.report.emit({
    record: 'engine-warm',
    work: `one job of ${draws} draws on a warm GPU, ${runs.length} times after ${warmUpMs} ms of warm-up`,
    engine: runs.every((run) => run.engine === 'gpu') ? 'gpu' : 'not all on the GPU',
    wall_ms_median: median(runs.map((run) => run.wall_ms)),
    gpu_ms_median: runs.every((run) => run.gpu_ms !== null) ? median(runs.map((run) => run.gpu_ms!)) : null,
    wall_ms: runs.map((run) => run.wall_ms),
    gpu_ms: runs.map((run) => run.gpu_ms),
  });
}

/**
 * Runs the engine's cases; returns the batch's compiled fixtures (`--tune` reuses them) and the digest
 * of the batch's counters (null when the deadline stopped it first).
 */
export async function engineSteps(
  context: EngineContext,
): Promise<{ fixtures: CompiledFixture[]; batchDigest: string | null }> {
  const single = Math.max(1, Math.round(1_000_000 / context.scale));
  const perFixture = Math.max(1, Math.round(BATCH_DRAWS / context.scale));
  const compileStarted = performance.now();
  const count = context.batchFixtures;
  const fixtures = batchFixtures(count);
  context.report.emit({
    record: 'compile',
    fixtures: count,
    ms: Math.round(performance.now() - compileStarted),
  });
  const seed = { lo: 0xba7c4, hi: 0x1 };
  // Warm-up: the worker's first dispatch and the JIT are not part of a figure.
  await context.gpu.run(fixtures[0]!, { draws: Math.min(1000, single), seed });
  if (!context.inTime()) return { fixtures, batchDigest: null };
  await engineCase(
    context,
    `one job of ${single} draws`,
    [{ compiled: fixtures[0]!, draws: single, seed }],
    single,
  );
  if (!context.inTime()) return { fixtures, batchDigest: null };
  await warmJob(context, fixtures[0]!, single, seed);
  if (!context.inTime()) return { fixtures, batchDigest: null };
  const jobs = fixtures.map((compiled, index) => ({
    compiled,
    draws: perFixture,
    seed: { lo: index, hi: 7 },
  }));
  const batchDigest = await engineCase(
    context,
    `batch of ${count} fixtures x ${perFixture} draws`,
    jobs,
    CPU_BATCH_REFERENCE_DRAWS / context.scale,
  );
  return { fixtures, batchDigest };
}
