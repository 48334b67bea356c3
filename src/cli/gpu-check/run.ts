// `matchsim gpu-check`: the one prepared command for a GPU host (docs/gpu.md "gpu-check"). It names the
// host and the adapter, runs the parity cases and a million draws against the CPU engine, times the
// kernel by timestamp queries, and runs the service's own GPU engine beside the CPU engine, all as JSON
// lines, within --deadline seconds, and exits with a code that says what went wrong (./report.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus, hostname, release, totalmem } from 'node:os';
import { type CpuEngine, createCpuEngine } from '../../../fallback/cpu-engine.js';
import { type ChosenAdapter, chooseAdapterExplained } from '../../../gpu/adapter.js';
import { openDevice } from '../../../gpu/device.js';
import { createGpuEngine, type GpuEngineOptions } from '../../../gpu/engine.js';
import { MATCH_DEVICE_NEEDS } from '../../../gpu/match-dispatch.js';
import { BATCH_FIXTURES, engineSteps } from './engine-steps.js';
import {
  type KernelContext,
  kernelDispatchers,
  kernelTimeStep,
  millionDrawsStep,
  parityStep,
} from './kernel-steps.js';
import { parityFixtures } from './parity-cases.js';
import { type CheckReport, createReport, exitCodeOf, GPU_CHECK_EXIT } from './report.js';
import { tuneSteps } from './tune-steps.js';

export interface GpuCheckOptions {
  /** Also write the JSON lines here. */
  out?: string | undefined;
  /** The whole check ends within this, with what it has. */
  deadlineSeconds: number;
  /** Draws are divided by this (llvmpipe runs the kernel on the CPU). */
  scale: number;
  /** Run on a software adapter (llvmpipe, lavapipe) instead of refusing it. */
  allowSoftware: boolean;
  /** The GPU engine's watchdog; tests shrink it to make the engine's jobs fall back to the CPU. */
  watchdog?: GpuEngineOptions['watchdog'];
  /** Fixtures of the engine's batch (default 1,000); tests take fewer. */
  batchFixtures?: number;
  /** After the checks, compare the kernel's workgroup sizes on the same work (./tune-steps.ts). */
  tune?: boolean;
  /** With `tune`, other shaders/match.wgsl files to time and check beside this one. */
  compareKernels?: readonly string[] | undefined;
  /** Workgroup sizes `tune` compares (default TUNE_WORKGROUP_SIZES); tests take fewer. */
  tuneSizes?: readonly number[];
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

function hostRecord(): Record<string, unknown> {
  let devices: string[] = [];
  try {
    devices = readdirSync('/dev').filter((name) => name.startsWith('nvidia'));
  } catch {}
  return {
    record: 'host',
    hostname: hostname(),
    kernel: release(),
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    nvidia_driver: readText('/proc/driver/nvidia/version')?.split('\n')[0] ?? null,
    nvidia_devices: devices,
    vk_driver_files: process.env.VK_DRIVER_FILES ?? process.env.VK_ICD_FILENAMES ?? null,
  };
}

function adapterRecord(chosen: ChosenAdapter): Record<string, unknown> {
  const { info, features, limits } = chosen.adapter;
  const limitValues: Record<string, number> = {};
  for (const key in limits) {
    const value = (limits as unknown as Record<string, unknown>)[key];
    if (typeof value === 'number') limitValues[key] = value;
  }
  return {
    record: 'adapter',
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    backend: chosen.backend,
    software: chosen.software,
    fallback_adapter: info.isFallbackAdapter ?? false,
    features: [...features].sort(),
    limits: limitValues,
  };
}

/** The adapter to check, or null after reporting why there is none to use. */
async function adapterFor(report: CheckReport, options: GpuCheckOptions): Promise<ChosenAdapter | null> {
  const { chosen, reason } = await chooseAdapterExplained({ mode: 'gpu', allowSoftware: true });
  if (!chosen) {
    report.problem('noAdapter', reason ?? 'no WebGPU adapter');
    return null;
  }
  report.emit(adapterRecord(chosen));
  if (chosen.software && !options.allowSoftware) {
    const why = (await chooseAdapterExplained({ mode: 'auto' })).reason;
    report.problem(
      'softwareAdapter',
      `only a software adapter was found: ${chosen.description}; refused without --allow-software (${why})`,
    );
    return null;
  }
  return chosen;
}

/** Parity, a million draws and the kernel time, on a device of this thread's own. */
async function kernelChecks(
  report: CheckReport,
  chosen: ChosenAdapter,
  cpu: CpuEngine,
  context: Pick<KernelContext, 'scale' | 'inTime'>,
) {
  const opened = await openDevice(chosen, MATCH_DEVICE_NEEDS);
  const dispatchers = kernelDispatchers(opened);
  const kernel: KernelContext = {
    ...context,
    report,
    dispatcher: await dispatchers.dispatcherFor(),
    dispatcherFor: dispatchers.dispatcherFor,
    cpu,
    timestamps: [],
  };
  try {
    const fixtures = parityFixtures();
    await parityStep(kernel, fixtures);
    if (context.inTime()) await millionDrawsStep(kernel, fixtures);
    if (context.inTime()) await kernelTimeStep(kernel, fixtures);
  } finally {
    dispatchers.destroy();
    opened.device.destroy();
  }
}

async function checkSteps(report: CheckReport, options: GpuCheckOptions, inTime: () => boolean) {
  report.emit(hostRecord());
  const chosen = await adapterFor(report, options);
  if (!chosen) return;
  const cpu = createCpuEngine({ threads: availableParallelism() });
  const gpu = createGpuEngine({
    mode: 'gpu',
    allowSoftware: options.allowSoftware,
    fallback: cpu,
    ...(options.watchdog ? { watchdog: options.watchdog } : {}),
  });
  try {
    await kernelChecks(report, chosen, cpu, { scale: options.scale, inTime });
    if (!inTime()) return;
    const state = await gpu.started();
    report.emit({ record: 'engine-start', state: state.state, adapter: state.adapter, reason: state.reason });
    const engine = await engineSteps({
      report,
      gpu,
      cpu,
      scale: options.scale,
      batchFixtures: options.batchFixtures ?? BATCH_FIXTURES,
      inTime,
    });
    const final = gpu.state();
    report.emit({ record: 'engine-state', ...final });
    if (final.watchdogFirings > 0) {
      report.problem('watchdog', `the watchdog fired ${final.watchdogFirings} times (last: ${final.reason})`);
    }
    if (options.tune && inTime()) {
      await tuneSteps({
        report,
        chosen,
        fixtures: parityFixtures(),
        batch: engine.fixtures,
        engineBatchDigest: engine.batchDigest,
        scale: options.scale,
        compareKernels: options.compareKernels ?? [],
        ...(options.tuneSizes ? { sizes: options.tuneSizes } : {}),
        inTime,
      });
    }
  } finally {
    await gpu.close();
    await cpu.close();
  }
}

/** Runs the check; resolves with the exit code, at the latest when the deadline passes. */
export async function runGpuCheck(
  options: GpuCheckOptions,
  write?: (text: string) => unknown,
): Promise<number> {
  const report = createReport(options.out, write);
  const started = performance.now();
  const deadlineAt = started + options.deadlineSeconds * 1000;
  const finish = (cutShort: boolean) => {
    if (cutShort) report.problem('deadline', `the deadline of ${options.deadlineSeconds} s passed first`);
    const exitCode = exitCodeOf(report.problems);
    report.emit({
      record: 'summary',
      exit_code: exitCode,
      problems: report.messages,
      seconds: Math.round((performance.now() - started) / 100) / 10,
    });
    return exitCode;
  };
  // A referenced timer: it keeps the process alive (the engines' workers do not) and ends it in time.
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<number>((resolve) => {
    timer = setTimeout(() => resolve(finish(true)), Math.max(0, deadlineAt - performance.now()));
  });
  const steps = checkSteps(report, options, () => performance.now() < deadlineAt).then(
    () => finish(performance.now() >= deadlineAt),
    (error: unknown) => {
      report.problem('failed', error instanceof Error ? (error.stack ?? error.message) : String(error));
      return finish(false);
    },
  );
  try {
    return await Promise.race([steps, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export { GPU_CHECK_EXIT };
