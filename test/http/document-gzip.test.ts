// Bodies that carry a stored document (src/http/document-gzip.ts, src/engine/stored-document.ts): a gzip
// member made of the text around a document and the document's stored deflate decodes to exactly the
// body, so does a results stream of such lines and of text lines; the CRC-32 of pieces joins without
// their bytes; every route that sends a document (the submission, its idempotent replay, the result path,
// GET by id) sends the same bytes compressed as uncompressed.
import { brotliDecompressSync, crc32, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentText, storedDocument } from '../../src/engine/stored-document.js';
import { crc32Combine, gzipLines, gzipSpliced } from '../../src/http/document-gzip.js';
import { simulationSchema } from '../../src/http/schemas/simulations.js';
import { type SplicedJson, splicedText } from '../../src/http/serialize.js';
import { FX } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

describe('the CRC-32 of two strings from their own', () => {
  it("is zlib's CRC-32 of the two joined, for lengths from none to a megabyte", () => {
    const bytes = Buffer.from(Array.from({ length: 1_100_000 }, (_, i) => (i * 7919 + (i >> 8)) % 251));
    for (const [cut, end] of [
      [0, 0],
      [0, 5],
      [5, 5],
      [1, 2],
      [3, 1000],
      [65_535, 131_072],
      [12_345, 1_100_000],
    ] as const) {
      const a = bytes.subarray(0, cut);
      const b = bytes.subarray(cut, end);
      expect(crc32Combine(crc32(a), crc32(b), b.length)).toBe(crc32(bytes.subarray(0, end)));
    }
  });
});

describe('a body with its stored document spliced in', () => {
  const document = JSON.stringify({ team: 'Málaga CF', note: 'Åland ⚽ 1–0', grid: [[0.1, 0.2], [0.3]] });

  it('decodes to the body byte for byte, non-ASCII text on both sides of the document included', () => {
    const stored = storedDocument(document);
    expect(documentText(stored)).toBe(document);
    for (const head of ['{"object":"simulation","home":"Atlético 🐻","simulation":', 'x'.repeat(70_000)]) {
      const body: SplicedJson = { head, document: stored, tail: '}' };
      expect(gunzipSync(gzipSpliced(body)!).toString('utf8')).toBe(`${head}${document}}`);
    }
    // Text (a choice of sections) is left to the usual compression.
    expect(gzipSpliced({ head: '{"a":', document, tail: '}' })).toBeNull();
  });
});

describe('a results stream as one gzip member', () => {
  async function gzipped(lines: AsyncIterable<string | SplicedJson>): Promise<Buffer> {
    const out: Buffer[] = [];
    for await (const chunk of gzipLines(lines)) out.push(chunk);
    return Buffer.concat(out);
  }

  it('decodes to its lines joined: stored documents, text lines of any size, text documents', async () => {
    // Some 4 MB: documents between text lines of 1 byte to 300 KB with text that is not ASCII, more than a
    // chunk of text in a row, and lines larger than a chunk.
    const lines: Array<string | SplicedJson> = [];
    for (let i = 0; i < 120; i++) {
      const size = i % 7 === 0 ? 300_000 : (i * 7919) % 40_000;
      const text = JSON.stringify({ i, team: 'Atlético ⚽', pad: 'x'.repeat(size) });
      if (i % 3 === 0) lines.push(`${text}\n`);
      else if (i % 3 === 1)
        lines.push({ head: `{"i":${i},"simulation":`, document: storedDocument(text), tail: '}\n' });
      else lines.push({ head: '{"s":', document: text, tail: '}\n' });
    }
    lines.push('é');
    async function* source() {
      yield* lines;
    }
    const gzip = await gzipped(source());
    const whole = lines.map((line) => (typeof line === 'string' ? line : splicedText(line))).join('');
    expect(gunzipSync(gzip).toString('utf8')).toBe(whole);
    expect(gzip.length).toBeLessThan(Buffer.byteLength(whole) / 20);
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

  it('a run and a cache hit go out gzip from the stored form, decoding to a body of the schema', async () => {
    const first = await t.newOrg();
    const ran = await simulate(first.auth, { 'accept-encoding': 'br, gzip' });
    expect(ran.statusCode, ran.body).toBe(200);
    // Gzip, though brotli comes first: the stored form is sent as it is.
    expect(ran.headers['content-encoding']).toBe('gzip');

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
    // Gzip refused: the text, compressed by @fastify/compress as asked.
    expect(refused.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decoded(refused)).simulation).toEqual(JSON.parse(decoded(first)).simulation);
    const none = await simulate((await t.newOrg()).auth, {});
    expect(none.headers['content-encoding']).toBeUndefined();
    expect(none.body).toBe(JSON.stringify(simulationSchema.parse(none.json())));
  });
});
