// SIGTERM after stdout's reader is gone (issue 33, item 10): the service must exit whatever its log
// destination does. pino flushes stdout synchronously at exit; sonic-boom 4's flushSync retried EPIPE
// for ever on the main thread (Atomics.wait), so the process never exited and no signal could end it.
// src/logger.ts takes sonic-boom 5 (package.json overrides), drops the flush to a reader that is gone,
// and arms a deadline in a thread of its own that nothing on the main thread can block.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startServiceProcess } from '../helpers/service-process.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-log-pipe-'));
let serverDb: TestDatabase | undefined;
afterAll(async () => {
  await serverDb?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs log-exit-child.ts with stdout on a pipe whose reader is closed at once; its exit code and signal. */
async function childWithoutReader(mode: 'exit' | 'block') {
  const child = spawn(
    'node',
    ['--import', 'tsx', path.join(import.meta.dirname, 'log-exit-child.ts'), mode],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  return { code, signal, stderr };
}

describe('exit with a log nobody reads', () => {
  it('ends when the logger flushes a queue to a closed pipe at exit', async () => {
    expect(await childWithoutReader('exit')).toEqual({ code: 0, signal: null, stderr: '' });
  });

  it('ends at the exit deadline even when the main thread is blocked', async () => {
    const { signal } = await childWithoutReader('block');
    expect(signal).toBe('SIGKILL');
  });

  it("ends `matchsim serve` on SIGTERM after the log pipe's reader has gone", async () => {
    if (process.env.DATABASE_URL) serverDb = await createTestDatabase({ max: 2 });
    const service = await startServiceProcess(
      {
        DATA_DIR: dataDir,
        LOG_LEVEL: 'debug',
        MATCHSIM_DEMO: 'off',
        ...(serverDb?.url ? { DATABASE_URL: serverDb.url } : {}),
      },
      ['--role', 'api'],
    );
    service.child.stdout!.destroy();
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });

  // Issue 51: the reader is alive and has stopped reading, the pipe is full, and the log's last lines
  // can never be written. The shutdown ends through its own path (exit code 0), not through the
  // "took too long" timer (1) nor the exit deadline's SIGKILL (null) some 20 s later.
  it("ends `matchsim serve` on SIGTERM while stdout's reader has stopped reading and the pipe is full", async () => {
    const service = await startServiceProcess(
      {
        DATA_DIR: mkdtempSync(path.join(tmpdir(), 'matchsim-log-full-')),
        LOG_LEVEL: 'info',
        MATCHSIM_DEMO: 'off',
        SHUTDOWN_TIMEOUT_SECONDS: '1',
        ...(serverDb?.url ? { DATABASE_URL: serverDb.url } : {}),
      },
      ['--role', 'api'],
    );
    service.child.stdout!.pause();
    // Two log lines a request (its refusal and the request line), some 0.8 MB in all: far more than the
    // pipe (a socket pair: ~200 KB) and this side's read buffer hold.
    const url = `${service.baseUrl}/v1/no-such-route`;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = 0; i < 200; i++) await (await fetch(url)).arrayBuffer();
      }),
    );
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  }, 120_000);
});
