// `serve-bench`: the service's own figures on a GPU host, through HTTP (docs/gpu.md "The service on a
// GPU host"). The GPU engine alone on the large batch first (the reference), then on each back end
// (embedded PGlite; the bundled PostgreSQL server with API processes and one GPU worker) the workloads
// of ./serve-load.ts. One JSON line per record, written to --out as it comes, so that a run stopped by
// its deadline (or killed) leaves what it measured.
//   node dist/bench/serve-bench.js --out FILE [--deadline SECONDS] [--scale tiny|full] [--allow-software]
//     [--backends embedded,server]
// Exit code: 0 every record written and every job on the GPU; 1 a back end or workload failed (its
// `failed` record says why); 3 no adapter; 4 only a software adapter and no --allow-software (as
// gpu-check); 5 the deadline came first; 6 some job ran on the CPU engine.
import { appendFileSync, mkdirSync } from 'node:fs';
import { availableParallelism, cpus, hostname, release } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createGpuEngine } from '../gpu/engine.js';
import { batchFixtures, summarizeRuns } from '../src/cli/gpu-check/engine-steps.js';
import {
  batch,
  concurrentLarge,
  type LoadContext,
  SCALES,
  type Scale,
  sequentialLarge,
  sequentialMisses,
  winProbabilityPath,
} from './serve-load.js';
import { type Backend, startStack } from './serve-stack.js';

const EXIT = { ok: 0, failed: 1, noAdapter: 3, softwareAdapter: 4, deadline: 5, ranOnCpu: 6 } as const;
/** Past the deadline, the run stops what it does and exits with what it wrote. */
const HARD_STOP_GRACE_MS = 20_000;

const USAGE =
  'usage: serve-bench --out FILE [--deadline SECONDS] [--scale tiny|full] [--allow-software] [--backends embedded,server]';

/**
 * The run's options. `--help` or `-h` prints the usage and exits 0; a mistake (an unknown flag, a missing
 * value, a bad scale) prints what is wrong and the usage, and exits 2: never a stack trace (the GPU
 * bundle's run.sh passes its arguments here, and `--help` is an operator's first command on a GPU host).
 */
function options() {
  const refuse = (message: string): never => {
    process.stderr.write(`serve-bench: ${message}\n\n${USAGE}\n`);
    process.exit(2);
  };
  let values: {
    out?: string | undefined;
    deadline: string;
    scale: string;
    'allow-software': boolean;
    backends: string;
    help?: boolean | undefined;
  };
  try {
    ({ values } = parseArgs({
      options: {
        out: { type: 'string' },
        deadline: { type: 'string', default: '420' },
        scale: { type: 'string', default: 'full' },
        'allow-software': { type: 'boolean', default: false },
        backends: { type: 'string', default: 'embedded,server' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    // node:util's first sentence ("Unknown option '--x'"); the rest is advice about `--`.
    return refuse((error as Error).message.split('. ')[0]!);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const scale = SCALES[values.scale as Scale['name']];
  const deadline = Number(values.deadline);
  const backends = values.backends.split(',') as Backend[];
  if (!values.out) return refuse('--out FILE is required');
  if (!scale) return refuse(`--scale is one of ${Object.keys(SCALES).join(', ')}`);
  if (!(deadline > 0)) return refuse('--deadline must be a number of seconds above 0');
  if (backends.some((b) => b !== 'embedded' && b !== 'server'))
    return refuse('--backends lists embedded, server or both');
  return { out: values.out, scale, deadline, backends, allowSoftware: values['allow-software'] };
}

/** The GPU engine alone on the large batch's work, in this process: the reference of record (c). */
async function engineAlone(scale: Scale, allowSoftware: boolean) {
  // Software adapters allowed here so that a refusal can name the one found (as gpu-check does).
  const gpu = createGpuEngine({ mode: 'gpu', allowSoftware: true });
  try {
    const state = await gpu.started();
    if (state.state !== 'ready' || (state.software && !allowSoftware)) return { state, record: null };
    const fixtures = batchFixtures(scale.batchItems);
    const seed = { lo: 0xba7c4, hi: 0x2 };
    // Warm-up: the worker's first dispatch, the JIT and the GPU's clocks are not part of the figure.
    await gpu.runBatch(fixtures.map((compiled) => ({ compiled, draws: 100, seed })));
    await gpu.runBatch([{ compiled: fixtures[0]!, draws: scale.largeDraws, seed }]);
    const started = performance.now();
    const runs = await gpu.runBatch(
      fixtures.map((compiled, index) => ({ compiled, draws: scale.batchDraws, seed: { lo: index, hi: 9 } })),
    );
    const summary = summarizeRuns(runs, performance.now() - started);
    return {
      state: gpu.state(),
      record: {
        record: 'engine-alone',
        work: `the GPU engine alone (no service): batch of ${scale.batchItems} fixtures x ${scale.batchDraws} draws`,
        draws: scale.batchItems * scale.batchDraws,
        ...summary,
        jobs_gpu: summary.jobs - summary.jobs_on_cpu,
        jobs_cpu: summary.jobs_on_cpu,
        seconds: summary.engine === 'gpu' ? summary.wall_ms / 1000 : null,
      },
    };
  } finally {
    await gpu.close();
  }
}

/** How to start Node for the service: the bundle's command (with its C library) or this very Node. */
function nodeCommand(): string[] {
  const given = process.env.MATCHSIM_NODE_COMMAND?.trim();
  return given ? given.split(/\s+/) : [process.execPath];
}

interface BackendRun {
  scale: Scale;
  inTime(): boolean;
  emit(record: Record<string, unknown>): void;
  /** Request numbers go on across back ends (./serve-load.ts missBody). */
  counter: { next: number };
  reference: Record<string, unknown>;
  /** The stack's stop, for the hard stop past the deadline (null once stopped). */
  stopping(stop: (() => Promise<void>) | null): void;
}

/** One back end: its stack started and set up, its workloads, one record each, and the stack stopped. */
async function runBackend(backend: Backend, run: BackendRun): Promise<void> {
  const { scale, inTime } = run;
  const setupStarted = performance.now();
  const stack = await startStack({
    backend,
    node: nodeCommand(),
    cli: fileURLToPath(new URL('../src/cli/main.js', import.meta.url)),
    fixtures: scale.batchItems,
    apiProcesses: scale.apiProcesses,
    say: (line) => process.stderr.write(`${line}\n`),
  });
  run.stopping(stack.stop);
  const timing = (stack.engine.gpu as { timing?: string } | null)?.timing ?? null;
  const context: LoadContext = {
    stack,
    scale,
    inTime,
    // `wall`: the device has no timestamp queries and GPU times are submit to readback (gpu/engine.ts).
    emit: (record) => run.emit({ ...record, backend, gpu_timing: timing }),
    nextRequest: () => run.counter.next++,
  };
  try {
    context.emit({
      record: 'stack',
      api_processes: stack.apiBases.length,
      worker_processes: 1,
      setup_s: Math.round(performance.now() - setupStarted) / 1000,
      engine: stack.engine,
    });
    const workloads: Array<[string, () => Promise<void>]> = [
      ['sequential', () => sequentialLarge(context)],
      ...scale.clients.map((clients): [string, () => Promise<void>] => [
        'concurrent',
        () => concurrentLarge(context, clients),
      ]),
      ['batch-large', () => batch(context, 'batch-large', scale.batchDraws, run.reference)],
      ['batch-small', () => batch(context, 'batch-small', scale.smallBatchDraws, null)],
      ['misses', () => sequentialMisses(context)],
      ['path', () => winProbabilityPath(context)],
    ];
    for (const [name, workload] of workloads) {
      if (!inTime()) break;
      // A workload that fails is said, and the next one runs: the summary names what is missing.
      await workload().catch((error: unknown) =>
        context.emit({ record: 'failed', workload: name, error: (error as Error).message }),
      );
    }
  } finally {
    run.stopping(null);
    await stack.stop();
  }
}

/** The records a complete run writes that `written` (records by name) lacks. */
function missingRecords(written: ReadonlyMap<string, number>, scale: Scale, backends: number): string[] {
  // Per back end: stack, sequential, one concurrent per client count, two batches, misses, the path.
  const expected = {
    sequential: 1,
    concurrent: scale.clients.length,
    'batch-large': 1,
    'batch-small': 1,
    misses: 1,
    path: 1,
    stack: 1,
  };
  return Object.entries(expected)
    .filter(([name, n]) => (written.get(name) ?? 0) < n * backends)
    .map(([name]) => name);
}

async function main(): Promise<number> {
  const { out, scale, deadline, backends, allowSoftware } = options();
  const startedAt = Date.now();
  const deadlineAt = startedAt + deadline * 1000;
  const inTime = () => Date.now() < deadlineAt;
  mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  const written = new Map<string, number>();
  let jobsOnCpu = 0;
  const emit = (record: Record<string, unknown>) => {
    const line = JSON.stringify({
      ...record,
      at_s: Math.round((Date.now() - startedAt) / 100) / 10,
    });
    appendFileSync(out, `${line}\n`);
    process.stdout.write(`${line}\n`);
    written.set(String(record.record), (written.get(String(record.record)) ?? 0) + 1);
    if (typeof record.jobs_cpu === 'number') jobsOnCpu += record.jobs_cpu;
  };
  let stopping: (() => Promise<void>) | null = null;
  setTimeout(
    () => {
      emit({
        record: 'deadline',
        note: `stopped ${HARD_STOP_GRACE_MS / 1000} s past the ${deadline} s deadline`,
      });
      void (stopping?.() ?? Promise.resolve()).finally(() => process.exit(EXIT.deadline));
    },
    deadline * 1000 + HARD_STOP_GRACE_MS,
  ).unref();

  emit({
    record: 'host',
    hostname: hostname(),
    kernel: release(),
    cpus: availableParallelism(),
    cpu_model: cpus()[0]?.model ?? null,
    node: process.version,
    scale: scale.name,
    deadline_s: deadline,
    backends,
  });
  const alone = await engineAlone(scale, allowSoftware);
  emit({ record: 'engine', ...alone.state });
  if (!alone.record) {
    const software = alone.state.state === 'ready' && alone.state.software === true;
    emit({
      record: 'failed',
      problem: software ? 'softwareAdapter' : 'noAdapter',
      detail: software
        ? `only a software adapter (${alone.state.adapter}); --allow-software runs on it`
        : alone.state.reason,
    });
    return software ? EXIT.softwareAdapter : EXIT.noAdapter;
  }
  emit(alone.record!);

  const counter = { next: 0 };
  for (const backend of backends) {
    if (!inTime()) break;
    // A back end that does not start is said, and the next one runs: the summary names what is missing.
    await runBackend(backend, {
      scale,
      inTime,
      emit,
      counter,
      reference: alone.record!,
      stopping: (stop) => {
        stopping = stop;
      },
    }).catch((error: unknown) => emit({ record: 'failed', backend, error: (error as Error).message }));
  }
  const missing = missingRecords(written, scale, backends.length);
  emit({
    record: 'summary',
    complete: missing.length === 0,
    missing,
    jobs_cpu: jobsOnCpu,
    all_on_gpu: jobsOnCpu === 0,
  });
  if (written.has('failed')) return EXIT.failed;
  if (missing.length > 0) return EXIT.deadline;
  return jobsOnCpu > 0 ? EXIT.ranOnCpu : EXIT.ok;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`serve-bench: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(EXIT.failed);
  },
);
