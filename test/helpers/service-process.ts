// `matchsim serve` as an operator runs it, on the compiled CLI (test/helpers/built-cli.ts): a child
// process whose stdout (JSON log lines) and stderr (the demo's terminal lines) the test reads, signals
// and waits for.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll } from 'vitest';
import { BUILD_TIMEOUT_MS, builtCli, CLI_ENTRY } from './built-cli.js';

export interface ServiceProcess {
  child: ChildProcess;
  /** Every stdout line as received. */
  stdout: string[];
  stderr: string[];
  /** The API address, from the `matchsim listening` log line ('' for a worker). */
  baseUrl: string;
  /** Resolves with the first log line (parsed) whose message is `msg`. */
  logLine(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

function lines(stream: NodeJS.ReadableStream, into: string[], onLine: () => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    into.push(...parts);
    onLine();
  });
}

/**
 * The services this test file started and that still run: killed after its last test (its own afterAll
 * hooks, registered later, run first), so a test that fails before stopping its service leaves none
 * running behind it, holding its database. Vitest's forks end without an `exit` event to do it then.
 */
const running = new Set<ChildProcess>();
// Built before the file's first test, under a hook's time limit rather than a test's.
beforeAll(() => builtCli(), BUILD_TIMEOUT_MS);
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** `ready`: the log line that says the process is up (a worker has no listener: `worker running`). */
export async function startServiceProcess(
  env: Record<string, string>,
  args: string[] = [],
  ready = 'matchsim listening',
  readyTimeoutMs = 60_000,
): Promise<ServiceProcess> {
  const fullEnv: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    ...env,
  };
  delete fullEnv.BASE_URL; // set to '/' by vitest (Vite's BASE_URL), not by an operator
  if (!env.DATABASE_URL) delete fullEnv.DATABASE_URL;
  await builtCli();
  const child = spawn('node', [CLI_ENTRY, 'serve', ...args], {
    env: fullEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  lines(child.stdout!, stdout, notify);
  lines(child.stderr!, stderr, notify);
  running.add(child);
  const exited = once(child, 'exit').then(([code]) => {
    running.delete(child);
    return code as number | null;
  });
  const logLine = (msg: string, timeoutMs = 60_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        for (const line of stdout) {
          const parsed = parseLine(line);
          if (parsed?.msg === msg) {
            cleanup();
            resolve(parsed);
            return;
          }
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no log line "${msg}" within ${timeoutMs} ms; stderr: ${stderr.join('\n')}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      void exited.then(() => {
        check();
        cleanup();
        reject(new Error(`exited before "${msg}"; stderr: ${stderr.join('\n')}`));
      });
      check();
    });
  const up = await logLine(ready, readyTimeoutMs);
  const baseUrl = up.address === undefined ? '' : `http://${String(up.address)}`;
  return { child, stdout, stderr, baseUrl, logLine, exited };
}

export function parseLine(line: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(line) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
