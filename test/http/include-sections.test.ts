// `include` (docs/api.md §2.3, "Choosing sections"): the result path, GET /v1/simulations/{id} and a
// batch's NDJSON results send only the document sections asked for, in the document's order, each the
// same bytes as in the whole document; an unknown section is refused; the default is the whole document.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedDocument } from '../../src/engine/stored-document.js';
import {
  DOCUMENT_SECTIONS,
  includedSections,
  selectSections,
} from '../../src/http/views/document-sections.js';
import { MANY_FIXTURES_FROM, NOW, withManyFixtures } from '../fixtures/small-feed.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ worker: true });
  t.setNow(NOW);
  await t.loadFeed(withManyFixtures(3), { clock: () => NOW });
});
afterAll(async () => t.close());

const get = (url: string, auth: Json) => t.app.inject({ method: 'GET', url, headers: auth });
const lines = (body: string) =>
  body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Json);

/** The document's sections as sent, and each section's JSON text. */
function sections(document: Json) {
  return { names: Object.keys(document), text: (name: string) => JSON.stringify(document[name]) };
}

async function untilDelivered(url: string, auth: Json): Promise<Json> {
  for (;;) {
    const response = await get(url, auth);
    if (response.statusCode === 200) return response.json();
    expect(response.statusCode, response.body.slice(0, 300)).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('include', () => {
  it('keeps schema and the sections asked for, in document order, with their bytes unchanged', async () => {
    const { auth } = await t.newOrg({ limits: { simulations_rpm: 100_000 } });
    const submitted = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations',
      headers: auth,
      payload: { fixture_id: MANY_FIXTURES_FROM, draws: 1000, wait_seconds: 0 },
    });
    const job = submitted.json();
    // The result path: asked out of order, sent in the document's order.
    const delivered = await untilDelivered(`${job.result_url}&include=markets,result`, auth);
    expect(Object.keys(delivered.simulation)).toEqual(['schema', 'result', 'markets']);
    expect(delivered.credits_charged).toBe(1);

    const whole = (await get(`/v1/simulations/${delivered.id}`, auth)).json();
    // calibration and value come only with a market or offered odds (test/http/market-fit.test.ts),
    // state only with an in-play state (test/http/in-play.test.ts).
    const always = DOCUMENT_SECTIONS.filter(
      (name) => name !== 'calibration' && name !== 'value' && name !== 'state',
    );
    expect(Object.keys(whole.simulation)).toEqual(['schema', ...always]);
    const all = sections(whole.simulation);
    for (const name of ['result', 'markets'])
      expect(sections(delivered.simulation).text(name)).toBe(all.text(name));

    const some = await get(`/v1/simulations/${delivered.id}?include=goals,result,markets`, auth);
    expect(some.statusCode).toBe(200);
    expect(Object.keys(some.json().simulation)).toEqual(['schema', 'result', 'goals', 'markets']);
    expect(some.json()).toMatchObject({ id: delivered.id, credits_charged: 0 });
    const every = await get(
      `/v1/simulations/${delivered.id}?include=${[...DOCUMENT_SECTIONS].reverse().join(',')}`,
      auth,
    );
    expect(every.body).toBe((await get(`/v1/simulations/${delivered.id}`, auth)).body);

    for (const bad of ['results', 'result,,goals', '', 'schema']) {
      const refused = await get(`/v1/simulations/${delivered.id}?include=${bad}`, auth);
      expect(refused.statusCode, bad).toBe(400);
      expect(refused.json().error).toMatchObject({
        code: 'parameter_invalid',
        param: 'include',
        message: `\`include\`: a comma-separated list of the document's sections: ${DOCUMENT_SECTIONS.join(', ')}`,
      });
    }
  });

  it("applies to a batch's NDJSON results, line by line", async () => {
    const { auth } = await t.newOrg({ limits: { simulations_rpm: 100_000 } });
    const submitted = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations/batch',
      headers: auth,
      payload: {
        fixtures: [{ fixture_id: MANY_FIXTURES_FROM + 1 }, { fixture_id: MANY_FIXTURES_FROM + 2 }],
        draws: 500,
      },
    });
    const batch = submitted.json();
    let read: Json[] = [];
    for (;;) {
      read = lines((await get(`${batch.results_url}?include=result,markets`, auth)).body);
      if (read.every((line) => line.status === 'delivered')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const whole = lines((await get(batch.results_url, auth)).body);
    read.forEach((line, i) => {
      expect(Object.keys(line.simulation.simulation)).toEqual(['schema', 'result', 'markets']);
      expect(JSON.stringify(line.simulation.simulation.markets)).toBe(
        JSON.stringify(whole[i]!.simulation.simulation.markets),
      );
      expect(line.simulation.id).toBe(whole[i]!.simulation.id);
    });
    const refused = await get(`${batch.results_url}?include=nope`, auth);
    expect(refused.statusCode).toBe(400);
  });
});

describe('selectSections', () => {
  const document = JSON.stringify({
    schema: 'vendor.simulation.v1',
    fixture: { a: 1 },
    result: { b: -0.5 },
    goals: [1e-7],
  });
  it('is the stored document itself for every section, and a sub-object of its text in order otherwise', () => {
    const stored = storedDocument(document);
    expect(selectSections(stored, null)).toBe(stored);
    expect(includedSections(undefined)).toBeNull();
    expect(includedSections(DOCUMENT_SECTIONS.join(','))).toBeNull();
    expect(selectSections(stored, includedSections('goals,fixture'))).toBe(
      '{"schema":"vendor.simulation.v1","fixture":{"a":1},"goals":[1e-7]}',
    );
  });
});
