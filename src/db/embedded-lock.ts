// One process owns a PGlite data directory at a time (PGlite is in-process). A lock file with the owner's pid
// turns a second opener into a clear message instead of a corrupted database.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Take the lock of DATA_DIR's embedded database; returns a release function. */
export function lockEmbeddedDatabase(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = path.resolve(dataDir, 'pglite.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(file, 'utf8'));
      if (Number.isInteger(owner) && owner !== process.pid && processAlive(owner)) {
        throw new Error(
          `the embedded database in ${dataDir} is in use by process ${owner}; stop it, or use the admin API ` +
            '(/admin/v1) of the running service, or point DATABASE_URL at a PostgreSQL server',
        );
      }
      rmSync(file, { force: true }); // left behind by a process that died
    }
  }
  throw new Error(`could not lock ${file}`);
}
