// Simulation bodies from the compressed documents (src/http/document-gzip.ts): the gzip member made of
// separately deflated pieces decodes to exactly the body; a document is compressed on its second sending
// (its first leaves through @fastify/compress, as any body); every route that sends a
// document (the submission, its idempotent replay, the result path, GET by id) sends the same bytes
// compressed as uncompressed.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DocumentGzip, gzipPieces, makeDocumentGzip } from '../../src/http/document-gzip.js';
import { simulationSchema } from '../../src/http/schemas/simulations.js';
import { FX } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

describe('a body with its document deflated apart', () => {
  let documents: DocumentGzip;
  beforeEach(() => {
    documents = makeDocumentGzip();
  });
  const gzipDocumentBody = (body: string, at: number) => documents.gzipBody(body, at);

  it('decodes to the body byte for byte, non-ASCII text on both sides of the cut included', () => {
    const document = JSON.stringify({ team: 'Málaga CF', note: 'Åland ⚽ 1–0', grid: [[0.1, 0.2], [0.3]] });
    const head = '{"object":"simulation","home":"Atlético 🐻","simulation":';
    const body = `${head}${document}}`;
    expect(gzipDocumentBody(body, head.length)).toBeNull();
    const gzip = gzipDocumentBody(body, head.length);
    expect(gzip).not.toBeNull();
    expect(gunzipSync(gzip!).toString('utf8')).toBe(body);
    // The same document under another envelope, from the cache.
    const other = `{"id":"sim_2","simulation":${document}}`;
    expect(gunzipSync(gzipDocumentBody(other, other.indexOf(document))!).toString('utf8')).toBe(other);
  });

  it('keeps the last documents sent, and only those', () => {
    const head = '{"simulation":';
    const bodyOf = (i: number) => `${head}{"draws":${i}}}`;
    for (let i = 0; i < 200; i++) expect(gzipDocumentBody(bodyOf(i), head.length)).toBeNull();
    // The first 72 were pushed out by the 128 after them: a first sending again.
    expect(gzipDocumentBody(bodyOf(0), head.length)).toBeNull();
    expect(gunzipSync(gzipDocumentBody(bodyOf(199), head.length)!).toString('utf8')).toBe(bodyOf(199));
  });
});

describe('a stream deflated in pieces', () => {
  async function gzipped(pieces: AsyncIterable<string>): Promise<Buffer> {
    const out: Buffer[] = [];
    for await (const chunk of gzipPieces(pieces, 3)) out.push(chunk);
    return Buffer.concat(out);
  }

  it('decodes to its lines joined, through many pieces at once and lines of any size', async () => {
    // Some 4 MB in lines of 1 byte to 300 KB with text that is not ASCII: more pieces than are
    // deflated at once, and lines larger than a piece.
    const lines = Array.from({ length: 120 }, (_, i) => {
      const size = i % 7 === 0 ? 300_000 : (i * 7919) % 40_000;
      return `${JSON.stringify({ i, team: 'Atlético ⚽', pad: 'x'.repeat(size) })}\n`;
    });
    lines.push('é');
    async function* source() {
      yield* lines;
    }
    const gzip = await gzipped(source());
    expect(gunzipSync(gzip).toString('utf8')).toBe(lines.join(''));
    expect(gzip.length).toBeLessThan(Buffer.byteLength(lines.join('')) / 20);
    // An empty stream is an empty member.
    expect(gunzipSync(await gzipped((async function* () {})())).length).toBe(0);
  });

  it('fails where its lines fail (a page that could not settle)', async () => {
    async function* failing() {
      yield 'x'.repeat(500_000);
      throw new Error('page failed');
    }
    await expect(gzipped(failing())).rejects.toThrow('page failed');
  });
});

describe('simulation routes with Accept-Encoding', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createFeedTestContext({ worker: true });
  });
  afterAll(async () => t.close());
  beforeEach(() => t.app.documentGzip.clear());

  const simulate = (auth: Record<string, string>, headers: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/simulations',
      headers: { ...auth, ...headers },
      payload: { fixture_id: FX.upcoming, draws: 700, wait_seconds: 25 },
    });
  const decoded = (response: { rawPayload: Buffer; headers: Record<string, unknown> }) => {
    const encoding = response.headers['content-encoding'];
    if (encoding === 'gzip') return gunzipSync(response.rawPayload).toString('utf8');
    if (encoding === 'br') return brotliDecompressSync(response.rawPayload).toString('utf8');
    return response.rawPayload.toString('utf8');
  };

  it('a cache hit goes out gzip from the cache, decoding to a body of the schema', async () => {
    const first = await t.newOrg();
    const ran = await simulate(first.auth, { 'accept-encoding': 'br, gzip' });
    expect(ran.statusCode, ran.body).toBe(200);
    // First sending of this document, brotli preferred: compressed by @fastify/compress as asked.
    expect(ran.headers['content-encoding']).toBe('br');

    const second = await t.newOrg();
    const hit = await simulate(second.auth, { 'accept-encoding': 'gzip, deflate, br' });
    expect(hit.statusCode).toBe(200);
    expect(hit.headers['content-encoding']).toBe('gzip');
    expect(hit.headers.vary).toMatch(/accept-encoding/i);
    const body = decoded(hit);
    expect(body).toBe(JSON.stringify(simulationSchema.parse(JSON.parse(body))));
    expect(JSON.parse(body).simulation).toEqual(JSON.parse(decoded(ran)).simulation);

    // The result path and GET by id send the same bytes, compressed or not.
    const { id, receipt } = JSON.parse(body) as { id: string; receipt: Record<string, string> };
    const byId = (headers: Record<string, string>) =>
      t.app.inject({ method: 'GET', url: `/v1/simulations/${id}`, headers: { ...second.auth, ...headers } });
    const plain = await byId({});
    const gzipped = await byId({ 'accept-encoding': 'gzip' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(decoded(gzipped)).toBe(plain.body);
    const again = await t.app.inject({
      method: 'GET',
      url: `/v1/simulations/jobs/${receipt.job_id}?reservation_id=${receipt.reservation_id}`,
      headers: { ...second.auth, 'accept-encoding': 'gzip' },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decoded(again)).id).toBe(id);
  });

  it('an idempotent replay decodes to the first answer; gzip refused or no header: as before', async () => {
    const org = await t.newOrg();
    const headers = { 'accept-encoding': 'gzip', 'idempotency-key': 'gzip-replay' };
    const first = await simulate(org.auth, headers);
    const replay = await simulate(org.auth, headers);
    expect(first.headers['content-encoding']).toBe('gzip');
    expect(replay.headers['content-encoding']).toBe('gzip');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(decoded(replay)).toBe(decoded(first));

    const refused = await simulate((await t.newOrg()).auth, { 'accept-encoding': 'gzip;q=0, br' });
    expect(refused.headers['content-encoding']).toBe('br');
    const none = await simulate((await t.newOrg()).auth, {});
    expect(none.headers['content-encoding']).toBeUndefined();
    expect(none.body).toBe(JSON.stringify(simulationSchema.parse(none.json())));
  });
});
