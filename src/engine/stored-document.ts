// A simulation document as results store it and deliveries send it (docs/decisions.md §6, "Stored
// documents"): the raw deflate of its UTF-8, made on the job thread that wrote the document, with the
// CRC-32 and byte count of that UTF-8. A document is some 85 KB of JSON and some 11 KB deflated: the
// event loop, the database and the wire to it carry the small form, and a gzip body splices it in as it
// is (src/http/document-gzip.ts). Text is made from it only for a client that takes no gzip, or for a
// choice of sections.
import zlib from 'node:zlib';

export interface StoredDocument {
  /**
   * Raw deflate of the document's UTF-8, ending on a sync flush (no final block): a piece of a gzip body.
   * A Uint8Array, as a job thread's message gives a Buffer back (structured clone keeps no Buffer).
   */
  deflated: Uint8Array;
  /** The CRC-32 of the document's UTF-8 (a gzip trailer's, combined with its neighbours'). */
  crc32: number;
  /** The length of the document's UTF-8. */
  bytes: number;
}

/**
 * The deflate level of stored documents (docs/decisions.md §6, "Stored documents"): on 20 documents of
 * 78.5 KB, level 2 takes 0.26 ms of a job thread for 10.9 KB, level 3 0.33 ms for 10.1 KB, level 1 0.25
 * ms for 11.7 KB; level 6 three times level 3's time for 9.2 KB.
 */
export const STORED_DOCUMENT_LEVEL = 2;

const SYNC_FLUSH = { finishFlush: zlib.constants.Z_SYNC_FLUSH };

/** The stored form of a document's JSON text. */
export function storedDocument(text: string): StoredDocument {
  const utf8 = Buffer.from(text, 'utf8');
  return {
    // A copy of its own size: zlib's answer may be a view of a larger buffer, which a message to another
    // thread would copy whole, and which the known results (src/results/known-results.ts) would hold.
    deflated: new Uint8Array(zlib.deflateRawSync(utf8, { level: STORED_DOCUMENT_LEVEL, ...SYNC_FLUSH })),
    crc32: zlib.crc32(utf8),
    bytes: utf8.length,
  };
}

/** A stored document's UTF-8. */
export function documentUtf8(document: StoredDocument): Buffer {
  return zlib.inflateRawSync(document.deflated, SYNC_FLUSH);
}

/** A stored document's JSON text. */
export function documentText(document: StoredDocument): string {
  return documentUtf8(document).toString('utf8');
}
