// `gpu-check --tune`: the match kernel at each workgroup size the adapter allows (docs/gpu.md
// "gpu-check"), on the same work: the parity cases (every one must stay identical to the CPU engine),
// one fixture's million draws (the median of several dispatches) and the engine's batch of 1,000
// fixtures x 100,000 draws as one dispatch, whose counters must be the same at every size (the counts
// depend on the seed and the draws only, never on how draws are grouped). Then what a GPU host without
// hardware counters can say about the kernel's insides (./kernel-variants.ts): each stage's rough cost,
// an alternative kernel (--compare-kernel) and the kernel without Dawn's robustness transform.
import { readFileSync } from 'node:fs';
import { adapterWithFeatures, type ChosenAdapter, chooseAdapterExplained } from '../../../gpu/adapter.js';
import { type OpenedDevice, openDevice } from '../../../gpu/device.js';
import {
  MATCH_DEVICE_NEEDS,
  MATCH_WORKGROUP_SIZE,
  type MatchDispatcher,
  type MatchDispatcherOptions,
  type MatchRun,
} from '../../../gpu/match-dispatch.js';
import { readShader } from '../../../gpu/shader-source.js';
import type { CompiledFixture } from '../../engine-contract/layout.js';
import {
  countersDigest,
  kernelDispatchers,
  median,
  runParityCases,
  TIMED_RUNS,
  WARM_UP_MS,
  warmUp,
} from './kernel-steps.js';
import { STAGE_VARIANTS, withoutStage } from './kernel-variants.js';
import type { ParityFixtures } from './parity-cases.js';
import type { CheckReport } from './report.js';

/** Sizes compared: one NVIDIA warp up to twice WebGPU's default limit (sizes past the adapter's are skipped). */
export const TUNE_WORKGROUP_SIZES = [32, 64, 128, 256, 512] as const;
const BATCH_DRAWS = 100_000;

export interface TuneContext {
  report: CheckReport;
  /** The adapter the checks ran on (a device was made from it already, so it is asked for again). */
  chosen: ChosenAdapter;
  fixtures: ParityFixtures;
  /** The engine step's batch fixtures (the same 1,000). */
  batch: readonly CompiledFixture[];
  scale: number;
  /** Other shaders/match.wgsl files to compare with this one (--compare-kernel). */
  compareKernels: readonly string[];
  /** Workgroup sizes to compare (default TUNE_WORKGROUP_SIZES). */
  sizes?: readonly number[];
  /** The counters digest of the same batch through the engine (several dispatches in flight), if it ran. */
  engineBatchDigest: string | null;
  inTime(): boolean;
}

const rounded = (ms: number) => Math.round(ms * 1000) / 1000;

/** The batch as dispatches of at most `maxRuns` runs: GPU time summed, wall time, a digest of all counters. */
async function batchDispatches(dispatcher: MatchDispatcher, runs: readonly MatchRun[]) {
  const counters: Uint32Array[] = [];
  let gpuMs = 0;
  let dispatches = 0;
  const started = performance.now();
  for (let from = 0; from < runs.length; from += dispatcher.maxRuns) {
    const result = await dispatcher.dispatch(runs.slice(from, from + dispatcher.maxRuns));
    gpuMs += result.gpuMs;
    dispatches++;
    counters.push(...result.counters);
  }
  return {
    gpuMs,
    wallMs: performance.now() - started,
    dispatches,
    digest: countersDigest(counters, false),
  };
}

interface Measure {
  size: number;
  transformSource?: MatchDispatcherOptions['transformSource'];
  /** Run the parity cases (against the CPU engine). */
  parity: boolean;
  /** Run the 1,000-fixture batch. */
  batch: boolean;
}

/** One kernel (a workgroup size, a source) on the million draws and, as asked, the parity cases and the batch. */
async function measureKernel(context: TuneContext, opened: OpenedDevice, measure: Measure) {
  const { fixtures, batch, scale, inTime } = context;
  const dispatchers = kernelDispatchers(opened, {
    workgroupSize: measure.size,
    ...(measure.transformSource ? { transformSource: measure.transformSource } : {}),
  });
  const { dispatcherFor } = dispatchers;
  try {
    const parity = measure.parity ? await runParityCases(fixtures, dispatcherFor, inTime) : null;
    const dispatcher = await dispatcherFor();
    const draws = Math.max(1, Math.round(1_000_000 / scale));
    const million = (repeat: number) =>
      dispatcher.dispatch([
        { tables: fixtures.predicted, seed: { lo: 0x7133, hi: repeat }, firstDraw: 0, drawCount: draws },
      ]);
    // The pipeline was just compiled on the CPU while the GPU idled: warm it before timing.
    await warmUp(() => million(0), WARM_UP_MS / scale);
    const millionMs: number[] = [];
    for (let repeat = 0; repeat < TIMED_RUNS && inTime(); repeat++) {
      millionMs.push((await million(repeat)).gpuMs);
    }
    const perFixture = Math.max(1, Math.round(BATCH_DRAWS / scale));
    const runs: MatchRun[] = batch.map((tables, index) => ({
      tables,
      seed: { lo: index, hi: 7 },
      firstDraw: 0,
      drawCount: perFixture,
    }));
    const batchRun = measure.batch && inTime() ? await batchDispatches(dispatcher, runs) : null;
    return {
      workgroup_size: measure.size,
      ...(measure.parity
        ? {
            parity_cases: parity?.cases ?? null,
            parity_identical: parity ? parity.differing.length === 0 : null,
            parity_differing: parity?.differing ?? 'skipped: deadline',
          }
        : {}),
      million: {
        draws,
        dispatches: millionMs.length,
        gpu_ms_median: millionMs.length ? rounded(median(millionMs)) : null,
        gpu_ms_min: millionMs.length ? rounded(Math.min(...millionMs)) : null,
      },
      batch: batchRun && {
        fixtures: runs.length,
        draws: runs.length * perFixture,
        dispatches: batchRun.dispatches,
        gpu_ms: rounded(batchRun.gpuMs),
        wall_ms: Math.round(batchRun.wallMs),
        draws_per_s_gpu_time: Math.round(((runs.length * perFixture) / batchRun.gpuMs) * 1000),
        counters_digest: batchRun.digest,
      },
    };
  } finally {
    dispatchers.destroy();
  }
}

type Measured = Awaited<ReturnType<typeof measureKernel>>;

/** The kernel at each workgroup size: parity, million draws, batch; the batch counters equal at every size. */
async function sizeSteps(context: TuneContext, opened: OpenedDevice, sizes: readonly number[]) {
  const { report } = context;
  const results: Measured[] = [];
  for (const size of sizes) {
    if (!context.inTime()) break;
    const result = await measureKernel(context, opened, { size, parity: true, batch: true });
    report.emit({ record: 'tune', ...result });
    results.push(result);
    if (result.parity_identical === false) {
      report.problem(
        'parityMismatch',
        `workgroup size ${size}: ${result.parity_differing?.length} parity cases differ from the CPU engine`,
      );
    }
  }
  const digests = new Set(results.flatMap((result) => (result.batch ? [result.batch.counters_digest] : [])));
  if (digests.size > 1) {
    report.problem('parityMismatch', 'the batch counters differ between workgroup sizes');
  }
  const engineIdentical =
    context.engineBatchDigest && digests.size > 0 ? digests.has(context.engineBatchDigest) : null;
  if (engineIdentical === false) {
    report.problem('parityMismatch', "the engine's batch counters differ from the batch as one dispatch");
  }
  const timed = results.filter((result) => result.batch);
  const fastest = timed.sort((a, b) => a.batch!.gpu_ms - b.batch!.gpu_ms)[0];
  report.emit({
    record: 'tune-summary',
    sizes: results.map((result) => result.workgroup_size),
    batch_counters_identical_across_sizes: digests.size <= 1,
    engine_batch_counters_identical: engineIdentical,
    fastest_batch_workgroup_size: fastest?.workgroup_size ?? null,
  });
  return results.find((result) => result.workgroup_size === MATCH_WORKGROUP_SIZE) ?? null;
}

/** The kernel with one stage left out at a time, beside the whole kernel (./kernel-variants.ts). */
async function stageSteps(context: TuneContext, opened: OpenedDevice) {
  const whole = await measureKernel(context, opened, {
    size: MATCH_WORKGROUP_SIZE,
    parity: false,
    batch: false,
  });
  const wholeMs = whole.million.gpu_ms_median;
  for (const variant of STAGE_VARIANTS) {
    if (!context.inTime()) return;
    const result = await measureKernel(context, opened, {
      size: MATCH_WORKGROUP_SIZE,
      transformSource: (source) => withoutStage(source, variant),
      parity: false,
      batch: false,
    });
    const ms = result.million.gpu_ms_median;
    context.report.emit({
      record: 'stage-cost',
      stage: variant.stage,
      instead: variant.instead,
      workgroup_size: MATCH_WORKGROUP_SIZE,
      whole_kernel_gpu_ms: wholeMs,
      without_stage_gpu_ms: ms,
      difference_ms: wholeMs !== null && ms !== null ? rounded(wholeMs - ms) : null,
    });
  }
}

/** Another shaders/match.wgsl in place of this one, at 64 and at the kernel's own size. */
async function compareSteps(
  context: TuneContext,
  opened: OpenedDevice,
  file: string,
  current: Measured | null,
) {
  const other = readFileSync(file, 'utf8');
  const transformSource = (source: string) => {
    const own = readShader('match');
    if (!source.includes(own))
      throw new Error('--compare-kernel: shaders/match.wgsl is not in the kernel source');
    return source.replace(own, () => other);
  };
  for (const size of [...new Set([64, MATCH_WORKGROUP_SIZE])]) {
    if (!context.inTime()) return;
    let result: Measured;
    try {
      result = await measureKernel(context, opened, { size, transformSource, parity: true, batch: true });
    } catch (error) {
      // A compared kernel that does not build here (say, more workgroup memory than the adapter
      // offers) is one of its differences, not a failure of the check: the others still run.
      context.report.emit({ record: 'kernel-compare', file, workgroup_size: size, error: String(error) });
      continue;
    }
    context.report.emit({
      record: 'kernel-compare',
      file,
      ...result,
      batch_counters_identical_to_this_kernel:
        result.batch && current?.batch
          ? result.batch.counters_digest === current.batch.counters_digest
          : null,
    });
  }
}

/** The kernel on a device whose instance has Dawn's robustness transform switched off. */
async function robustnessStep(context: TuneContext, chosen: ChosenAdapter, current: Measured | null) {
  const unsafe = await adapterWithFeatures(chosen.backend, ['allow_unsafe_apis', 'disable_robustness']);
  if (!unsafe || unsafe.description !== chosen.description) {
    context.report.emit({ record: 'robustness-off', skipped: 'the adapter was not offered again' });
    return;
  }
  const opened = await openDevice(unsafe, MATCH_DEVICE_NEEDS);
  try {
    const result = await measureKernel(context, opened, {
      size: MATCH_WORKGROUP_SIZE,
      parity: true,
      batch: true,
    });
    context.report.emit({
      record: 'robustness-off',
      toggles: ['allow_unsafe_apis', 'disable_robustness'],
      ...result,
      batch_counters_identical_to_this_kernel:
        result.batch && current?.batch
          ? result.batch.counters_digest === current.batch.counters_digest
          : null,
    });
  } finally {
    opened.device.destroy();
  }
}

export async function tuneSteps(context: TuneContext): Promise<void> {
  const { report } = context;
  // An adapter makes one device: ask again, and insist on the adapter the checks ran on.
  const { chosen } = await chooseAdapterExplained({ mode: 'gpu', allowSoftware: true });
  if (!chosen || chosen.description !== context.chosen.description) {
    report.problem('failed', `--tune: the adapter ${context.chosen.description} was not offered again`);
    return;
  }
  const { limits } = chosen.adapter;
  const largest = Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  const wanted = context.sizes ?? TUNE_WORKGROUP_SIZES;
  const sizes = wanted.filter((size) => size <= largest);
  for (const size of wanted.filter((size) => size > largest)) {
    report.emit({ record: 'tune', workgroup_size: size, skipped: `the adapter allows ${largest}` });
  }
  const opened = await openDevice(chosen, {
    ...MATCH_DEVICE_NEEDS,
    invocationsPerWorkgroup: Math.max(MATCH_WORKGROUP_SIZE, ...sizes),
  });
  let current: Measured | null = null;
  try {
    current = await sizeSteps(context, opened, sizes);
    if (context.inTime()) await stageSteps(context, opened);
    for (const file of context.compareKernels) {
      if (context.inTime()) await compareSteps(context, opened, file, current);
    }
  } finally {
    opened.device.destroy();
  }
  if (context.inTime()) await robustnessStep(context, chosen, current);
}
