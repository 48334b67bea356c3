// gpu-check's steps on the match kernel directly (gpu/match-dispatch.ts, no worker): the parity cases
// of parity-cases.ts, a million draws of a few fixtures against the CPU engine on all cores,
// and the kernel time of one million-draw dispatch by timestamp queries, with the proof that Dawn's
// timestamp quantization is off.
import { createHash } from 'node:crypto';
import type { CpuEngine } from '../../../fallback/cpu-engine.js';
import type { OpenedDevice } from '../../../gpu/device.js';
import {
  createMatchDispatcher,
  type DispatchResult,
  type MatchDispatcher,
  type MatchDispatcherOptions,
} from '../../../gpu/match-dispatch.js';
import { type CompiledFixture, finalizeCounters } from '../../engine-contract/layout.js';
import {
  comparableCounters,
  differingWords,
  expectedCounters,
  type ParityCase,
  type ParityFixtures,
  parityCases,
} from './parity-cases.js';
import type { CheckReport } from './report.js';

/**
 * Keeps the GPU busy with `work` for at least `ms` (and `times` runs) before anything is timed. An idle
 * GPU's clocks are low (the H200's SM clock idles at 345 MHz against 1,980) and rise only after a few
 * hundred milliseconds of load: a million draws took 49 ms on a GPU that had idled for a second and
 * 12.7 ms once warm (docs/gpu.md "gpu-check").
 */
export async function warmUp(work: () => Promise<unknown>, ms: number, times = 3): Promise<number> {
  const started = performance.now();
  let runs = 0;
  while (runs < times || performance.now() - started < ms) {
    await work();
    runs++;
  }
  return Math.round(performance.now() - started);
}

/** A warm-up's least length on a GPU; divided by --scale (a software adapter has no clocks to raise). */
export const WARM_UP_MS = 500;
/** Timed runs after a warm-up; their median is the figure. */
export const TIMED_RUNS = 7;

/**
 * A digest of counter sets as the engines return them (finalized: score states no longer
 * difference-encoded), so runs of the same jobs through different paths can be compared.
 */
export function countersDigest(sets: readonly Uint32Array[], finalized: boolean): string {
  const hash = createHash('sha256');
  for (const set of sets) {
    if (finalized) hash.update(set);
    else {
      const copy = set.slice();
      finalizeCounters(copy);
      hash.update(copy);
    }
  }
  return hash.digest('hex').slice(0, 16);
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Dispatchers of one kernel on one device, one per grid width (the 2-D parity cases narrow it). */
export interface KernelDispatchers {
  /** The dispatcher with `gridWidth` workgroups a grid row (default: the WebGPU limit), made on demand. */
  dispatcherFor(gridWidth?: number): Promise<MatchDispatcher>;
  destroy(): void;
}

export function kernelDispatchers(
  opened: OpenedDevice,
  options: Omit<MatchDispatcherOptions, 'gridWidth'> = {},
): KernelDispatchers {
  const made = new Map<number | undefined, MatchDispatcher>();
  return {
    async dispatcherFor(gridWidth) {
      if (!made.has(gridWidth)) {
        made.set(
          gridWidth,
          await createMatchDispatcher(opened, { ...options, ...(gridWidth ? { gridWidth } : {}) }),
        );
      }
      return made.get(gridWidth)!;
    },
    destroy() {
      for (const dispatcher of made.values()) dispatcher.destroy();
    },
  };
}

/** Dawn's quantization masks the low 16 bits of a nanosecond timestamp (about 65.5 µs steps). */
const QUANTUM_NS = 65_536n;

export interface KernelContext {
  report: CheckReport;
  /** The kernel's dispatcher. */
  dispatcher: MatchDispatcher;
  /** Its dispatchers by grid width: the parity cases' 2-D grids narrow it. */
  dispatcherFor: KernelDispatchers['dispatcherFor'];
  cpu: CpuEngine;
  /** Draws divided by this (llvmpipe); 1 on a GPU. */
  scale: number;
  /** Every raw pass timestamp read so far: the quantization proof. */
  timestamps: bigint[];
  /** False once the check's deadline has passed: steps stop between cases. */
  inTime(): boolean;
}

/** How one parity case went. */
export interface ParityOutcome {
  parityCase: ParityCase;
  differingWords: number;
  ms: number;
  timestamps: DispatchResult['timestamps'];
}

/**
 * Runs the parity cases, each on `dispatcherFor(its grid width)`, against the CPU engine's counters;
 * returns the names of those that differ, or null when the deadline cut the cases short.
 */
export async function runParityCases(
  fixtures: ParityFixtures,
  dispatcherFor: (gridWidth?: number) => Promise<MatchDispatcher>,
  inTime: () => boolean,
  each: (outcome: ParityOutcome) => void = () => {},
): Promise<{ cases: number; differing: string[] } | null> {
  const cases = parityCases(fixtures);
  const differing: string[] = [];
  for (const parityCase of cases) {
    if (!inTime()) return null;
    const dispatcher = await dispatcherFor(parityCase.gridWidth);
    const started = performance.now();
    const result = await dispatcher.dispatch(parityCase.runs);
    const words = differingWords(
      comparableCounters(parityCase, result.counters),
      expectedCounters(parityCase),
    );
    if (words > 0) differing.push(parityCase.name);
    each({
      parityCase,
      differingWords: words,
      ms: performance.now() - started,
      timestamps: result.timestamps,
    });
  }
  return { cases: cases.length, differing };
}

export async function parityStep(context: KernelContext, fixtures: ParityFixtures): Promise<void> {
  const { report } = context;
  const outcome = await runParityCases(fixtures, context.dispatcherFor, context.inTime, (done) => {
    if (done.timestamps) context.timestamps.push(...done.timestamps);
    report.emit({
      record: 'parity',
      case: done.parityCase.name,
      runs: done.parityCase.runs.length,
      draws: done.parityCase.runs.reduce((sum, run) => sum + run.drawCount, 0),
      identical: done.differingWords === 0,
      differing_words: done.differingWords,
      ms: Math.round(done.ms),
    });
  });
  if (!outcome) return;
  if (outcome.differing.length > 0) {
    report.problem(
      'parityMismatch',
      `${outcome.differing.length} of ${outcome.cases} parity cases differ from the CPU engine`,
    );
  } else report.emit({ record: 'parity-summary', cases: outcome.cases, identical: true });
}

/** One fixture's million draws on the kernel and on the CPU engine, compared counter for counter. */
export async function millionDrawsStep(context: KernelContext, fixtures: ParityFixtures): Promise<void> {
  const { report, cpu } = context;
  const draws = Math.max(1, Math.round(1_000_000 / context.scale));
  const chosen: [string, CompiledFixture][] = [
    ['predicted lineups', fixtures.predicted],
    ['lopsided ratings', fixtures.mismatch],
    ['frequent cards', fixtures.eventful],
  ];
  for (const [name, tables] of chosen) {
    if (!context.inTime()) return;
    const seed = { lo: 0x600d5eed, hi: draws };
    const gpuStarted = performance.now();
    const result = await context.dispatcher.dispatch([{ tables, seed, firstDraw: 0, drawCount: draws }]);
    const gpuWallMs = performance.now() - gpuStarted;
    if (result.timestamps) context.timestamps.push(...result.timestamps);
    const counts = result.counters[0]!;
    finalizeCounters(counts);
    const reference = await cpu.run(tables, { draws, seed });
    const differing = differingWords([counts], [reference.counts]);
    report.emit({
      record: 'parity-draws',
      fixture: name,
      draws,
      identical: differing === 0,
      differing_words: differing,
      gpu_wall_ms: Math.round(gpuWallMs),
      gpu_ms: result.gpuMs,
      gpu_timing: result.timing,
      cpu_ms: Math.round(reference.runMs),
      cpu_threads: cpu.threads,
    });
    if (differing > 0) report.problem('parityMismatch', `${name}: ${draws} draws differ from the CPU engine`);
  }
}

/**
 * Kernel time of a million-draw dispatch: the first on a GPU that has idled (the CPU reference of the step
 * before), then the median of TIMED_RUNS after a warm-up; and whether the timestamps seen prove
 * quantization off.
 */
export async function kernelTimeStep(context: KernelContext, fixtures: ParityFixtures): Promise<void> {
  const draws = Math.max(1, Math.round(1_000_000 / context.scale));
  const seed = { lo: 0x7133, hi: 0 };
  const dispatch = async () => {
    const result = await context.dispatcher.dispatch([
      { tables: fixtures.predicted, seed, firstDraw: 0, drawCount: draws },
    ]);
    if (result.timestamps) context.timestamps.push(...result.timestamps);
    return result;
  };
  const cold = await dispatch();
  const warmUpMs = await warmUp(dispatch, WARM_UP_MS / context.scale);
  const timed: Awaited<ReturnType<typeof dispatch>>[] = [];
  for (let run = 0; run < TIMED_RUNS; run++) timed.push(await dispatch());
  const kernelMs = median(timed.map((result) => result.gpuMs));
  const seen = context.timestamps.filter((value) => value !== 0n);
  context.report.emit({
    record: 'kernel-time',
    draws,
    timing: cold.timing,
    cold_kernel_ms: cold.gpuMs,
    warm_up_ms: warmUpMs,
    kernel_ms: kernelMs,
    kernel_ms_all: timed.map((result) => result.gpuMs),
    draws_per_s: Math.round((draws / kernelMs) * 1000),
    pass_timestamps_ns: timed.at(-1)!.timestamps,
    timestamps_seen: seen.length,
    quantization: quantizationVerdict(seen),
  });
}

/**
 * Whether Dawn's timestamp quantization is off, read from raw pass timestamps: it masks their low 16 bits,
 * so with it on every one is a multiple of 65,536 ns (a chance of 1 in 65,536 per timestamp otherwise).
 * Dawn ignores a toggle name it does not know, so this is the only proof that the toggle took effect.
 */
export function quantizationVerdict(timestamps: readonly bigint[]): string {
  const seen = timestamps.filter((value) => value !== 0n);
  if (seen.length === 0) {
    return 'unknown: the adapter has no timestamp-query (its kernel time is submit-to-readback wall time)';
  }
  if (seen.every((value) => value % QUANTUM_NS === 0n)) {
    return 'on: every timestamp is a multiple of 65,536 ns (the disable-dawn-features toggle did not take)';
  }
  return 'off: timestamps are not all multiples of 65,536 ns';
}
