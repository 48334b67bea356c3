// The CPU engine, and the one door to it from above (the runner, src/engine): it decides how a run's
// draws are spread (spreadOf). A small run is counted whole, synchronously, on the thread that holds its
// job (runWhole, on a job thread that builds the document in the same task); a larger one is split into
// ranges simulated on a pool of worker threads (so a 1,000,000-draw run never blocks the caller's event
// loop and uses every core) whose counters are summed; the runs of several lanes share the threads, the
// next range going to the lane that has had least of them lately (src/engine-contract/fair-slices.ts). Counts are sums over draws and every draw's numbers
// depend only on (seed, draw), so the result is the same for any spread, thread count or range size.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { eventTablesOf } from '../src/engine-contract/event-tables.js';
import {
  type FairSlices,
  makeFairSlices,
  type QueuedRun,
  type Slice,
} from '../src/engine-contract/fair-slices.js';
import {
  addCounters,
  COUNTER_WORDS,
  type CompiledFixture,
  type EngineSeed,
  finalizeCounters,
} from '../src/engine-contract/layout.js';
import { startModuleWorker } from '../src/engine-contract/module-worker.js';
import type { EngineRun, EngineRunOptions, FixtureRunner, RunShare } from '../src/engine-contract/run.js';
import type { SamplePath } from '../src/engine-contract/sample-path.js';
import { createThreadPool, type ThreadPool } from '../src/engine-contract/thread-pool.js';
import type { RangeReply, RangeTask, RunTables } from './cpu-worker.js';
import { simulateRange } from './engine.js';

// The sample paths a document shows are a replay of its first draws on the CPU engine, whichever engine
// counted them; the runner reaches them through this door too.
export { recordSamplePaths } from './engine.js';

/**
 * Runs of at most this many draws are counted whole on the thread that holds the job (a batch's items:
 * one message each way to a job thread, draws and document together, and as many at once as there are
 * cores); larger ones share their draws out over the pool, so one large job uses every core.
 */
export const WHOLE_RUN_MAX_DRAWS = 20_000;

/** How a run's draws are spread: counted whole by runWhole where the job is, or shared over the pool (run). */
export type DrawSpread = 'whole' | 'pool';

/** The spread of a run of `draws`, the same for every CPU engine (it does not depend on the pool). */
export function spreadOf(draws: number): DrawSpread {
  return draws <= WHOLE_RUN_MAX_DRAWS ? 'whole' : 'pool';
}

export interface CpuEngine extends FixtureRunner {
  /** Worker threads in the pool (0 = simulating on the calling thread). */
  readonly threads: number;
  /** spreadOf: how this engine spreads a run of `draws` (runWhole where the job is, or its pool's `run`). */
  spreadOf(draws: number): DrawSpread;
  close(): Promise<void>;
}

/**
 * A run counted whole on this thread, synchronously: the runs spreadOf calls 'whole' (on a job thread,
 * src/engine/job-work.ts), and every run of a pool of 0 threads. `backend` names the thread it ran on.
 * With `samplePaths`, the paths of its first draws are recorded as they are counted (`samples` of the
 * run): the same paths as recordSamplePaths, without playing those draws a second time.
 */
export function runWhole(
  compiled: CompiledFixture,
  { draws, seed, onProgress }: EngineRunOptions,
  backend = 'cpu-inline',
  samplePaths = 0,
): EngineRun & { samples: SamplePath[] } {
  const started = performance.now();
  const counts = new Uint32Array(COUNTER_WORDS);
  const samples: SamplePath[] = [];
  // Counts are sums over draws: two ranges into the same counters count what one range does.
  const recorded = Math.min(samplePaths, draws);
  if (recorded > 0) simulateRange(compiled, seed, 0, recorded, counts, samples);
  simulateRange(compiled, seed, recorded, draws, counts);
  finalizeCounters(counts);
  onProgress?.(draws, draws);
  return { counts, engine: 'cpu', backend, runMs: performance.now() - started, samples };
}

/**
 * Ranges small enough to report progress often, large enough that messaging costs nothing; a run of
 * fewer than MIN_RANGE_DRAWS per thread is still shared by every thread (a range hop costs a message,
 * not a copy of the tables: see runTablesOf). A thread that finishes early takes the next range, so a
 * run waits at most about one range for its slowest thread: with cores shared with other processes the
 * threads' speeds differ, and 4 ranges a thread left one thread idle for ~270 ms at the end of a
 * 1,000,000-draw run on 2 cores (mean of 8), 16 for ~70 ms; a range costs well under a millisecond.
 */
const MIN_RANGE_DRAWS = 10_000;
const RANGES_PER_THREAD = 16;

/** The draws of each range of a run. */
function rangeDrawsOf(draws: number, threads: number): number {
  const perThread = Math.ceil(draws / threads);
  return Math.max(Math.min(MIN_RANGE_DRAWS, perThread), Math.ceil(perThread / RANGES_PER_THREAD));
}

/** `words` on shared memory: a copy, or `words` themselves when they are there already. */
export function sharedCopy(words: Uint32Array): Uint32Array {
  // Tables compiled on a job thread (src/engine/job-work.ts) are on shared memory already.
  if (words.buffer instanceof SharedArrayBuffer) return words;
  const copy = new Uint32Array(new SharedArrayBuffer(words.byteLength));
  copy.set(words);
  return copy;
}

/**
 * A compiled fixture's tables on shared memory, made once per compiled fixture and pool (a compiled
 * fixture's tables never change) with the event tables built here, on the host, once: every range task
 * of every run of it then carries them without a copy, and the pool's workers find what they derived from
 * them by id. Compiled fixtures that share a threshold table (the minutes of a win-probability path,
 * src/engine/compile-path.ts) share its copy and their event tables' (some 800 KB): only their fixture
 * tables are their own.
 */
function runTablesOf(pool: WorkerPool, compiled: CompiledFixture): RunTables {
  let tables = pool.tables.get(compiled);
  if (tables === undefined) {
    let shared = pool.thresholdTables.get(compiled.thresholds);
    if (shared === undefined) {
      shared = {
        thresholds: sharedCopy(compiled.thresholds),
        eventTables: sharedCopy(eventTablesOf(compiled.thresholds)),
      };
      pool.thresholdTables.set(compiled.thresholds, shared);
    }
    tables = { tablesId: pool.nextTablesId++, fixture: sharedCopy(compiled.fixture), ...shared };
    pool.tables.set(compiled, tables);
  }
  return tables;
}

/** A worker on cpu-worker (its .js in dist/, its .ts under tsx or vitest). */
function startWorker(): Worker {
  return startModuleWorker(import.meta.url, 'cpu-worker');
}

/**
 * A pool of `threads` workers (default: one per core). `threads: 0` simulates on the calling thread,
 * synchronously (tests, benchmarks, tiny runs where a thread hop costs more than the work).
 */
export function createCpuEngine(options: { threads?: number } = {}): CpuEngine {
  const threads = options.threads ?? availableParallelism();
  const pool: WorkerPool = {
    threads,
    ranges: createThreadPool<RangeTask, RangeReply>({
      size: threads,
      name: 'cpu engine worker',
      start: startWorker,
    }),
    nextTaskId: 0,
    waiting: makeFairSlices<PoolRange>(),
    rangesOut: 0,
    tables: new WeakMap(),
    thresholdTables: new WeakMap(),
    nextTablesId: 0,
  };
  return {
    threads,
    run: (compiled, runOptions) => runOnPool(pool, compiled, runOptions),
    spreadOf,
    close: () => closePool(pool),
  };
}

/** The pool's state, shared by the functions below. */
interface WorkerPool {
  threads: number;
  ranges: ThreadPool<RangeTask, Exclude<RangeReply, { error: string }>>;
  nextTaskId: number;
  /** The ranges of the runs on the pool not yet handed to a thread, in the fair order. */
  waiting: FairSlices<PoolRange>;
  /** Ranges handed to the threads and not yet answered (at most `threads`). */
  rangesOut: number;
  /** The tables of each compiled fixture this pool has run, and the id the next one gets (runTablesOf). */
  tables: WeakMap<CompiledFixture, RunTables>;
  /** The shared copies of each threshold table and its event tables (runTablesOf). */
  thresholdTables: WeakMap<Uint32Array, Pick<RunTables, 'thresholds' | 'eventTables'>>;
  nextTablesId: number;
}

/** A run on the pool: its ranges wait in the pool's fair queue, and their counters are added here. */
interface PoolRun {
  compiled: CompiledFixture;
  seed: EngineSeed;
  draws: number;
  done: number;
  counts: Uint32Array;
  onProgress: EngineRunOptions['onProgress'];
  failed: boolean;
  finished(error?: Error): void;
  queued: QueuedRun;
}

/** The lane of runs without a share: one, whose runs' ranges go in the order the runs came. */
const UNNAMED_SHARE: RunShare = { lane: '', weight: 1, interactive: false };

/** One range of a run's draws: a slice of the pool's fair queue. */
interface PoolRange extends Slice {
  run: PoolRun;
  firstDraw: number;
  endDraw: number;
}

/**
 * A run over the pool: its ranges join the pool's fair queue (src/engine-contract/fair-slices.ts), so
 * that the runs of several lanes share the threads by turns of one range, and it resolves once all of
 * them are counted.
 */
function runOnPool(
  pool: WorkerPool,
  compiled: CompiledFixture,
  options: EngineRunOptions,
): Promise<EngineRun> {
  const { threads } = pool;
  if (threads === 0) return Promise.resolve(runWhole(compiled, options));
  const { draws, seed, onProgress } = options;
  const started = performance.now();
  const share = options.share ?? UNNAMED_SHARE;
  return new Promise<EngineRun>((resolve, reject) => {
    const run: PoolRun = {
      compiled,
      seed,
      draws,
      done: 0,
      counts: new Uint32Array(COUNTER_WORDS),
      onProgress,
      failed: false,
      finished(error) {
        if (error) {
          reject(error);
          return;
        }
        finalizeCounters(run.counts);
        resolve({
          counts: run.counts,
          engine: 'cpu',
          backend: `cpu-workers-${threads}`,
          runMs: performance.now() - started,
        });
      },
      queued: { drop() {} },
    };
    const rangeDraws = rangeDrawsOf(draws, threads);
    const ranges: PoolRange[] = [];
    for (let first = 0; first < draws; first += rangeDraws) {
      const end = Math.min(draws, first + rangeDraws);
      ranges.push({ run, firstDraw: first, endDraw: end, draws: end - first });
    }
    run.queued = pool.waiting.add(share, ranges);
    handOutRanges(pool);
  });
}

/**
 * Hands the fair queue's next ranges to the threads while fewer than `threads` are out: one range per
 * thread, so a run that arrives waits for at most one range of each thread (some 30 ms) before its first
 * is counted, and a thread's next range is sent in the same turn as its answer comes, as before the queue.
 */
function handOutRanges(pool: WorkerPool): void {
  while (pool.rangesOut < pool.threads) {
    const range = pool.waiting.next();
    if (range === null) return;
    const { run } = range;
    pool.rangesOut++;
    runRange(pool, run.compiled, run.seed, range.firstDraw, range.endDraw).then(
      (counters) => {
        pool.rangesOut--;
        if (!run.failed) {
          addCounters(run.counts, counters);
          run.done += range.draws;
          run.onProgress?.(run.done, run.draws);
          if (run.done === run.draws) run.finished();
        }
        handOutRanges(pool);
      },
      (error: Error) => {
        pool.rangesOut--;
        failRun(run, error);
        handOutRanges(pool);
      },
    );
  }
}

/** A run fails once, at its first failed range: its ranges still waiting are not counted. */
function failRun(run: PoolRun, error: Error): void {
  if (run.failed) return;
  run.failed = true;
  run.queued.drop();
  run.finished(error);
}

/** Closes the pool: the runs whose ranges still wait fail (the threads' own tasks fail as they end). */
async function closePool(pool: WorkerPool): Promise<void> {
  const closing = pool.ranges.close();
  const error = new Error('cpu engine worker pool closed');
  for (let range = pool.waiting.next(); range !== null; range = pool.waiting.next())
    failRun(range.run, error);
  await closing;
}

async function runRange(
  pool: WorkerPool,
  compiled: CompiledFixture,
  seed: EngineSeed,
  firstDraw: number,
  endDraw: number,
): Promise<Uint32Array> {
  const reply = await pool.ranges.run({
    taskId: pool.nextTaskId++,
    tables: runTablesOf(pool, compiled),
    seedLo: seed.lo,
    seedHi: seed.hi,
    firstDraw,
    endDraw,
  });
  return reply.counters;
}

/** One run on a transient pool (`threads` default: one per core); prefer a long-lived createCpuEngine. */
export async function runCpuEngine(
  compiled: CompiledFixture,
  options: EngineRunOptions & { threads?: number },
): Promise<EngineRun> {
  const engine = createCpuEngine(options.threads === undefined ? {} : { threads: options.threads });
  try {
    return await engine.run(compiled, options);
  } finally {
    await engine.close();
  }
}
