// Requests per second and p99 latency through the HTTP API (autocannon on loopback, bounded in time),
// each next to a bare Fastify JSON route measured in the same run; GET /v1/credits next to a bare route
// that runs the same one-row SELECT through postgres.js (the database's own cost of the read). The server runs in its own process
// so that it and the load generator each have a core.
import autocannon from 'autocannon';
import type { BenchRow } from './report.js';
import { startServer } from './servers.js';

const DURATION_SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const CONNECTIONS = 32;

async function load(url: string, headers: Record<string, string>) {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_SECONDS, headers });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99 };
}

export async function benchHttp(): Promise<BenchRow[]> {
  const bareServer = await startServer('bare');
  const bareResult = await load(`http://127.0.0.1:${bareServer.info.port}/v1/credits`, {});
  bareServer.stop();
  const selectServer = await startServer('select');
  const selectResult = await load(`http://127.0.0.1:${selectServer.info.port}/v1/credits`, {});
  selectServer.stop();
  // 1,000 fixtures on sale over four weeks (bench/http-server.ts benchFeed): the default 14-day window then
  // holds more than 200, so the list's largest page is a full one.
  const service = await startServer('service', { BENCH_FIXTURES: '1000' });
  const base = `http://127.0.0.1:${service.info.port}`;
  const headers = { authorization: `Bearer ${service.info.secret}` };
  const credits = await load(`${base}/v1/credits`, headers);
  // The fixture list at its largest page, and one fixture's squads.
  const list = (await (await fetch(`${base}/v1/fixtures?limit=200`, { headers })).json()) as {
    data: Array<{ fixture_id: number }>;
  };
  const fixtures = await load(`${base}/v1/fixtures?limit=200`, headers);
  const squads = await load(`${base}/v1/fixtures/${list.data[0]!.fixture_id}/squads`, headers);
  const twoApis = service.info.database === 'server' ? await secondApiRows(base, headers, credits.rps) : [];
  service.stop();
  const note = `database: ${service.info.database}; ${CONNECTIONS} connections, ${DURATION_SECONDS} s`;
  const bare = { name: 'bare Fastify JSON route', value: bareResult.rps };
  const bareP99 = { name: 'bare route p99', value: bareResult.p99 };
  const row = (
    name: string,
    value: number,
    unit: string,
    reference: typeof bare,
    extra?: string,
  ): BenchRow => ({
    group: 'HTTP',
    name,
    value,
    unit,
    reference,
    note: extra,
  });
  const select = { name: 'bare route running the same one-row SELECT', value: selectResult.rps };
  return [
    row('GET /v1/credits (authenticated) requests/s', credits.rps, 'req/s', select, note),
    row('GET /v1/credits p99 latency', credits.p99, 'ms', {
      name: 'one-row SELECT route p99',
      value: selectResult.p99,
    }),
    row('bare route running the one-row SELECT requests/s', selectResult.rps, 'req/s', bare),
    row(`GET /v1/fixtures?limit=200 (${list.data.length} items) requests/s`, fixtures.rps, 'req/s', bare),
    row('GET /v1/fixtures?limit=200 p99 latency', fixtures.p99, 'ms', bareP99),
    row('GET /v1/fixtures/{id}/squads requests/s', squads.rps, 'req/s', bare),
    row('GET /v1/fixtures/{id}/squads p99 latency', squads.p99, 'ms', bareP99),
    ...twoApis,
  ];
}

/**
 * GET /v1/credits through two API processes on the same PostgreSQL server (the second started with
 * BENCH_ROLE=api), half the connections each, next to the one process measured before (a server only:
 * an embedded database belongs to one process).
 */
async function secondApiRows(
  base: string,
  headers: Record<string, string>,
  oneProcess: number,
): Promise<BenchRow[]> {
  const second = await startServer('service', { BENCH_ROLE: 'api' });
  const secondHeaders = { authorization: `Bearer ${second.info.secret}` };
  const half = (url: string, h: Record<string, string>) =>
    autocannon({ url, connections: CONNECTIONS / 2, duration: DURATION_SECONDS, headers: h });
  const [a, b] = await Promise.all([
    half(`${base}/v1/credits`, headers),
    half(`http://127.0.0.1:${second.info.port}/v1/credits`, secondHeaders),
  ]);
  second.stop();
  for (const result of [a, b]) {
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`two APIs: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return [
    {
      group: 'HTTP',
      name: 'GET /v1/credits through two API processes requests/s',
      value: a.requests.average + b.requests.average,
      unit: 'req/s',
      reference: { name: 'one API process', value: oneProcess },
      note: `${CONNECTIONS / 2} connections each`,
    },
  ];
}
