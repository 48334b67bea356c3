// CPU time by process and thread kind, read from /proc (Linux): what the host rows (host.ts, serve-load.ts),
// the engine rows (engine.ts) and the 1,000 × 10,000 batch row (simulations.ts) report per job, a figure that
// does not depend on how busy a shared machine is (docs/decisions.md §6, "What a job costs the host").
import { readdirSync, readFileSync } from 'node:fs';
import { round } from './report.js';

/** CPU seconds (user + system) in a /proc stat file of a process or thread (Linux); throws if it is gone. */
function statCpuSeconds(statPath: string): number {
  const fields = readFileSync(statPath, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds (user + system) a process has used, from /proc (Linux). */
export function cpuSecondsOf(pid: number): number {
  try {
    return statCpuSeconds(`/proc/${pid}/stat`);
  } catch {
    return 0;
  }
}

/** The kind of a thread by its name: Node's and V8's names; anything else is libuv's pool. */
const THREAD_KINDS: Record<string, 'eventLoop' | 'workers' | 'v8'> = {
  MainThread: 'eventLoop',
  WorkerThread: 'workers',
  V8Worker: 'v8',
};

/**
 * CPU seconds of a process's threads by kind, from /proc/PID/task (Linux; a thread that ended is not
 * counted): the event loop (`MainThread`), worker threads (`WorkerThread`: the job threads, the CPU
 * engine's pool, the GPU worker), V8's own background threads (`V8Worker`: garbage collection and
 * compilation) and the rest (libuv's pool: zlib, crypto, files).
 */
export function threadCpuSeconds(pid: number): Record<'eventLoop' | 'workers' | 'v8' | 'other', number> {
  const byKind = { eventLoop: 0, workers: 0, v8: 0, other: 0 };
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byKind;
  }
  for (const task of tasks) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
      byKind[THREAD_KINDS[name] ?? 'other'] += statCpuSeconds(`/proc/${pid}/task/${task}/stat`);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byKind;
}

/** The database DATABASE_URL names (the one the service under test uses), or null. */
function benchDatabase(): string | null {
  try {
    return decodeURIComponent(new URL(process.env.DATABASE_URL ?? '').pathname.slice(1)) || null;
  } catch {
    return null;
  }
}

/**
 * Whether a PostgreSQL process works for the bench's database: its process title
 * (`postgres: 15/main: USER DATABASE HOST(PORT) STATE`) names that database, or it is one of the
 * server's own processes (checkpointer, WAL writer: no client host). Backends of other databases are
 * left out: on a shared machine they are other people's tests.
 */
function servesBenchDatabase(title: string, database: string | null): boolean {
  const client = /: (\S+) (\S+) (\S+\(\d+\)|\[local\])/.exec(title);
  return client === null || database === null || client[2] === database;
}

/** CPU seconds of the PostgreSQL server's processes on this machine that serve the bench's database. */
export function postgresCpuSeconds(): number {
  const database = benchDatabase();
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      if (!servesBenchDatabase(title, database)) continue;
    } catch {
      continue;
    }
    total += cpuSecondsOf(Number(entry));
  }
  return total;
}

/**
 * CPU seconds so far: the service's threads by kind (summed over its processes: API processes and
 * workers), PostgreSQL's processes, and this process (the client).
 */
export function cpuReading(servicePids: readonly number[], database: 'embedded' | 'server') {
  const client = process.cpuUsage();
  const threads = { eventLoop: 0, workers: 0, v8: 0, other: 0 };
  for (const pid of servicePids) {
    const own = threadCpuSeconds(pid);
    for (const kind of Object.keys(threads) as Array<keyof typeof threads>) threads[kind] += own[kind];
  }
  return {
    ...threads,
    postgres: database === 'server' ? postgresCpuSeconds() : 0,
    client: (client.user + client.system) / 1e6,
  };
}

export type CpuReading = ReturnType<typeof cpuReading>;

/** Milliseconds of CPU per job between two readings, by kind. */
export function cpuPerJob(from: CpuReading, to: CpuReading, jobs: number): CpuReading {
  return Object.fromEntries(
    Object.entries(to).map(([kind, seconds]) => [
      kind,
      ((seconds - from[kind as keyof CpuReading]) * 1000) / jobs,
    ]),
  ) as CpuReading;
}

/**
 * CPU milliseconds per job by thread kind as the bench's JSON names them (docs/decisions.md §6): the
 * event loop, the engine's threads (Node's worker threads: job threads, the CPU engine's pool, the GPU
 * worker), V8's background threads, libuv's pool, the PostgreSQL server's processes (null on PGlite,
 * which runs on the event loop), the bench's own client; `host` sums the service's and PostgreSQL's.
 */
export function cpuFields(ms: CpuReading, database: 'embedded' | 'server') {
  return {
    event_loop: round(ms.eventLoop, 3),
    engine_threads: round(ms.workers, 3),
    v8: round(ms.v8, 3),
    pool: round(ms.other, 3),
    postgres: database === 'server' ? round(ms.postgres, 3) : null,
    client: round(ms.client, 3),
    host: round(ms.eventLoop + ms.workers + ms.v8 + ms.other + ms.postgres, 3),
  };
}
