// gpu-check's steps on the match kernel directly (gpu/match-dispatch.ts, no worker): the parity cases
// of src/engine/parity-cases.ts, a million draws of a few fixtures against the CPU engine on all cores,
// and the kernel time of one million-draw dispatch by timestamp queries, with the proof that Dawn's
// timestamp quantization is off.
import type { CpuEngine } from '../../../fallback/cpu-engine.js';
import type { MatchDispatcher } from '../../../gpu/match-dispatch.js';
import { type CompiledFixture, finalizeCounters } from '../../engine/contract/layout.js';
import {
  comparableCounters,
  differingWords,
  expectedCounters,
  type ParityFixtures,
  parityCases,
} from '../../engine/parity-cases.js';
import type { CheckReport } from './report.js';

/** Dawn's quantization masks the low 16 bits of a nanosecond timestamp (about 65.5 µs steps). */
const QUANTUM_NS = 65_536n;

export interface KernelContext {
  report: CheckReport;
  dispatcher: MatchDispatcher;
  /** Dispatchers with narrowed grid rows (the 2-D cases), made on demand. */
  narrowDispatcher(gridWidth: number): Promise<MatchDispatcher>;
  cpu: CpuEngine;
  /** Draws divided by this (llvmpipe); 1 on a GPU. */
  scale: number;
  /** Every raw pass timestamp read so far: the quantization proof. */
  timestamps: bigint[];
  /** False once the check's deadline has passed: steps stop between cases. */
  inTime(): boolean;
}

export async function parityStep(context: KernelContext, fixtures: ParityFixtures): Promise<void> {
  const { report } = context;
  let failed = 0;
  const cases = parityCases(fixtures);
  for (const parityCase of cases) {
    if (!context.inTime()) return;
    const dispatcher = parityCase.gridWidth
      ? await context.narrowDispatcher(parityCase.gridWidth)
      : context.dispatcher;
    const started = performance.now();
    const result = await dispatcher.dispatch(parityCase.runs);
    if (result.timestamps) context.timestamps.push(...result.timestamps);
    const differing = differingWords(
      comparableCounters(parityCase, result.counters),
      expectedCounters(parityCase),
    );
    if (differing > 0) failed++;
    report.emit({
      record: 'parity',
      case: parityCase.name,
      runs: parityCase.runs.length,
      draws: parityCase.runs.reduce((sum, run) => sum + run.drawCount, 0),
      identical: differing === 0,
      differing_words: differing,
      ms: Math.round(performance.now() - started),
    });
  }
  if (failed > 0)
    report.problem('parityMismatch', `${failed} of ${cases.length} parity cases differ from the CPU engine`);
  else report.emit({ record: 'parity-summary', cases: cases.length, identical: true });
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

/** Kernel time of one million-draw dispatch, and whether the timestamps seen prove quantization off. */
export async function kernelTimeStep(context: KernelContext, fixtures: ParityFixtures): Promise<void> {
  const draws = Math.max(1, Math.round(1_000_000 / context.scale));
  const seed = { lo: 0x7133, hi: 0 };
  const result = await context.dispatcher.dispatch([
    { tables: fixtures.predicted, seed, firstDraw: 0, drawCount: draws },
  ]);
  if (result.timestamps) context.timestamps.push(...result.timestamps);
  const seen = context.timestamps.filter((value) => value !== 0n);
  context.report.emit({
    record: 'kernel-time',
    draws,
    timing: result.timing,
    kernel_ms: result.gpuMs,
    draws_per_s: Math.round((draws / result.gpuMs) * 1000),
    pass_timestamps_ns: result.timestamps,
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
