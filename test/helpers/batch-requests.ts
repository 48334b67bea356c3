// Requests and reads the batch tests share (test/http/batches.test.ts, test/http/batch-stream.test.ts).
import { expect } from 'vitest';
import { batchSchema, batchSummarySchema } from '../../src/http/schemas/simulations.js';
import { NOW, withManyFixtures } from '../fixtures/small-feed.js';
import { createTestContext, type TestContext } from './app.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
export type Json = Record<string, any>;

// The clock is pinned, so every request falls in one rate window: polling needs room.
export const ROOMY = { simulations_rpm: 100_000 };

export async function setup(options: { worker: boolean; fixtures: number }) {
  const t = await createTestContext({ worker: options.worker });
  t.setNow(NOW);
  await t.loadFeed(withManyFixtures(options.fixtures), { clock: () => NOW });
  return t;
}

/**
 * A batch object on the wire is written by a serializer compiled from its schema (src/http/serialize.ts):
 * every one these tests read must be the bytes zod writes for it, or an idempotent replay (zod) would
 * differ from the first answer.
 */
function checkedBatchBody<R extends { body: string; headers: Record<string, unknown> }>(response: R): R {
  if (String(response.headers['content-type'] ?? '').startsWith('application/json')) {
    const body = JSON.parse(response.body) as Json;
    if (body.object === 'simulation_batch') {
      // A batch's summary (GET .../summary) is the batch without its items.
      const schema = 'items' in body ? batchSchema : batchSummarySchema;
      expect(response.body).toBe(JSON.stringify(schema.parse(body)));
    }
  }
  return response;
}

export async function post(t: TestContext, url: string, auth: Json, payload?: Json, headers: Json = {}) {
  return checkedBatchBody(
    await t.app.inject({
      method: 'POST',
      url,
      headers: { ...auth, ...headers },
      ...(payload ? { payload } : {}),
    }),
  );
}

export async function get(t: TestContext, url: string, auth: Json) {
  return checkedBatchBody(await t.app.inject({ method: 'GET', url, headers: auth }));
}

export function lines(body: string): Json[] {
  return body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

export async function untilBatch(t: TestContext, id: string, auth: Json, done: (batch: Json) => boolean) {
  for (let i = 0; i < 4800; i++) {
    const batch = (await get(t, `/v1/simulations/batch/${id}`, auth)).json();
    if (done(batch)) return batch;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`batch ${id} did not get there`);
}

/** Holds of an organisation by status, and its charge rows. */
export async function money(t: TestContext, orgId: string) {
  const holds = await t.db.sql<{ id: string; status: string }[]>`
    SELECT id, status FROM credit_holds WHERE org_id = ${orgId}`;
  const charges = await t.db.sql<{ holdId: string; amount: number }[]>`
    SELECT hold_id, amount FROM credit_ledger WHERE org_id = ${orgId} AND kind = 'charge'`;
  return { holds: new Map(holds.map((h) => [h.id, h.status])), charges };
}
