// One process owns a PGlite data directory at a time (PGlite is in-process). A lock file names the owner
// by its pid and its start time, so a second opener gets a clear message instead of a corrupted
// database, and a lock left behind is taken over even when its pid now belongs to another process: a
// pid is reused (after a reboot, in a restarted container), a pid with its start time is not.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/** What the lock file records of its owner. */
interface LockOwner {
  pid: number;
  /** Start time of the process in clock ticks since boot (/proc/<pid>/stat); null where unknown. */
  start: string | null;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The start time of a process (field 22 of /proc/<pid>/stat), or null off Linux or when gone. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** A process that could be a matchsim service: a Node process, when its command line can be read. */
function mayBeMatchsim(pid: number): boolean {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\u0000', ' ');
    return /node|matchsim|tsx|vitest/.test(command);
  } catch {
    // No /proc (not Linux): assume the owner is alive and ours, as the pid says.
    return true;
  }
}

function readOwner(file: string): LockOwner | null {
  const text = readFileSync(file, 'utf8').trim();
  if (/^\d+$/.test(text)) return { pid: Number(text), start: null }; // a lock of an earlier version
  try {
    const parsed = JSON.parse(text) as { pid?: unknown; start?: unknown };
    if (!Number.isInteger(parsed.pid)) return null;
    return { pid: parsed.pid as number, start: typeof parsed.start === 'string' ? parsed.start : null };
  } catch {
    return null;
  }
}

/** True when the process the lock names is still the one that wrote it. */
function ownerRunning(owner: LockOwner): boolean {
  if (owner.pid === process.pid || !processAlive(owner.pid)) return false;
  const start = processStartTime(owner.pid);
  if (owner.start !== null && start !== null) return start === owner.start;
  return mayBeMatchsim(owner.pid);
}

/** The embedded database is another live process's (a running service's, most often). */
export class EmbeddedDatabaseInUse extends Error {
  override name = 'EmbeddedDatabaseInUse';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `the embedded database in ${dataDir} is in use by process ${pid}; stop it, or use the admin API ` +
        '(/admin/v1) of the running service, or point DATABASE_URL at a PostgreSQL server',
    );
  }
}

/** Take the lock of DATA_DIR's embedded database; returns a release function. */
export function lockEmbeddedDatabase(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = path.resolve(dataDir, 'pglite.lock');
  const record = JSON.stringify({ pid: process.pid, start: processStartTime(process.pid) });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, record);
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = readOwner(file);
      if (owner && ownerRunning(owner)) throw new EmbeddedDatabaseInUse(dataDir, owner.pid);
      rmSync(file, { force: true }); // left behind by a process that died, or unreadable
    }
  }
  throw new Error(`could not lock ${file}`);
}
