// GPU engine throughput: draws/s for one fixture at 100,000 and 1,000,000 draws and for a batch of 100
// fixtures x 100,000 draws packed into shared dispatches, each beside the CPU engine (all cores)
// measured in the same run on the same jobs, naming the adapter. On a software adapter (llvmpipe) the
// draw counts are scaled down so the run ends in minutes; the rows say so and stay comparable as rates.
// A row names the engine that ran every job; jobs re-run on the CPU make it say so and drop its GPU-time
// row (kernelRows), and each row says whether the GPU's counts equal the CPU engine's on the jobs both ran.
import { availableParallelism } from 'node:os';
import { type CpuEngine, createCpuEngine } from '../fallback/cpu-engine.js';
import {
  type BatchJob,
  createGpuEngine,
  type GpuEngine,
  type RunsEngine,
  runsEngine,
} from '../gpu/engine.js';
import { compileFixture } from '../src/engine/compile.js';
import type { CompiledFixture, EngineSeed } from '../src/engine-contract/layout.js';
import { defaultModelParams } from '../src/engine-contract/model-params.js';
import { plausibleFixture } from '../test/engine/plausible-teams.js';
import type { BenchRow } from './report.js';

/** The figures: one fixture at these draw counts, and a batch of 100 x 100,000. */
const SINGLE_DRAWS = [100_000, 1_000_000];
const BATCH_FIXTURES = 100;
const BATCH_DRAWS = 100_000;
/** llvmpipe runs the kernel at roughly a tenth of the CPU engine's speed: keep its runs short. */
const SOFTWARE_SCALE = 0.02;
/** The CPU reference of a batch runs on its first fixtures up to this many draws (a rate, per draw). */
const CPU_REFERENCE_MAX_DRAWS = 2_000_000;

function benchFixtures(count: number): CompiledFixture[] {
  return Array.from({ length: count }, (_, index) =>
    compileFixture(
      plausibleFixture(
        index + 1,
        { teamId: 2 * index + 1, attack: ((index % 7) - 3) * 0.08, defence: ((index % 5) - 2) * 0.06 },
        { teamId: 2 * index + 2, attack: ((index % 3) - 1) * 0.1, defence: ((index % 4) - 1.5) * 0.05 },
      ),
      defaultModelParams,
    ),
  );
}

async function cpuRate(
  cpu: CpuEngine,
  jobs: readonly BatchJob[],
): Promise<{ rate: number; draws: number; counts: Uint32Array[] }> {
  const measured: BatchJob[] = [];
  let draws = 0;
  for (const job of jobs) {
    if (measured.length > 0 && draws + job.draws > CPU_REFERENCE_MAX_DRAWS) break;
    measured.push(job);
    draws += job.draws;
  }
  const started = performance.now();
  const counts: Uint32Array[] = [];
  for (const job of measured) counts.push((await cpu.run(job.compiled, job)).counts);
  return { rate: (draws / (performance.now() - started)) * 1000, draws, counts };
}

export interface GpuMeasure {
  wallMs: number;
  draws: number;
  /** Each job's counts, in job order. */
  counts?: Uint32Array[];
  /** Which engine ran the jobs (gpu/engine.ts runsEngine): GPU time only when the GPU ran all. */
  ran: RunsEngine;
}

async function gpuRun(gpu: GpuEngine, jobs: readonly BatchJob[]): Promise<GpuMeasure> {
  const started = performance.now();
  const runs = await gpu.runBatch(jobs);
  const wallMs = performance.now() - started;
  const draws = jobs.reduce((sum, job) => sum + job.draws, 0);
  return { wallMs, draws, ran: runsEngine(runs), counts: runs.map((run) => run.counts) };
}

interface BenchCase {
  name: string;
  jobs: BatchJob[];
}

function benchCases(fixtures: CompiledFixture[], scale: number, seed: EngineSeed): BenchCase[] {
  return [
    ...SINGLE_DRAWS.map((draws) => {
      const scaled = Math.round(draws * scale);
      return {
        name: `one fixture, ${scaled.toLocaleString('en-US')} draws`,
        jobs: [{ compiled: fixtures[0]!, draws: scaled, seed }],
      };
    }),
    {
      name: `batch of ${BATCH_FIXTURES} fixtures x ${Math.round(BATCH_DRAWS * scale).toLocaleString('en-US')} draws`,
      jobs: fixtures.map((compiled, index) => ({
        compiled,
        draws: Math.round(BATCH_DRAWS * scale),
        seed: { lo: seed.lo + index, hi: seed.hi },
      })),
    },
  ];
}

/**
 * The kernel's rows of a case: the wall rate beside the CPU engine, and the GPU-time rate. A row names
 * the engine that ran every job; jobs re-run on the CPU (device lost, watchdog, failed dispatch) make the
 * case's wall row say so and drop its GPU-time row: such a run is no measure of GPU speed.
 */
export function kernelRows(
  group: string,
  name: string,
  measured: GpuMeasure,
  cpu: CpuReference,
  note: string,
): BenchRow[] {
  const { ran } = measured;
  const referenceNote =
    cpu.draws < measured.draws ? ` (CPU on the first ${cpu.draws.toLocaleString('en-US')} draws)` : '';
  const reference = { name: `CPU engine, ${cpu.cores} threads${referenceNote}`, value: cpu.rate };
  const wallRate = (measured.draws / measured.wallMs) * 1000;
  if (ran.gpuMs === null) {
    return [
      {
        group,
        name: `${name}, wall, NOT GPU speed: ${ran.jobsOnCpu} of ${ran.jobs} jobs re-run on the CPU`,
        value: wallRate,
        unit: 'draws/s',
        reference,
        note: `wall ${measured.wallMs.toFixed(0)} ms; engine ${ran.label}${note}`,
      },
    ];
  }
  return [
    {
      group,
      name: `${name}, wall`,
      value: wallRate,
      unit: 'draws/s',
      reference,
      note: `wall ${measured.wallMs.toFixed(0)} ms; engine gpu (every job)${note}`,
    },
    {
      group,
      name: `${name}, GPU time (${ran.timing ?? 'mixed timing'})`,
      value: (measured.draws / ran.gpuMs) * 1000,
      unit: 'draws/s',
      note: `GPU ${ran.gpuMs.toFixed(1)} ms; engine gpu (every job)`,
    },
  ];
}

function sameCounts(a: Uint32Array, b: Uint32Array | undefined): boolean {
  return b !== undefined && a.length === b.length && a.every((value, index) => value === b[index]);
}

export interface CpuReference {
  rate: number;
  draws: number;
  cores: number;
}

export async function benchGpu(): Promise<BenchRow[]> {
  const cores = availableParallelism();
  const cpu = createCpuEngine({ threads: cores });
  const gpu = createGpuEngine({ mode: 'gpu', fallback: cpu });
  try {
    const state = await gpu.started();
    if (state.state !== 'ready') {
      return [
        {
          group: 'engine (GPU)',
          name: 'GPU engine',
          value: 0,
          unit: 'draws/s',
          note: `no adapter: ${state.reason ?? state.state}`,
        },
      ];
    }
    const group = `engine (GPU: ${state.adapter ?? 'unknown adapter'})`;
    const scale = state.software ? SOFTWARE_SCALE : 1;
    const note = state.software ? `; draws scaled x${SOFTWARE_SCALE} on a software adapter` : '';
    const seed: EngineSeed = { lo: 0x5eed, hi: 0x6b0 };
    const fixtures = benchFixtures(BATCH_FIXTURES);
    // Warm-up: worker start-up, shader compilation and JIT are not part of a run.
    await gpu.run(fixtures[0]!, { draws: 1000, seed });
    await cpu.run(fixtures[0]!, { draws: 20_000, seed });
    const rows: BenchRow[] = [];
    for (const { name, jobs } of benchCases(fixtures, scale, seed)) {
      // The kernel and the CPU engine back to back on the same jobs, so they share the machine's load.
      const measured = await gpuRun(gpu, jobs);
      const { counts, ...reference } = await cpuRate(cpu, jobs);
      const identical = counts.every((each, index) => sameCounts(each, measured.counts?.[index]));
      const parity = `; counts ${identical ? 'identical to' : 'DIFFER from'} the CPU engine's (${counts.length} jobs)`;
      rows.push(...kernelRows(group, name, measured, { ...reference, cores }, `${note}${parity}`));
    }
    return rows;
  } finally {
    await gpu.close();
    await cpu.close();
  }
}
