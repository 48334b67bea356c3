// `npm start` as a new user runs it (README's quick start): one plain start-up line on stderr naming the
// API, /docs, /playground and the engine (never Dawn's "Couldn't load Vulkan" warning), JSON log lines
// only on stdout, and SIGTERM to the `npm start` process stops the service itself: the script execs node,
// so no server is left running as an orphan of the script's shell.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-npm-start-'));
let child: ChildProcess | undefined;
let serverPid: number | undefined;

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

describe('npm start', () => {
  it('prints one start-up line with the URLs and the engine, and stops on SIGTERM to npm', async () => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      MAX_EVENT_LOOP_DELAY_MS: '0',
    };
    delete env.DATABASE_URL; // the quick start's embedded default
    delete env.BASE_URL; // set to '/' by vitest (Vite's BASE_URL), not by a user
    const started = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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

    const health = await fetch(`${baseUrl}/healthz`);
    expect(health.status).toBe(200);

    // stdout: npm's own "> matchsim@… start" banner, then JSON log lines only.
    const logLines = stdout.split('\n').filter((text) => text.trim() !== '' && !text.startsWith('> '));
    const entries = logLines.map((text) => JSON.parse(text) as { pid: number });
    serverPid = entries[0]?.pid;
    expect(serverPid).toBeGreaterThan(0);

    started.kill('SIGTERM');
    expect(await exited).toBe(0);
    await until(() => (alive(serverPid!) ? undefined : true));
  }, 240_000);
});
