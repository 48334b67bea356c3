// The gpu-check command's flags (src/cli/parse.ts lists them) turned into its options; shared by
// `matchsim gpu-check` (src/cli/main.ts) and the bundle's entry point (./bin.ts).
import { accessSync, constants } from 'node:fs';
import { type Flags, UsageError } from '../parse.js';
import { type GpuCheckOptions, runGpuCheck } from './run.js';

/** What a GPU host's first check may take by default: the 15-minute slot leaves room for set-up. */
const DEFAULT_DEADLINE_SECONDS = 420;

function positive(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${flag} must be a positive number`, '');
  return n;
}

/** The --compare-kernel files (comma-separated), each readable. */
function kernelFiles(flags: Flags): string[] | undefined {
  const list = flags['compare-kernel'];
  if (list === undefined) return undefined;
  if (!flags.tune) throw new UsageError('--compare-kernel needs --tune', '');
  const files = list.split(',').filter((file) => file !== '');
  for (const file of files) {
    try {
      accessSync(file, constants.R_OK);
    } catch {
      throw new UsageError(`--compare-kernel: cannot read ${file}`, '');
    }
  }
  return files;
}

export function gpuCheckOptions(flags: Flags): GpuCheckOptions {
  return {
    out: flags.out,
    deadlineSeconds: positive(flags.deadline, 'deadline', DEFAULT_DEADLINE_SECONDS),
    scale: positive(flags.scale, 'scale', 1),
    allowSoftware: Boolean(flags['allow-software']),
    tune: Boolean(flags.tune),
    compareKernels: kernelFiles(flags),
  };
}

/** Runs the check; resolves with its exit code (report.ts GPU_CHECK_EXIT). */
export function gpuCheckCommand(flags: Flags): Promise<number> {
  return runGpuCheck(gpuCheckOptions(flags));
}
