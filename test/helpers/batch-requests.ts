// Requests and reads the batch tests share (test/http/batches.test.ts, test/http/batch-stream.test.ts).
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

export function post(t: TestContext, url: string, auth: Json, payload?: Json, headers: Json = {}) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { ...auth, ...headers },
    ...(payload ? { payload } : {}),
  });
}

export function get(t: TestContext, url: string, auth: Json) {
  return t.app.inject({ method: 'GET', url, headers: auth });
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
