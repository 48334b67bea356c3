// Requests per second and p99 latency through the HTTP API (autocannon on loopback, bounded in time),
// each next to a bare Fastify JSON route measured in the same run. The server runs in its own process
// so that it and the load generator each have a core.
import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { BenchRow } from './report.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const DURATION_SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const CONNECTIONS = 32;

interface ServerInfo {
  port: number;
  secret?: string;
  database?: string;
}

async function startServer(mode: 'bare' | 'service') {
  const script = path.join(here, `http-server${path.extname(fileURLToPath(import.meta.url))}`);
  const child = fork(script, [mode], {
    execArgv: script.endsWith('.ts') ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const info = await new Promise<ServerInfo>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ServerInfo));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { info, stop: () => child.kill('SIGTERM') };
}

async function load(url: string, headers: Record<string, string>) {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_SECONDS, headers });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99 };
}

export async function benchHttp(): Promise<BenchRow[]> {
  const bare = await startServer('bare');
  const bareResult = await load(`http://127.0.0.1:${bare.info.port}/v1/credits`, {});
  bare.stop();
  const service = await startServer('service');
  const headers = { authorization: `Bearer ${service.info.secret}` };
  const credits = await load(`http://127.0.0.1:${service.info.port}/v1/credits`, headers);
  service.stop();
  const note = `database: ${service.info.database}; ${CONNECTIONS} connections, ${DURATION_SECONDS} s`;
  return [
    {
      group: 'HTTP',
      name: 'GET /v1/credits (authenticated) requests/s',
      value: credits.rps,
      unit: 'req/s',
      reference: { name: 'bare Fastify JSON route', value: bareResult.rps },
      note,
    },
    {
      group: 'HTTP',
      name: 'GET /v1/credits p99 latency',
      value: credits.p99,
      unit: 'ms',
      reference: { name: 'bare route p99', value: bareResult.p99 },
    },
  ];
}
