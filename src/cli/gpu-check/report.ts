// gpu-check's output and verdict: JSON lines on stdout and in the --out file (appended and flushed line
// by line, so a run cut short by its deadline, or a process that dies, leaves what it had), and the exit
// code that says what went wrong (docs/gpu.md "gpu-check").
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Exit codes, most severe first where several problems occur (docs/gpu.md lists them). */
export const GPU_CHECK_EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  noAdapter: 3,
  softwareAdapter: 4,
  parityMismatch: 5,
  watchdog: 6,
  ranOnCpu: 7,
  deadline: 8,
} as const;

export type GpuCheckProblem = Exclude<keyof typeof GPU_CHECK_EXIT, 'ok' | 'usage'>;

const SEVERITY: readonly GpuCheckProblem[] = [
  'noAdapter',
  'softwareAdapter',
  'parityMismatch',
  'failed',
  'watchdog',
  'ranOnCpu',
  'deadline',
];

/** The exit code of a run: the most severe problem's, 0 with none. */
export function exitCodeOf(problems: ReadonlySet<GpuCheckProblem>): number {
  const worst = SEVERITY.find((problem) => problems.has(problem));
  return worst ? GPU_CHECK_EXIT[worst] : GPU_CHECK_EXIT.ok;
}

export interface CheckReport {
  /** Prints a record and appends it to the --out file. */
  emit(record: Record<string, unknown>): void;
  problem(kind: GpuCheckProblem, message: string): void;
  problems: Set<GpuCheckProblem>;
  messages: string[];
}

/** JSON with bigint timestamps as decimal strings. */
function line(record: Record<string, unknown>): string {
  return JSON.stringify(record, (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
}

export function createReport(
  out: string | undefined,
  write: (text: string) => unknown = (text) => process.stdout.write(text),
) {
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, '');
  }
  const report: CheckReport = {
    problems: new Set(),
    messages: [],
    emit(record) {
      const text = `${line({ at: new Date().toISOString(), ...record })}\n`;
      write(text);
      if (out) appendFileSync(out, text);
    },
    problem(kind, message) {
      report.problems.add(kind);
      report.messages.push(message);
      report.emit({ record: 'problem', problem: kind, exit_code: GPU_CHECK_EXIT[kind], message });
    },
  };
  return report;
}
