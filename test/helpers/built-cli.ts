// The CLI as `npm start` and the package's `bin` run it: compiled by `npm run build` into dist/, which
// the test processes then start with plain `node`. A start on the TypeScript sources through tsx costs
// about a second more of CPU each (its loader, and each source file transformed), and the CLI's tests
// start a few hundred. Built once per test file that needs it, the first time it does: on a checkout
// whose dist/ is current (CI builds it for the GPU bundle first, .ci/run) that is a check of about a
// second. Test files run in several processes at once, and two builds writing dist/ together could hand
// a third process a half-written file, so each build holds a lock file, the builds taking turns.
import { execFile } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const root = path.resolve(import.meta.dirname, '../..');

/** The compiled CLI's entry, relative to the repository root (the tests' working folder). */
export const CLI_ENTRY = 'dist/src/cli/main.js';

const LOCK = path.join(root, 'dist/.build-lock');

/** A build from nothing takes about a minute on a loaded 2-core machine; a current dist/, a second. */
export const BUILD_TIMEOUT_MS = 300_000;

let built: Promise<void> | undefined;

/** Resolves once dist/ holds the CLI compiled from the sources as they are now. */
export function builtCli(): Promise<void> {
  built ??= buildTakingTurns();
  return built;
}

async function buildTakingTurns(): Promise<void> {
  await takeLock();
  try {
    await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: root });
  } finally {
    rmSync(LOCK, { force: true });
  }
}

/** The lock file holds its holder's process id; a holder that is gone (killed mid-build) leaves it stale. */
async function takeLock(): Promise<void> {
  mkdirSync(path.dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      const fd = openSync(LOCK, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!holderAlive()) rmSync(LOCK, { force: true });
    else await sleep(200);
  }
}

function holderAlive(): boolean {
  let pid: number;
  let age: number;
  try {
    pid = Number(readFileSync(LOCK, 'utf8'));
    age = Date.now() - statSync(LOCK).mtimeMs;
  } catch {
    return false;
  }
  // A lock file created and not yet written holds no number; its holder wrote it at once or died.
  if (!Number.isInteger(pid) || pid <= 0) return age < 10_000;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
