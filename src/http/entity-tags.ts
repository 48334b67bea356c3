// Strong entity tags (RFC 9110 §8.8.3) of the bodies that carry stored simulation documents, and the
// 304 Not Modified a client's If-None-Match earns (docs/api.md §4.10, "Reading again"). A re-read is free
// already (docs/decisions.md §6); a 304 also spares the bytes: a 110-minute path's results are some
// 5.7 MB of NDJSON, and re-reading them in full took the CPU other organisations' calls were waiting for.
// A tag is made from what makes the body's bytes, never from the bytes themselves (a document is not
// inflated, nor a stream read, to tag it), and it names the encoding the body leaves in: a gzip body and
// its text are different bytes, so they have different strong tags.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SplicedJson } from './serialize.js';

/** The Content-Encoding a body leaves in (document-gzip.ts bodyEncoding). */
export type BodyEncoding = 'gzip' | 'br' | 'identity';

/**
 * A strong tag of a body made of `parts` (each as it was written into the bytes, or a value that stands
 * for them) sent in `encoding`. Each part goes into the hash with its length, so that no two lists of
 * parts run together into the same text.
 */
export function entityTag(parts: readonly string[], encoding: BodyEncoding): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part.length}:`).update(part);
  const tag = hash.digest('base64url').slice(0, 32);
  return `"${tag}${encoding === 'identity' ? '' : `-${encoding}`}"`;
}

/**
 * The tag of a spliced body (a delivered simulation): its text around the document and the document, a
 * stored one by its CRC-32 and length (the document of a result never changes: results are written once),
 * a choice of its sections by their text.
 */
export function splicedBodyTag(body: SplicedJson, encoding: BodyEncoding): string {
  const document =
    typeof body.document === 'string'
      ? body.document
      : `stored:${body.document.crc32}:${body.document.bytes}`;
  return entityTag([body.head, document, body.tail], encoding);
}

/**
 * Whether the request's If-None-Match names `tag`: `*`, or a list that holds it (the weak comparison
 * RFC 9110 §13.1.2 asks of If-None-Match: `W/` does not matter).
 */
export function namedByIfNoneMatch(request: FastifyRequest, tag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  if (header.trim() === '*') return true;
  const opaque = tag.replace(/^W\//, '');
  return header.split(',').some((listed) => listed.trim().replace(/^W\//, '') === opaque);
}

/**
 * Tags the reply, and answers 304 with no body when the client holds those bytes already: true when it
 * did (the caller sends nothing else).
 */
export function answeredNotModified(request: FastifyRequest, reply: FastifyReply, tag: string): boolean {
  reply.header('etag', tag);
  if (!namedByIfNoneMatch(request, tag)) return false;
  reply.code(304).send();
  return true;
}
