// The server processes benchmarks measure (bench/http-server.ts): each in its own process, so that
// the server and the load generator each have a core. bench/run.ts ends them on exit.
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Every server process a bench forks. */
export const benchChildren = new Set<ChildProcess>();

export interface ServerInfo {
  port: number;
  /** `service` only: a live key of the benchmark organisation. */
  secret: string;
  /** `service` only: one live key per benchmark organisation (BENCH_ORGS), the first being `secret`. */
  secrets: string[];
  database: string;
  /** Fixtures on sale, when BENCH_FIXTURES asked for them. */
  fixtureIds: number[];
}

/**
 * `bare`: a plain Fastify JSON route; `select`: a bare route running the balance's one-row SELECT (the
 * credits reference); `service`: the real service.
 */
export async function startServer(
  mode: 'bare' | 'select' | 'service',
  env: Record<string, string | undefined> = {},
) {
  const script = path.join(here, `http-server${path.extname(fileURLToPath(import.meta.url))}`);
  const child = fork(script, [mode], {
    execArgv: script.endsWith('.ts') ? ['--import', 'tsx'] : [],
    // A variable given as undefined is left out (DATABASE_URL: undefined runs the service on PGlite).
    env: Object.fromEntries(
      Object.entries({ ...process.env, ...env }).filter(([, value]) => value !== undefined),
    ),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  benchChildren.add(child);
  const info = await new Promise<ServerInfo>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ServerInfo));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { info, pid: child.pid ?? 0, stop: () => child.kill('SIGTERM') };
}

/** A TCP port free on 127.0.0.1 a moment ago (for a child's listener of its own). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}
