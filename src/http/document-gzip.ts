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

/**
 * The gzip level of bodies compressed per response. Measured on this service's own bodies (docs/decisions.md
 * §6, "Compression"): a 100-item page of NDJSON results (7 MB) 110 ms at level 6 against 40 ms at 3, a
 * 1,000-item batch status (500 KB) 2.9 against 1.2 ms, a 70 KB document 0.92 against 0.50 ms. A cached
 * document, compressed once for many sendings, keeps level 6 (DOCUMENT_LEVEL).
 */
export const ONE_OFF_GZIP_LEVEL = 3;

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
 * The compressed documents of one app (made by app.ts, kept on the Fastify instance as `documentGzip`).
 * Keyed by the document's text, so no id can name the wrong document (a process may serve several
 * databases in tests). A document sent once is remembered as `null`: it is compressed and cached on its
 * second sending, so a result delivered once (a batch item) leaves as any body does (@fastify/compress,
 * off the event loop) and costs what it did, and one answered again and again (a cache hit) is
 * compressed once.
 */
export interface DocumentGzip {
  /**
   * `body` as one gzip member, `body.slice(at, -1)` being a stored document and the last character its
   * closing brace (serializeWithJsonField's form); null when the document is to be sent the usual way.
   */
  gzipBody(body: string, at: number): Buffer | null;
  /** Forgets every document. */
  clear(): void;
}

export function makeDocumentGzip(): DocumentGzip {
  const documents = new Map<string, CompressedDocument | null>();

  const remember = (text: string, value: CompressedDocument | null) => {
    documents.delete(text);
    documents.set(text, value);
    if (documents.size > CAPACITY) documents.delete(documents.keys().next().value as string);
  };

  /** The cached compressed document, compressing it on its second sending; null on its first. */
  const compressedDocument = (text: string): CompressedDocument | null => {
    const cached = documents.get(text);
    if (cached) {
      remember(text, cached);
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
  };

  return {
    gzipBody(body, at) {
      const document = body.slice(at, -1);
      const compressed = compressedDocument(document);
      if (!compressed) return null;
      const head = body.slice(0, at);
      const tail = body.slice(-1);
      let crc = zlib.crc32(head);
      crc = zlib.crc32(document, crc);
      crc = zlib.crc32(tail, crc);
      return Buffer.concat([
        GZIP_HEADER,
        zlib.deflateRawSync(head, { level: 1, finishFlush: zlib.constants.Z_SYNC_FLUSH }),
        compressed.deflated,
        zlib.deflateRawSync(tail),
        gzipTrailer(crc, Buffer.byteLength(head) + compressed.bytes + Buffer.byteLength(tail)),
      ]);
    },
    clear: () => documents.clear(),
  };
}

/** A gzip member's trailer: the CRC-32 of its uncompressed bytes and their count, modulo 2^32. */
function gzipTrailer(crc: number, bytes: number): Buffer {
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(bytes % 2 ** 32, 4);
  return trailer;
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
  const gzip = admitsGzip(request) ? request.server.documentGzip.gzipBody(body.text, body.at) : null;
  if (!gzip) return sendSerialized(reply, body.text);
  return sendSerialized(reply.header('content-encoding', 'gzip').header('vary', 'accept-encoding'), gzip);
}

/** Pieces of a stream being deflated at once: zlib's thread pool has four threads. */
const PIECES_IN_FLIGHT = 8;
/** Lines are gathered into pieces of this many characters at least (a piece costs zlib a new stream). */
const PIECE_CHARACTERS = 262_144;

/**
 * `pieces` (the lines of an NDJSON stream) as one gzip member, each piece deflated on its own, ending on
 * a sync flush, on zlib's thread pool, several at a time, and written in their order: a results stream
 * compressed as one zlib stream was compressed piece after piece on one thread, and on 2 cores a
 * 1,000-item stream (87 MB) took 1.35–1.48 s read again with gzip against 0.35–0.62 s without
 * (docs/decisions.md §6, "Compression"). A piece's matches cannot reach into the piece before (a
 * document of some 85 KB has its own, within zlib's 32 KB window anyway). The CRC-32 and length of the
 * whole are summed as the pieces go.
 */
export async function* gzipPieces(pieces: AsyncIterable<string>, level: number): AsyncGenerator<Buffer> {
  yield GZIP_HEADER;
  let crc = 0;
  let bytes = 0;
  const deflating: Array<Promise<Buffer>> = [];
  let gathered: string[] = [];
  let gatheredLength = 0;
  const send = () => {
    const raw = utf8Of(gathered);
    gathered = [];
    gatheredLength = 0;
    crc = zlib.crc32(raw, crc);
    bytes = (bytes + raw.length) % 2 ** 32;
    const deflated = deflateRaw(raw, level);
    // A stream cut off (the client gone, a page that failed) leaves its pieces unread: not unhandled.
    deflated.catch(() => {});
    deflating.push(deflated);
  };
  for await (const piece of pieces) {
    gathered.push(piece);
    gatheredLength += piece.length;
    if (gatheredLength < PIECE_CHARACTERS) continue;
    send();
    if (deflating.length >= PIECES_IN_FLIGHT) yield await deflating.shift()!;
  }
  if (gatheredLength > 0) send();
  for (const deflated of deflating) yield await deflated;
  yield Buffer.concat([zlib.deflateRawSync(Buffer.alloc(0)), gzipTrailer(crc, bytes)]);
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

function deflateRaw(raw: Buffer, level: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zlib.deflateRaw(raw, { level, finishFlush: zlib.constants.Z_SYNC_FLUSH }, (error, deflated) =>
      error ? reject(error) : resolve(deflated),
    );
  });
}
