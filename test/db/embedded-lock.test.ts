// The lock of an embedded data directory (docs/decisions.md §8): refused while its owner runs, taken over
// when the owner is gone, including when its pid now belongs to an unrelated live process (issue 17: a
// stale lock naming such a pid stopped startup until it was deleted by hand).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { lockEmbeddedDatabase, processStartTime } from '../../src/db/embedded-lock.js';

const linux = existsSync('/proc/self/stat');
if (!linux) console.info('embedded lock: the pid-reuse cases need /proc (Linux); skipped');

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function dataDir(lock?: string): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'matchsim-lock-'));
  dirs.push(dir);
  const file = path.join(dir, 'pglite.lock');
  if (lock !== undefined) writeFileSync(file, lock);
  return { dir, file };
}

/** A live process that is not matchsim (`sleep`), or one that is a Node process. */
async function liveProcess(command: 'sleep' | 'node'): Promise<number> {
  const child =
    command === 'sleep'
      ? spawn('sleep', ['60'], { stdio: 'ignore' })
      : spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  children.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return child.pid!;
}

describe('the embedded database lock', () => {
  it('records its owner with its start time and is released', () => {
    const { dir, file } = dataDir();
    const release = lockEmbeddedDatabase(dir);
    const owner = JSON.parse(readFileSync(file, 'utf8'));
    expect(owner.pid).toBe(process.pid);
    if (linux) expect(owner.start).toBe(processStartTime(process.pid));
    release();
    expect(existsSync(file)).toBe(false);
  });

  it('takes over a lock whose owner is dead', async () => {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('exit', resolve));
    const { dir } = dataDir(JSON.stringify({ pid: child.pid, start: '1' }));
    expect(() => lockEmbeddedDatabase(dir)()).not.toThrow();
  });

  it.skipIf(!linux)('refuses while the process that wrote the lock runs', async () => {
    const pid = await liveProcess('node');
    const { dir } = dataDir(JSON.stringify({ pid, start: processStartTime(pid) }));
    expect(() => lockEmbeddedDatabase(dir)).toThrow(`in use by process ${pid}`);
  });

  it.skipIf(!linux)(
    'takes over a lock whose pid is alive but started after the lock was written',
    async () => {
      const pid = await liveProcess('node');
      const { dir, file } = dataDir(JSON.stringify({ pid, start: '1' }));
      const release = lockEmbeddedDatabase(dir);
      expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(process.pid);
      release();
    },
  );

  it.skipIf(!linux)(
    'takes over a lock of the earlier format naming a live process that is not matchsim',
    async () => {
      const pid = await liveProcess('sleep');
      const { dir } = dataDir(String(pid));
      expect(() => lockEmbeddedDatabase(dir)()).not.toThrow();
      // The same format naming a Node process is still respected: it may be a running service.
      const node = await liveProcess('node');
      const other = dataDir(String(node));
      expect(() => lockEmbeddedDatabase(other.dir)).toThrow(`in use by process ${node}`);
    },
  );
});
