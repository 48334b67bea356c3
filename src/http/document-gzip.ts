// Simulation bodies sent gzip from a cache of their documents' compressed form (docs/decisions.md §6).
// A cache hit answers the same ~70 KB document to organisation after organisation; compressing it per
// response (what @fastify/compress does) cost some 0.6 ms (brotli) to 1.7 ms (gzip) of CPU per hit.
// A gzip member is a deflate stream, and a deflate stream may be cut into pieces compressed on their
// own, each ending on a sync flush: the envelope before the document, the cached document, and the
// closing brace are deflated separately and joined, with the CRC-32 and length of the whole body.
// zlib.crc32 needs Node 20.15 (package.json engines).
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type SplicedJson, sendSerialized } from './serialize.js';

/** Documents kept compressed, most recently sent last; some 10 KB each plus the text as the key. */
const CAPACITY = 128;
/** The level @fastify/compress uses for gzip: a 100,000-draw document near 13 KiB (docs/api.md §1). */
const DOCUMENT_LEVEL = 6;
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

interface CompressedDocument {
  /** Raw deflate of the document's UTF-8, ending on a sync flush (no final block). */
  deflated: Buffer;
  bytes: number;
}

/**
 * Keyed by the document's text, so no id can name the wrong document (a process may serve several
 * databases in tests). A document sent once is remembered as `null`: it is compressed and cached on its
 * second sending, so a result delivered once (a batch item) leaves as any body does (@fastify/compress,
 * off the event loop) and costs what it did, and one answered again and again (a cache hit) is
 * compressed once.
 */
const documents = new Map<string, CompressedDocument | null>();

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

/** The cached compressed document, compressing it on its second sending; null on its first. */
function compressedDocument(text: string): CompressedDocument | null {
  const cached = documents.get(text);
  if (cached) {
    documents.delete(text);
    documents.set(text, cached);
    return cached;
  }
  if (cached === undefined) {
    remember(text, null);
    return null;
  }
  const compressed = {
    deflated: zlib.deflateRawSync(text, {
      level: DOCUMENT_LEVEL,
      finishFlush: zlib.constants.Z_SYNC_FLUSH,
    }),
    bytes: Buffer.byteLength(text),
  };
  remember(text, compressed);
  return compressed;
}

function remember(text: string, value: CompressedDocument | null): void {
  documents.delete(text);
  documents.set(text, value);
  if (documents.size > CAPACITY) documents.delete(documents.keys().next().value as string);
}

/**
 * `body` as one gzip member, `body.slice(at, -1)` being a stored document and the last character its
 * closing brace (serializeWithJsonField's form); null when the document is to be sent the usual way.
 */
export function gzipDocumentBody(body: string, at: number): Buffer | null {
  const document = body.slice(at, -1);
  const compressed = compressedDocument(document);
  if (!compressed) return null;
  const head = body.slice(0, at);
  const tail = body.slice(-1);
  let crc = zlib.crc32(head);
  crc = zlib.crc32(document, crc);
  crc = zlib.crc32(tail, crc);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE((Buffer.byteLength(head) + compressed.bytes + Buffer.byteLength(tail)) >>> 0, 4);
  return Buffer.concat([
    GZIP_HEADER,
    zlib.deflateRawSync(head, { level: 1, finishFlush: zlib.constants.Z_SYNC_FLUSH }),
    compressed.deflated,
    zlib.deflateRawSync(tail),
    trailer,
  ]);
}

/**
 * Sends a JSON body that ends with a stored document (serializeWithJsonField's form): gzip from the cache
 * when the client accepts gzip and the document was sent before, else as any body, which
 * @fastify/compress compresses as the client asks.
 */
export function sendDocumentBody(
  request: FastifyRequest,
  reply: FastifyReply,
  body: SplicedJson,
): FastifyReply {
  const gzip = admits(acceptedEncodings(request), 'gzip') ? gzipDocumentBody(body.text, body.at) : null;
  if (!gzip) return sendSerialized(reply, body.text);
  return sendSerialized(reply.header('content-encoding', 'gzip').header('vary', 'accept-encoding'), gzip);
}

/** Forgets every cached document (tests). */
export function clearDocumentGzipCache(): void {
  documents.clear();
}
