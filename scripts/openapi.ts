// The OpenAPI documents and the typed client's inputs, generated from the routes (docs/ARCHITECTURE.md,
// "OpenAPI and the typed client"):
//   tsx scripts/openapi.ts examples   runs the demo service (embedded database, CPU engine) and stores one
//                                     real response per named response schema in
//                                     src/http/openapi/examples.json;
//   tsx scripts/openapi.ts write      writes docs/openapi/openapi.json and docs/openapi/admin-openapi.json;
//   tsx scripts/openapi.ts client     writes the clients' generated code: the TypeScript client's types,
//                                     clients/typescript/src/schema.ts, and the Python client's models and
//                                     operations, clients/python/src/matchsim/models.py and _resources.py.
// `npm run client:generate` runs the three in this order.
// test/http/openapi-documents.test.ts fails when the stored documents or the TypeScript client's types are
// stale, test/clients/python-package.test.ts when the Python client's modules are.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PYTHON_MODELS, PYTHON_RESOURCES, pythonSources } from '../clients/python/generate.js';
import { schemaSource } from '../clients/typescript/generate.js';
import { loadConfig } from '../src/config.js';
import { startService } from '../src/server.js';

/** The address the stored documents name; test/http/openapi-documents.test.ts compares with it. */
export const DOCUMENTED_BASE_URL = 'http://127.0.0.1:8080';
const ADMIN_TOKEN = 'openapi-generation-admin-token';
const root = path.resolve(import.meta.dirname, '..');

async function withService<T>(demo: boolean, run: (service: Service) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-openapi-'));
  const lines: string[] = [];
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    BASE_URL: DOCUMENTED_BASE_URL,
    ADMIN_TOKEN,
    ENGINE: 'cpu',
    CPU_THREADS: '1',
    LOG_LEVEL: 'silent',
    MATCHSIM_DEMO: demo ? 'on' : 'off',
  });
  const running = await startService(config, demo ? 'all' : 'api', { terminal: (line) => lines.push(line) });
  const key = (mode: 'live' | 'test') =>
    lines
      .find((line) => line.includes(`${mode} key:`))
      ?.split(': ')[1]
      ?.trim() ?? '';
  try {
    return await run({ app: running.app!, liveKey: key('live'), testKey: key('test') });
  } finally {
    await running.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Service {
  app: NonNullable<Awaited<ReturnType<typeof startService>>['app']>;
  liveKey: string;
  testKey: string;
}

type Examples = Record<string, unknown>;

/** The component name of each response's schema, by its `object` field. */
const COMPONENT_BY_OBJECT: Record<string, string> = {
  credit_balance: 'CreditBalance',
  list: 'FixtureList',
  fixture_squads: 'Squads',
  expected_lineup: 'ExpectedLineup',
  simulation_quote: 'Quote',
  simulation: 'Simulation',
  simulation_job: 'SimulationJob',
  simulation_batch: 'Batch',
  projection_quote: 'ProjectionQuote',
  projection_job: 'ProjectionJob',
  season_projection: 'SeasonProjection',
};

// biome-ignore lint/suspicious/noExplicitAny: response bodies read field by field below.
type Body = any;

async function captureExamples(service: Service): Promise<Examples> {
  const examples: Examples = {};
  const call = async (method: 'GET' | 'POST', url: string, payload?: object): Promise<Body> => {
    const response = await service.app.inject({
      method,
      url: url.replace(DOCUMENTED_BASE_URL, ''),
      headers: { authorization: `Bearer ${service.liveKey}` },
      ...(payload === undefined ? {} : { payload }),
    });
    if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.body}`);
    const body = response.json();
    const component = COMPONENT_BY_OBJECT[body.object];
    if (component && examples[component] === undefined) examples[component] = body;
    return body;
  };
  await call('GET', '/v1/credits');
  const list = await call('GET', '/v1/fixtures?limit=2&status=fresh');
  const fixtureId = list.data[0].fixture_id as number;
  await call('GET', `/v1/fixtures/${fixtureId}/squads`);
  await call('GET', `/v1/fixtures/${fixtureId}/expected-lineup`);
  await call('POST', '/v1/simulations/quote', { fixture_id: fixtureId, draws: 1000 });
  await call('POST', '/v1/simulations', { fixture_id: fixtureId, draws: 1000, wait_seconds: 0 });
  const ran = await call('POST', '/v1/simulations', { fixture_id: fixtureId, draws: 2000, wait_seconds: 25 });
  if (ran.object !== 'simulation') throw new Error('the run did not deliver within 25 s');
  const fixtures = list.data.map((fixture: Body, index: number) => ({
    fixture_id: fixture.fixture_id,
    custom_id: `item-${index + 1}`,
  }));
  // One selector that matches nothing, so the batch shows a rejected item beside the runnable ones.
  const batch = await call('POST', '/v1/simulations/batch', {
    fixtures: [...fixtures, { fixture_id: 999_999, custom_id: 'typo' }],
    draws: 1000,
    metadata: { campaign: 'weekend-preview' },
  });
  await call('GET', `/v1/simulations/batch/${batch.batch_id}`);
  const lines = await finishedResultLines(service, batch.batch_id);
  // The rejected line: a delivered one carries a whole simulation, already the Simulation example.
  examples.SimulationBatchResult = lines.find((line: Body) => line.status === 'rejected') ?? lines[0];
  examples.SimulationJobList = await call('GET', '/v1/simulations/jobs?limit=1');
  examples.BatchList = await call('GET', '/v1/simulations/batches?limit=1');
  const competition = { competition_id: list.data[0].competition.competition_id as number, seasons: 1000 };
  await call('POST', '/v1/projections/quote', competition);
  await call('POST', '/v1/projections', { ...competition, wait_seconds: 0 });
  const projected = await call('POST', '/v1/projections', { ...competition, wait_seconds: 25 });
  if (projected.object !== 'season_projection') throw new Error('the projection did not deliver within 25 s');
  // The events the runs above wrote (src/webhooks/outbox.ts), the newest one as the Event example.
  const events = await call('GET', '/v1/events?limit=1');
  examples.Event = events.data[0];
  examples.EventList = events;
  return examples;
}

/** The batch's NDJSON results stream, read again until no item is queued or running (30 s at most). */
async function finishedResultLines(service: Service, batchId: string): Promise<Body[]> {
  for (let attempt = 0; attempt < 120; attempt++) {
    const response = await service.app.inject({
      method: 'GET',
      url: `/v1/simulations/batch/${batchId}/results`,
      headers: { authorization: `Bearer ${service.liveKey}` },
    });
    if (response.statusCode !== 200) throw new Error(`results stream: ${response.body}`);
    const lines = response.body
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
    if (lines.every((line: Body) => line.status !== 'queued' && line.status !== 'running')) return lines;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`batch ${batchId} did not finish within 30 s`);
}

/** Indented JSON with arrays of numbers and strings on one line: the documents' score grids stay short. */
function toJson(value: unknown, indent = ''): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.every((item) => item === null || typeof item !== 'object')) return JSON.stringify(value);
    return `[\n${value.map((item) => inner + toJson(item, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    const lines = entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${toJson(item, inner)}`);
    return `{\n${lines.join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value);
}

const write = (file: string, value: unknown) => writeFileSync(path.join(root, file), `${toJson(value)}\n`);

async function main(command: string | undefined): Promise<void> {
  if (command === 'examples') {
    write('src/http/openapi/examples.json', await withService(true, captureExamples));
  } else if (command === 'write') {
    await withService(false, async ({ app }) => {
      write('docs/openapi/openapi.json', (await app.inject('/openapi.json')).json());
      write('docs/openapi/admin-openapi.json', (await app.inject('/admin/openapi.json')).json());
    });
  } else if (command === 'client') {
    const document = JSON.parse(readFileSync(path.join(root, 'docs/openapi/openapi.json'), 'utf8'));
    writeFileSync(path.join(root, 'clients/typescript/src/schema.ts'), await schemaSource(document));
    const python = pythonSources(document);
    writeFileSync(path.join(root, PYTHON_MODELS), python.models);
    writeFileSync(path.join(root, PYTHON_RESOURCES), python.resources);
  } else {
    throw new Error('usage: tsx scripts/openapi.ts examples|write|client');
  }
}

await main(process.argv[2]);
