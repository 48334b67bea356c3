// Bodies that carry a stored simulation document, sent gzip from the document's stored form
// (docs/decisions.md §6, "Stored documents"): a job thread deflated the document once
// (src/engine/stored-document.ts), and every body that carries it, a single simulation or a line of a
// batch's results stream, splices that deflate in as it is. A gzip member is a deflate stream, and a
// deflate stream may be cut into pieces made on their own, each ending byte-aligned with no final block
// (a sync flush): the text around a document goes as stored (uncompressed) blocks, or deflated here when
// there is much of it; the CRC-32 of the whole is the pieces' CRCs combined (crc32Combine). Compressing a
// 70 KB document per response instead cost some 0.5 ms (gzip level 3) of CPU per body, and the text it
// came from had crossed the event loop, the database and the wire to it at eight times the size.
// zlib.crc32 needs Node 20.15 (package.json engines).
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StoredDocument } from '../engine/stored-document.js';
import { answeredNotModified, type BodyEncoding, splicedBodyTag } from './entity-tags.js';
import { type SplicedJson, sendSerialized, splicedText } from './serialize.js';

/**
 * The gzip level of bodies compressed per response. Measured on this service's own bodies (docs/decisions.md
 * §6, "Compression"): a 100-item page of NDJSON results (7 MB) 110 ms at level 6 against 40 ms at 3, a
 * 1,000-item batch status (500 KB) 2.9 against 1.2 ms, a 70 KB document 0.92 against 0.50 ms.
 */
export const ONE_OFF_GZIP_LEVEL = 3;

const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final block: the end of a deflate stream whose pieces each ended on a sync flush. */
const FINAL_BLOCK = zlib.deflateRawSync(Buffer.alloc(0));
/** Text shorter than this goes as a stored block: deflating it costs more than the bytes it saves. */
const DEFLATE_TEXT_BYTES = 4096;

/**
 * The encodings Accept-Encoding admits, with their q (as @fastify/compress reads it: x-gzip is gzip);
 * `*` stands for any encoding not named.
 */
function acceptedEncodings(request: FastifyRequest): Map<string, number> {
  const accepted = new Map<string, number>();
  const header = request.headers['accept-encoding'];
  if (typeof header !== 'string' || request.headers['x-no-compression'] !== undefined) return accepted;
  for (const part of header.toLowerCase().split(',')) {
    const [token = '', ...parameters] = part.split(';').map((piece) => piece.trim());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    accepted.set(token === 'x-gzip' ? 'gzip' : token, q === undefined ? 1 : Number(q.slice(2)) || 0);
  }
  return accepted;
}

function admits(accepted: Map<string, number>, encoding: string): boolean {
  return (accepted.get(encoding) ?? accepted.get('*') ?? 0) > 0;
}

/** Whether the request's Accept-Encoding admits gzip. */
export function admitsGzip(request: FastifyRequest): boolean {
  return admits(acceptedEncodings(request), 'gzip');
}

/**
 * The Content-Encoding a body carrying a document leaves in: gzip from the stored forms (`spliced`: this
 * module writes it), else what @fastify/compress picks from its encodings (src/http/app.ts: brotli before
 * gzip, the client's q first; such a body is always above its 1 KiB threshold).
 */
export function bodyEncoding(request: FastifyRequest, spliced: boolean): BodyEncoding {
  if (spliced) return 'gzip';
  const accepted = acceptedEncodings(request);
  const q = (encoding: string) => accepted.get(encoding) ?? accepted.get('*') ?? 0;
  if (q('br') > 0 && q('br') >= q('gzip')) return 'br';
  return q('gzip') > 0 ? 'gzip' : 'identity';
}

/** A gzip member's trailer: the CRC-32 of its uncompressed bytes and their count, modulo 2^32. */
function gzipTrailer(crc: number, bytes: number): Buffer {
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(bytes % 2 ** 32, 4);
  return trailer;
}

/** The CRC-32 polynomial, reflected (zlib's). */
const CRC_POLYNOMIAL = 0xedb88320;

/** a(x) times b(x) modulo the CRC polynomial (zlib's multmodp). */
function multiplyModP(a: number, b: number): number {
  let m = 0x80000000;
  let product = 0;
  let multiplier = b >>> 0;
  for (;;) {
    if (a & m) {
      product ^= multiplier;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    multiplier = multiplier & 1 ? (multiplier >>> 1) ^ CRC_POLYNOMIAL : multiplier >>> 1;
  }
  return product >>> 0;
}

/** x^(2^n) modulo the CRC polynomial, for n = 0 to 31 (zlib's x2n_table). */
const X_2N = (() => {
  const table = new Uint32Array(32);
  let p = 1 << 30; // x^1
  table[0] = p;
  for (let n = 1; n < 32; n++) table[n] = p = multiplyModP(p, p);
  return table;
})();

/**
 * The CRC-32 of two byte strings one after the other, from each one's CRC-32 and the second's length
 * (zlib's crc32_combine): a stored document's CRC joins its envelope's without its bytes.
 */
export function crc32Combine(crc1: number, crc2: number, length2: number): number {
  // x^(8 × length2) modulo p: the first CRC shifted over the second string's bits.
  let shift = 0x80000000; // x^0
  let k = 3;
  for (let n = length2; n > 0; n = Math.floor(n / 2), k++) {
    if (n % 2 === 1) shift = multiplyModP(X_2N[k & 31]!, shift);
  }
  return (multiplyModP(shift, crc1 >>> 0) ^ (crc2 >>> 0)) >>> 0;
}

/**
 * `bytes` as pieces of a deflate stream that end byte-aligned: deflated (ending on a sync flush) when
 * there are many, else as one stored block (a header byte, the length and its complement, the bytes:
 * fewer than DEFLATE_TEXT_BYTES fit one block, whose length is 16 bits).
 */
function textPieces(bytes: Buffer): Buffer[] {
  if (bytes.length >= DEFLATE_TEXT_BYTES) {
    return [
      zlib.deflateRawSync(bytes, { level: ONE_OFF_GZIP_LEVEL, finishFlush: zlib.constants.Z_SYNC_FLUSH }),
    ];
  }
  const header = Buffer.alloc(5);
  header.writeUInt16LE(bytes.length, 1);
  header.writeUInt16LE(~bytes.length & 0xffff, 3);
  return [header, bytes];
}

/** A gzip member's pieces in the making: the bytes so far, with their CRC-32 and count. */
function makeMember() {
  let crc = 0;
  let bytes = 0;
  let pieces: Buffer[] = [];
  let size = 0;
  const add = (piece: Uint8Array) => {
    pieces.push(piece as Buffer);
    size += piece.length;
  };
  return {
    text(utf8: Buffer) {
      crc = zlib.crc32(utf8, crc);
      bytes += utf8.length;
      for (const piece of textPieces(utf8)) add(piece);
    },
    document(document: StoredDocument) {
      crc = crc32Combine(crc, document.crc32, document.bytes);
      bytes += document.bytes;
      add(document.deflated);
    },
    size: () => size,
    /** The pieces so far, joined, and forgotten. */
    take(): Buffer {
      const joined = Buffer.concat(pieces, size);
      pieces = [];
      size = 0;
      return joined;
    },
    /** The member's end: the final block and the trailer. */
    end: () => Buffer.concat([FINAL_BLOCK, gzipTrailer(crc, bytes)]),
  };
}

/** A spliced body as one gzip member; null when its document is text (a choice of sections). */
export function gzipSpliced(body: SplicedJson): Buffer | null {
  if (typeof body.document === 'string') return null;
  const member = makeMember();
  member.text(Buffer.from(body.head, 'utf8'));
  member.document(body.document);
  member.text(Buffer.from(body.tail, 'utf8'));
  return Buffer.concat([GZIP_HEADER, member.take(), member.end()]);
}

/**
 * Sends a JSON body that carries a stored document (serializeWithJsonField's form): gzip from the
 * document's stored form when the client accepts gzip, else its text as any body, which
 * @fastify/compress compresses as the client asks; tagged (ETag), and 304 when If-None-Match names
 * the tag.
 */
export function sendDocumentBody(
  request: FastifyRequest,
  reply: FastifyReply,
  body: SplicedJson,
): FastifyReply {
  const spliced = admitsGzip(request) && typeof body.document !== 'string';
  // A delivery read again is the same bytes: a client that holds them gets 304 (entity-tags.ts). Only
  // a read: a POST's answer (a run delivered at once, a replay of one) is no copy of a resource.
  if (request.method === 'GET' || request.method === 'HEAD') {
    const tag = splicedBodyTag(body, bodyEncoding(request, spliced));
    if (answeredNotModified(request, reply, tag)) return reply;
  }
  const gzip = spliced ? gzipSpliced(body) : null;
  if (!gzip) return sendSerialized(reply, splicedText(body));
  return sendSerialized(reply.header('content-encoding', 'gzip').header('vary', 'accept-encoding'), gzip);
}

/** Bytes of a results stream written at once: some 20 documents' stored forms. */
const STREAM_CHUNK_BYTES = 262_144;

/**
 * The lines of an NDJSON stream as one gzip member, written in chunks: each document as its stored form,
 * the text between documents as textPieces makes it. Text longer than a chunk (lines without documents)
 * is deflated a chunk at a time.
 */
export async function* gzipLines(lines: AsyncIterable<string | SplicedJson>): AsyncGenerator<Buffer> {
  yield GZIP_HEADER;
  const member = makeMember();
  let text: string[] = [];
  let textLength = 0;
  const endText = () => {
    if (text.length > 0) member.text(utf8Of(text));
    text = [];
    textLength = 0;
  };
  const addText = (piece: string) => {
    text.push(piece);
    textLength += piece.length;
  };
  for await (const line of lines) {
    if (typeof line === 'string' || typeof line.document === 'string') {
      addText(typeof line === 'string' ? line : splicedText(line));
    } else {
      addText(line.head);
      endText();
      member.document(line.document);
      addText(line.tail);
    }
    if (textLength >= STREAM_CHUNK_BYTES) endText();
    if (member.size() >= STREAM_CHUNK_BYTES) yield member.take();
  }
  endText();
  yield Buffer.concat([member.take(), member.end()]);
}

/**
 * The UTF-8 of `pieces` one after another, each written into one buffer: joining a piece's lines into
 * one string first and encoding that took about 20 times as long (300–440 against 18 ms for 68 MB of
 * documents on this machine; docs/decisions.md §6, "Compression").
 */
function utf8Of(pieces: readonly string[]): Buffer {
  let bytes = 0;
  for (const piece of pieces) bytes += Buffer.byteLength(piece);
  const raw = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const piece of pieces) at += raw.write(piece, at);
  return raw;
}
