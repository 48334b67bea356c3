// The job threads: a pool of worker threads (job-thread.ts) that does the host's share of each job
// (job-work.ts: compile, whole small jobs, sample paths, documents), so a host with n cores does n jobs'
// host work at once and the event loop only moves bytes; and the cache of compiled fixtures, sized in
// bytes, that every job of the process shares (a fixture version is compiled once while it stays in it).
import { availableParallelism } from 'node:os';
import { startModuleWorker } from './contract/module-worker.js';
import { createThreadPool } from './contract/thread-pool.js';
import type { JobThreadReply, JobThreadTask } from './job-thread.js';
import {
  adoptCompiled,
  compiledBytes,
  compileShared,
  type FinishedDocument,
  finishJob,
  type HostJob,
  type JobWorkSetting,
  type RunFacts,
  runWholeJob,
  type SharedCompiled,
} from './job-work.js';

/**
 * Bytes of compiled fixtures kept (tables and event tables, about 0.85 MB a fixture): some 300 fixture
 * versions, a whole matchday of every league a host sells several times over.
 */
export const COMPILE_CACHE_BYTES = 256 * 1024 * 1024;

export interface CompileCacheStats {
  entries: number;
  bytes: number;
  hits: number;
  misses: number;
}

export interface JobThreads {
  /** Threads in the pool; 0 does the work on the calling thread. */
  readonly threads: number;
  /** The job's compiled fixture: from the cache, or compiled on a thread (once, however many ask). */
  compiled(job: HostJob): Promise<SharedCompiled>;
  /** A whole job (its draws on one thread, then its document). */
  whole(job: HostJob, compiled: SharedCompiled): Promise<FinishedDocument & { runMs: number }>;
  /** The document of a job whose draws were counted elsewhere (the GPU, the CPU pool). */
  finish(
    job: HostJob,
    compiled: SharedCompiled,
    counts: Uint32Array,
    run: RunFacts,
  ): Promise<FinishedDocument>;
  cacheStats(): CompileCacheStats;
  close(): Promise<void>;
}

type TaskBody = JobThreadTask extends infer T ? (T extends unknown ? Omit<T, 'taskId'> : never) : never;

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
  });
  let nextTaskId = 0;
  const perform = async <T>(body: TaskBody): Promise<T> => {
    if (threads === 0) return performHere(options.setting, body) as T;
    const reply = await pool.run({ ...body, taskId: nextTaskId++ } as JobThreadTask);
    return reply.value as T;
  };
  const cache = makeCompileCache(options.cacheBytes ?? COMPILE_CACHE_BYTES, (job) =>
    perform<SharedCompiled>({ kind: 'compile', job }).then(adoptCompiled),
  );
  return {
    threads,
    compiled: cache.get,
    whole: (job, compiled) =>
      perform({ kind: 'whole', job, compiled, backend: `cpu-job-threads-${threads}` }),
    finish: (job, compiled, counts, run) => perform({ kind: 'finish', job, compiled, counts, run }),
    cacheStats: cache.stats,
    close: () => pool.close(),
  };
}

/** The work of a task on this thread (a pool of no threads). */
function performHere(setting: JobWorkSetting, body: TaskBody): unknown {
  switch (body.kind) {
    case 'compile':
      return compileShared(body.job.inputs, setting.params);
    case 'whole':
      return runWholeJob(setting, body.job, body.compiled, body.backend);
    case 'finish':
      return finishJob(setting, body.job, body.compiled, body.counts, body.run);
  }
}

/**
 * Compiled fixtures by compile key, least recently used first, bounded in bytes. A key being compiled is
 * kept as its promise, so jobs of the same fixture that arrive together wait for one compile.
 */
function makeCompileCache(maxBytes: number, compile: (job: HostJob) => Promise<SharedCompiled>) {
  const entries = new Map<string, { compiled: Promise<SharedCompiled>; bytes: number }>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;
  function evict() {
    for (const [key, entry] of entries) {
      if (bytes <= maxBytes || entries.size <= 1) return;
      entries.delete(key);
      bytes -= entry.bytes;
    }
  }
  function get(job: HostJob): Promise<SharedCompiled> {
    const found = entries.get(job.key);
    if (found) {
      hits++;
      entries.delete(job.key);
      entries.set(job.key, found);
      return found.compiled;
    }
    misses++;
    const entry = { compiled: compile(job), bytes: 0 };
    entries.set(job.key, entry);
    entry.compiled.then(
      (compiled) => {
        if (entries.get(job.key) !== entry) return;
        entry.bytes = compiledBytes(compiled);
        bytes += entry.bytes;
        evict();
      },
      // A compile that failed is not kept: the next job of those inputs tries (and fails) again.
      () => entries.get(job.key) === entry && entries.delete(job.key),
    );
    return entry.compiled;
  }
  return { get, stats: (): CompileCacheStats => ({ entries: entries.size, bytes, hits, misses }) };
}
