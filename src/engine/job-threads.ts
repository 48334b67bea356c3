// The job threads: a pool of worker threads (job-thread.ts) that does the host's share of each job
// (job-work.ts: compile, whole small jobs, sample paths, documents), so a host with n cores does n jobs'
// host work at once and the event loop only moves bytes; and the cache of compiled fixtures, sized in
// bytes, that every job of the process shares (a fixture version is compiled once while it stays in it).
import { availableParallelism } from 'node:os';
import { FIXTURE_WORDS } from '../engine-contract/layout.js';
import type { MarketInputs, MatchInputs } from '../engine-contract/match-inputs.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import { startModuleWorker } from '../engine-contract/module-worker.js';
import { createThreadPool } from '../engine-contract/thread-pool.js';
import { compileKeyOfMatch } from './compile.js';
import { createSlotPool, SLOT_BYTES, type SlotPool, type SlotTables } from './compiled-slots.js';
import type { JobThreadReply, JobThreadTask } from './job-thread.js';
import {
  adoptCompiled,
  type CompiledAndRun,
  createJobScratch,
  type FinishedDocument,
  type HostJob,
  type JobTask,
  type JobWorkSetting,
  type PreMatchJob,
  performJobTask,
  preMatchJobOfText,
  type RunFacts,
  type SharedCompiled,
  type WholeJobRun,
} from './job-work.js';
import type { MarketFit } from './market-fit.js';

/**
 * Bytes of compiled fixtures kept (tables and event tables, about 0.85 MB a fixture): some 300 fixture
 * versions, a whole matchday of every league a host sells several times over.
 */
export const COMPILE_CACHE_BYTES = 256 * 1024 * 1024;

/**
 * Tasks sent to a job thread at once (src/engine-contract/thread-pool.ts): the one it runs and three more, so that
 * a thread keeps working through some 100 ms of a busy event loop (a store of documents, a collection)
 * with jobs of 10,000 draws, and through more with smaller ones. 300 jobs of 10,000 draws on 2 cores:
 * 5.32 s with 4, 5.50 s with 2 (means of 3 runs each); 1,000 of 100 draws alike.
 */
const JOB_THREAD_DEPTH = 4;

export interface CompileCacheStats {
  entries: number;
  bytes: number;
  hits: number;
  misses: number;
  /**
   * Fixtures whose tables were compiled (rates, thresholds, event tables, into a slot): a fixture
   * version's once while it stays in the cache, whatever the draws, seeds, offered odds and in-play states
   * of its jobs.
   */
  compiles: number;
  /** In-play jobs' fixture tables made from their pre-match entry (the state block alone, no compile). */
  fromPreMatch: number;
  /** Compiles of fitted runs given the market fit a 'fit' task had found (no second fit). */
  fitsGiven: number;
  /** Compiled fixtures acquired and not yet released (jobs running, or a leak). */
  inUse: number;
  /** Slots the cache's pool made (compiled-slots.ts), and how many are free. */
  slots: number;
  slotsFree: number;
}

/**
 * A compiled fixture in use: its slot stays its own until release, which every acquire is owed once the
 * job is done with it (the cache may then give the slot to another fixture).
 */
export interface CompiledInUse {
  compiled: SharedCompiled;
  release(): void;
}

/** A compiled fixture in use, and the job's whole run when the compile ran it too (acquireWhole). */
export interface CompiledInUseWithRun extends CompiledInUse {
  finished: WholeJobRun | null;
}

export interface JobThreads {
  /** Threads in the pool; 0 does the work on the calling thread. */
  readonly threads: number;
  /** The job's compiled fixture: from the cache, or compiled on a thread (once, however many ask). */
  acquire(job: HostJob): Promise<CompiledInUse>;
  /**
   * As acquire, for a job to run whole: a fixture not compiled yet is compiled and the job run in one
   * task (`finished`); one in the cache gives `finished: null`, and the job is run by `whole`.
   */
  acquireWhole(job: HostJob): Promise<CompiledInUseWithRun>;
  /** A whole job (its draws on one thread, then its document). */
  whole(job: HostJob, compiled: SharedCompiled): Promise<WholeJobRun>;
  /** The document of a job whose draws were counted elsewhere (the GPU, the CPU pool). */
  finish(
    job: HostJob,
    compiled: SharedCompiled,
    counts: Uint32Array,
    run: RunFacts,
  ): Promise<FinishedDocument>;
  /**
   * The market fit of a fitted run's inputs (compile.ts marketFitOfInputs), on a job thread: what the
   * domain asks before it holds anything, off the event loop (some 4 ms a fit); that thread's compile of
   * the job takes it (makeKnownFits), on whichever thread it runs.
   */
  fitMarket(match: MatchInputs & { market: MarketInputs }): Promise<MarketFit>;
  cacheStats(): CompileCacheStats;
  close(): Promise<void>;
}

export function createJobThreads(options: {
  setting: JobWorkSetting;
  /** Default one per core; 0 works on the calling thread. */
  threads?: number | undefined;
  cacheBytes?: number | undefined;
}): JobThreads {
  const threads = options.threads ?? availableParallelism();
  const pool = createThreadPool<JobThreadTask, JobThreadReply>({
    size: threads,
    name: 'job thread',
    start: () => startModuleWorker(import.meta.url, 'job-thread', { workerData: options.setting }),
    // A thread's next tasks wait beside it: a small job's task takes about as long as its answer's way
    // back through the event loop (src/engine-contract/thread-pool.ts).
    depth: JOB_THREAD_DEPTH,
  });
  let nextTaskId = 0;
  // Work on the calling thread keeps its scratch here, as a job thread keeps its own.
  const scratch = threads === 0 ? createJobScratch() : null;
  const perform = async <T>(body: JobTask): Promise<T> => {
    if (scratch !== null) return performJobTask(options.setting, scratch, body) as T;
    const reply = await pool.run({ ...body, taskId: nextTaskId++ } as JobThreadTask);
    return reply.value as T;
  };
  const backend = `cpu-job-threads-${threads}`;
  const fits = makeKnownFits(options.setting.params);
  const cache = makeCompileCache(options.cacheBytes ?? COMPILE_CACHE_BYTES, {
    preMatchOf: (job) => preMatchJobOfText(options.setting, job),
    async compile(job, tables, whole) {
      if (!whole) {
        const done = await perform<SharedCompiled | { preMatch: PreMatchJob }>({
          kind: 'compile',
          job,
          tables,
          fit: fits.of(job.key),
        });
        return 'preMatch' in done ? done : { compiled: adoptCompiled(done), finished: null };
      }
      const done = await perform<CompiledAndRun | { preMatch: PreMatchJob }>({
        kind: 'compile-whole',
        job,
        tables,
        backend,
        fit: fits.of(job.key),
      });
      return 'preMatch' in done ? done : { compiled: adoptCompiled(done.compiled), finished: done.finished };
    },
    async fromPreMatch(job, preMatch, whole) {
      if (!whole) {
        const compiled = await perform<SharedCompiled>({ kind: 'from-pre-match', job, preMatch });
        return { compiled: adoptCompiled(compiled), finished: null };
      }
      const done = await perform<CompiledAndRun>({ kind: 'from-pre-match-whole', job, preMatch, backend });
      return { compiled: adoptCompiled(done.compiled), finished: done.finished };
    },
  });
  return {
    threads,
    acquire: (job) => cache.acquire(job, false),
    acquireWhole: (job) => cache.acquire(job, true),
    whole: (job, compiled) => perform({ kind: 'whole', job, compiled, backend }),
    finish: (job, compiled, counts, run) => perform({ kind: 'finish', job, compiled, counts, run }),
    async fitMarket(match) {
      const fit = await perform<MarketFit>({ kind: 'fit', match });
      fits.remember(match, fit);
      return fit;
    },
    cacheStats: () => ({ ...cache.stats(), fitsGiven: fits.given() }),
    close: () => pool.close(),
  };
}

/** Market fits remembered for the compiles of their runs (makeKnownFits): a few matchdays' fitted runs. */
const FITS_KEPT = 256;

/**
 * The market fits the domain asked for (a fitted run's reach, before its hold: some 4 ms each) by the
 * compile key of their inputs, so that the run's compile takes its fit (compile.ts
 * compileWithEventTables `knownFit`) on whichever thread it lands, where only the thread that fitted had
 * it in its cache and the other fitted again. The domain asks with the inputs the run's payload then
 * carries (src/simulations/prepare-run.ts): the same text, so the same key, and the in-play runs of the
 * match key their pre-match compile by it. Least recently remembered first out.
 */
function makeKnownFits(params: ModelParams) {
  const fits = new Map<string, MarketFit>();
  let given = 0;
  return {
    remember(match: MatchInputs, fit: MarketFit) {
      const key = compileKeyOfMatch(JSON.stringify(match), params);
      fits.delete(key);
      fits.set(key, fit);
      if (fits.size > FITS_KEPT) fits.delete(fits.keys().next().value!);
    },
    of(key: string): MarketFit | null {
      const fit = fits.get(key) ?? null;
      if (fit !== null) given++;
      return fit;
    },
    given: () => given,
  };
}

/** What the compile cache asks of the job threads. */
interface CacheCompiles {
  /** An in-play job's pre-match job as its text shows it (job-work.ts preMatchJobOfText), on the event loop. */
  preMatchOf(job: HostJob): PreMatchJob | null;
  /** The job compiled into `tables` (and run, with `whole`), or for an in-play job its pre-match job. */
  compile(
    job: HostJob,
    tables: SlotTables,
    whole: boolean,
  ): Promise<CompiledAndRunOrNot | { preMatch: PreMatchJob }>;
  /** An in-play job's compiled fixture from its pre-match job's (job-work.ts compileFromPreMatch). */
  fromPreMatch(job: HostJob, preMatch: SharedCompiled, whole: boolean): Promise<CompiledAndRunOrNot>;
}

type CompiledAndRunOrNot = { compiled: SharedCompiled; finished: WholeJobRun | null };

/** Bytes an in-play job's entry holds of its own: its fixture table (job-work.ts compileFromPreMatch). */
const FROM_PRE_MATCH_BYTES = FIXTURE_WORDS * Uint32Array.BYTES_PER_ELEMENT;

/** A compile cache's entry (makeCompileCache). */
interface CacheEntry {
  compiled: Promise<SharedCompiled>;
  /** Its slot; null for an in-play job's entry once it is known to be one. */
  tables: SlotTables | null;
  /** An in-play job's pre-match entry, in use while this entry is. */
  preMatch: CompiledInUse | null;
  bytes: number;
  users: number;
  /** Out of the cache: its slot goes back to the pool when its last user releases it. */
  dropped: boolean;
}

/**
 * A new entry before its compile (its `compiled` set by makeCompileCache), no user yet: a slot of its
 * own, or, for an in-play job known to be one, only its fixture table's bytes.
 */
function newEntry(slots: SlotPool, inPlay: boolean): Omit<CacheEntry, 'compiled'> {
  return {
    tables: inPlay ? null : slots.take(),
    preMatch: null,
    bytes: inPlay ? FROM_PRE_MATCH_BYTES : SLOT_BYTES,
    users: 0,
    dropped: false,
  };
}

/**
 * An entry found to be an in-play job's once its slot was taken (a thread's compile found out): the slot
 * back to the pool. Returns the change in the bytes the cache holds.
 */
function slotGivenBack(slots: SlotPool, entry: CacheEntry): number {
  slots.give(entry.tables!);
  entry.tables = null;
  const change = entry.dropped ? 0 : FROM_PRE_MATCH_BYTES - entry.bytes;
  entry.bytes = FROM_PRE_MATCH_BYTES;
  return change;
}

/** An entry's use, released once however often `release` is called. */
function useOf(compiled: SharedCompiled, finished: WholeJobRun | null, end: () => void) {
  let released = false;
  return {
    compiled,
    finished,
    release() {
      if (released) return;
      released = true;
      end();
    },
  };
}

/** An entry out of the cache and out of use: its slot back to the pool, its pre-match entry released. */
function freeEntry(slots: SlotPool, entry: CacheEntry): void {
  if (entry.tables) slots.give(entry.tables);
  entry.tables = null;
  entry.preMatch?.release();
}

/**
 * Compiled fixtures by compile key, least recently used first, bounded in bytes, each in a slot of the
 * cache's pool (compiled-slots.ts). A key being compiled is kept as its promise, so jobs of the same
 * fixture that arrive together wait for one compile. An entry counts its users: one pushed out while in
 * use leaves the cache at once but keeps its slot until its last user releases it, so a slot is never
 * written while a job reads it. Slots come back to the pool, never to the system: the pool holds at most
 * the cache's bytes plus the fixtures in use.
 *
 * An in-play job (the minutes of a win-probability path, docs/model.md "In play") takes no slot: its
 * entry uses the entry of its pre-match job (compiled once for every state of the match, and shared with
 * a pre-match run of the same inputs), whose threshold and event tables it reads, and holds only its own
 * fixture table; it keeps the pre-match entry in use until its own is freed. Its payload's text names
 * its pre-match job, so its one task makes its fixture table (and runs it whole); where the text does
 * not show it, a thread's compile finds it and the slot taken goes back.
 */
function makeCompileCache(maxBytes: number, compiles: CacheCompiles) {
  type Entry = CacheEntry;
  const slots = createSlotPool();
  const entries = new Map<string, Entry>();
  /** What the cache counts since its start (CompileCacheStats). */
  const counted = { hits: 0, misses: 0, compiles: 0, fromPreMatch: 0 };
  let inUse = 0;
  let bytes = 0;
  const free = (entry: Entry) => freeEntry(slots, entry);
  function drop(key: string, entry: Entry) {
    entries.delete(key);
    bytes -= entry.bytes;
    entry.dropped = true;
    if (entry.users === 0) free(entry);
  }
  function evict() {
    for (const [key, entry] of entries) {
      if (bytes <= maxBytes || entries.size <= 1) return;
      drop(key, entry);
    }
  }
  function release(entry: Entry, byJob: boolean) {
    if (entry.users <= 0) throw new Error('a compiled fixture released more often than acquired');
    entry.users--;
    if (byJob) inUse--;
    if (entry.users === 0 && entry.dropped) free(entry);
  }
  /**
   * The entry's compile: into its slot; for an in-play job, from its pre-match entry (acquired, a
   * compile into a slot of its own on a miss). `preMatch`: the job's pre-match job where its text
   * showed it, and the entry has no slot; else a thread's compile finds out, and the slot goes back.
   */
  async function make(
    entry: Entry,
    job: HostJob,
    whole: boolean,
    preMatch: PreMatchJob | null,
  ): Promise<CompiledAndRunOrNot> {
    let found = preMatch;
    if (found === null) {
      const done = await compiles.compile(job, entry.tables!, whole);
      if (!('preMatch' in done)) {
        counted.compiles++;
        return done;
      }
      found = done.preMatch;
      bytes += slotGivenBack(slots, entry);
    }
    entry.preMatch = await acquire({ ...job, key: found.key, payloadJson: found.payloadJson }, false, false);
    const made = await compiles.fromPreMatch(job, entry.preMatch.compiled, whole);
    counted.fromPreMatch++;
    return made;
  }
  /**
   * With `whole`, a miss compiles and runs the job in one task; the run is this acquire's alone. A use
   * `byJob` counts in `inUse`; an in-play entry's use of its pre-match entry does not.
   */
  async function acquire(job: HostJob, whole: boolean, byJob = true): Promise<CompiledInUseWithRun> {
    let entry = entries.get(job.key);
    let run: Promise<WholeJobRun | null> = Promise.resolve(null);
    if (entry) {
      counted.hits++;
      entries.delete(job.key);
      entries.set(job.key, entry);
    } else {
      counted.misses++;
      const preMatch = compiles.preMatchOf(job);
      const made = newEntry(slots, preMatch !== null) as Entry;
      const compiling = make(made, job, whole, preMatch);
      made.compiled = compiling.then((done) => done.compiled);
      run = compiling.then((done) => done.finished);
      entry = made;
      entries.set(job.key, entry);
      bytes += entry.bytes;
      evict();
    }
    const used = entry;
    used.users++;
    if (byJob) inUse++;
    try {
      const [compiled, finished] = await Promise.all([used.compiled, run]);
      return useOf(compiled, finished, () => release(used, byJob));
    } catch (error) {
      // A compile that failed is not kept: the next job of those inputs tries (and fails) again.
      if (entries.get(job.key) === used) drop(job.key, used);
      release(used, byJob);
      throw error;
    }
  }
  return {
    acquire,
    stats: (): Omit<CompileCacheStats, 'fitsGiven'> => ({
      entries: entries.size,
      bytes,
      ...counted,
      inUse,
      ...slots.stats(),
    }),
  };
}
