// Re-reads of stored results with an ETag and If-None-Match (docs/api.md §4.10, "Reading again";
// src/http/entity-tags.ts): a delivered simulation by its id or its result path, and a batch's results
// stream once every item has ended, carry a strong tag that stands for their bytes in the encoding they
// leave in; a client that names it gets 304 with no body, and nothing is charged. Every 200 seen here
// with a tag is checked against every other 200 with the same tag: the same bytes.
import { gunzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FX } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

describe('re-reads of stored results', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createFeedTestContext({ worker: true });
  });
  afterAll(async () => t.close());

  /** The bytes of each tag's 200s: one tag, one body. */
  const bytesOfTag = new Map<string, Buffer>();
  async function read(auth: Json, url: string, headers: Json = {}): Promise<LightMyRequestResponse> {
    const response = await t.app.inject({ method: 'GET', url, headers: { ...auth, ...headers } });
    const tag = response.headers.etag as string | undefined;
    if (response.statusCode === 200 && tag) {
      expect(tag, 'a strong tag').toMatch(/^"[A-Za-z0-9_-]+"$/);
      const seen = bytesOfTag.get(tag);
      if (seen) expect(response.rawPayload.equals(seen), `the bytes of ${tag}`).toBe(true);
      else bytesOfTag.set(tag, response.rawPayload);
    }
    return response;
  }
  const expectNotModified = (response: LightMyRequestResponse, tag: string) => {
    expect(response.statusCode, response.body).toBe(304);
    expect(response.rawPayload.length).toBe(0);
    expect(response.headers.etag).toBe(tag);
  };

  it('a delivered simulation: tagged by its bytes, 304 to the tag, in the encoding it leaves in', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const ran = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations',
      headers: auth,
      payload: { fixture_id: FX.upcoming, draws: 700, wait_seconds: 25 },
    });
    expect(ran.statusCode, ran.body).toBe(200);
    // A POST's answer is no copy of a resource: no tag.
    expect(ran.headers.etag).toBeUndefined();
    const { id, receipt } = ran.json();
    const spent = (await t.services.ledger.balance(orgId)).spentThisMonth;

    const plain = await read(auth, `/v1/simulations/${id}`);
    expect(plain.statusCode).toBe(200);
    const tag = plain.headers.etag as string;
    expect(tag).toBeDefined();
    expect((await read(auth, `/v1/simulations/${id}`)).headers.etag).toBe(tag);
    for (const named of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
      expectNotModified(await read(auth, `/v1/simulations/${id}`, { 'if-none-match': named }), tag);
    }
    const other = await read(auth, `/v1/simulations/${id}`, { 'if-none-match': '"other"' });
    expect(other.statusCode).toBe(200);

    // The result path gives the same delivery again: the same bytes, the same tag.
    const resultPath = `/v1/simulations/jobs/${receipt.job_id}?reservation_id=${receipt.reservation_id}`;
    expect((await read(auth, resultPath)).headers.etag).toBe(tag);
    expectNotModified(await read(auth, resultPath, { 'if-none-match': tag }), tag);

    // Gzip is other bytes: another tag, and a copy of the text is no copy of them.
    const gzip = { 'accept-encoding': 'gzip' };
    const gzipped = await read(auth, `/v1/simulations/${id}`, gzip);
    const gzipTag = gzipped.headers.etag as string;
    expect(gzipTag).not.toBe(tag);
    expect(gunzipSync(gzipped.rawPayload).toString('utf8')).toBe(plain.body);
    expect((await read(auth, `/v1/simulations/${id}`, { ...gzip, 'if-none-match': tag })).statusCode).toBe(
      200,
    );
    expectNotModified(
      await read(auth, `/v1/simulations/${id}`, { ...gzip, 'if-none-match': gzipTag }),
      gzipTag,
    );
    // Brotli (by @fastify/compress) is other bytes again.
    const brotli = await read(auth, `/v1/simulations/${id}`, { 'accept-encoding': 'br' });
    expect(brotli.headers['content-encoding']).toBe('br');
    expect([tag, gzipTag]).not.toContain(brotli.headers.etag);

    // A choice of sections is another body.
    const sections = await read(auth, `/v1/simulations/${id}?include=result`);
    const sectionsTag = sections.headers.etag as string;
    expect(sectionsTag).not.toBe(tag);
    expectNotModified(
      await read(auth, `/v1/simulations/${id}?include=result`, { 'if-none-match': sectionsTag }),
      sectionsTag,
    );

    // Another organisation's delivery of the same cached result is another body (its receipt).
    const second = await t.newOrg({ plan: 'plus' });
    const hit = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations',
      headers: second.auth,
      payload: { fixture_id: FX.upcoming, draws: 700, wait_seconds: 25 },
    });
    const theirs = await read(second.auth, `/v1/simulations/${hit.json().id}`);
    expect(theirs.headers.etag).not.toBe(tag);
    expect((await read(second.auth, `/v1/simulations/${id}`, { 'if-none-match': tag })).statusCode).toBe(404);

    // Re-reads are free, 304s too.
    expect((await t.services.ledger.balance(orgId)).spentThisMonth).toBe(spent);
  });

  it("a batch's results stream: tagged once every item has ended, 304 to the tag before a page is read", async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus' });
    const submitted = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations/batch',
      headers: auth,
      payload: { fixtures: [{ fixture_id: FX.upcoming }, { fixture_id: FX.announced }], draws: 300 },
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    const batch = submitted.json();
    let status: Json = {};
    for (let i = 0; i < 600 && status.status !== 'completed'; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await read(auth, `/v1/simulations/batch/${batch.batch_id}`)).json();
    }
    expect(status.status).toBe('completed');
    const url = batch.results_url as string;

    // The first read delivers the items: it says something no later read says, so it has no tag.
    const first = await read(auth, url);
    expect(first.statusCode).toBe(200);
    expect(first.headers.etag).toBeUndefined();
    const spent = (await t.services.ledger.balance(orgId)).spentThisMonth;
    expect(spent).toBe(600);

    const settled = await read(auth, url);
    const tag = settled.headers.etag as string;
    expect(tag).toBeDefined();
    expect(settled.body.trim().split('\n')).toHaveLength(2);
    expect((await read(auth, url)).headers.etag).toBe(tag);
    expectNotModified(await read(auth, url, { 'if-none-match': tag }), tag);

    const gzipped = await read(auth, url, { 'accept-encoding': 'gzip' });
    const gzipTag = gzipped.headers.etag as string;
    expect(gzipTag).not.toBe(tag);
    expect(gunzipSync(gzipped.rawPayload).toString('utf8')).toBe(settled.body);
    expectNotModified(
      await read(auth, url, { 'accept-encoding': 'gzip', 'if-none-match': gzipTag }),
      gzipTag,
    );

    const sections = await read(auth, `${url}?include=result,state`);
    expect(sections.headers.etag).not.toBe(tag);
    expect((await read(auth, `${url}?include=result,state`, { 'if-none-match': tag })).statusCode).toBe(200);

    expect((await t.services.ledger.balance(orgId)).spentThisMonth).toBe(spent);
  });
});
