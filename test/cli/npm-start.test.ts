// `npm start` as a new user runs it (README's quick start): one plain start-up line on stderr naming the
// API, /docs, /playground and the engine (never Dawn's "Couldn't load Vulkan" warning), JSON log lines
// only on stdout (npm's own banner kept off it by the project's .npmrc), and SIGTERM to the `npm start`
// process stops the service itself: the script execs node, so no server is left running as an orphan of
// the script's shell. Ctrl-C in a terminal (SIGINT to the whole process group, which npm forwards to the
// service too) drains and exits 0, leaving no lock on the embedded database.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, builtCli } from '../helpers/built-cli.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-npm-start-'));
let child: ChildProcess | undefined;
let serverPid: number | undefined;

// dist/ built first, taking turns with the other test processes that build it (test/helpers/built-cli.ts):
// `npm start`'s own build then finds it current and writes nothing while one of them might read it.
beforeAll(() => builtCli(), BUILD_TIMEOUT_MS);

afterAll(() => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  if (serverPid !== undefined && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until<T>(probe: () => T | undefined): Promise<T> {
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    await sleep(50);
  }
}

interface Started {
  baseUrl: string;
  serverPid: number;
  exited: Promise<number | null>;
  stdout: () => string;
  stderr: () => string;
}

/** `npm start` on its own embedded database, in a process group of its own as a terminal would run it. */
async function npmStart(): Promise<Started> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    MAX_EVENT_LOOP_DELAY_MS: '0',
  };
  delete env.DATABASE_URL; // the quick start's embedded default
  delete env.BASE_URL; // set to '/' by vitest (Vite's BASE_URL), not by a user
  // npm reads a loglevel from the environment too; a user's shell has none.
  for (const name of Object.keys(env)) if (/^npm_config_loglevel$/i.test(name)) delete env[name];
  const started = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child = started;
  let stdout = '';
  let stderr = '';
  started.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  started.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => started.on('exit', (code) => resolve(code)));

  const line = await until(() => /^matchsim is serving: .*$/m.exec(stderr)?.[0]);
  const baseUrl = /API (http:\/\/\S+)\/v1,/.exec(line)?.[1];
  expect(baseUrl, line).toMatch(/^http:\/\/localhost:\d+$/);
  expect(line).toContain(`docs ${baseUrl}/docs,`);
  expect(line).toContain(`playground ${baseUrl}/playground;`);
  expect(line).toMatch(/; (engine: GPU, .+|no GPU found: running on the CPU engine \(.+\))$/);
  expect(stderr).not.toContain("Couldn't load Vulkan");
  const pid = await until(() => logEntries(stdout)[0]?.pid);
  serverPid = pid;
  return { baseUrl: baseUrl!, serverPid: pid, exited, stdout: () => stdout, stderr: () => stderr };
}

/** stdout as JSON log lines: every line that is not empty must parse. */
function logEntries(stdout: string): Array<{ pid: number; msg?: string; level?: number }> {
  return stdout
    .split('\n')
    .filter((text) => text.trim() !== '')
    .map((text) => JSON.parse(text));
}

describe('npm start', () => {
  it('prints one start-up line with the URLs and the engine, and stops on SIGTERM to npm', async () => {
    const started = await npmStart();
    const health = await fetch(`${started.baseUrl}/healthz`);
    expect(health.status).toBe(200);

    child!.kill('SIGTERM');
    expect(await started.exited).toBe(0);
    await until(() => (alive(started.serverPid) ? undefined : true));
    // stdout: JSON log lines only, npm's banner included in none.
    expect(logEntries(started.stdout()).length).toBeGreaterThan(1);
  }, 240_000);

  it('drains and exits 0 on Ctrl-C (SIGINT to the process group), leaving no lock behind', async () => {
    const started = await npmStart();
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(true);
    process.kill(-child!.pid!, 'SIGINT'); // what a terminal does: the group, so npm and node both get it
    expect(await started.exited).toBe(0);
    await until(() => (alive(started.serverPid) ? undefined : true));
    const messages = logEntries(started.stdout()).map((entry) => entry.msg);
    expect(messages).toContain('signal received');
    expect(messages).not.toContain('second signal: exiting without waiting');
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
  }, 240_000);
});
