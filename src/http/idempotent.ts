// Idempotency-Key on the routes that create jobs (docs/decisions.md §7): replay the first response
// byte for byte, refuse conflicts, and let a retry resume what the first attempt created. The records
// live in src/idempotency/store.ts; this module reads the header and stores the bytes that were sent.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError, errorBody } from '../errors.js';
import type { IdempotencyRecord, IdempotencyStore, StoredResponse } from '../idempotency/store.js';
import { sendDocumentBody } from './document-gzip.js';
import { errorResponseSchema } from './schemas/common.js';
import { type SplicedJson, sendSerialized, serializeThrough } from './serialize.js';

const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** The Idempotency-Key header: absent (null) or 1 to 255 characters (docs/api.md §8.5). */
export function parseIdempotencyKey(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  // A repeated header arrives as an array: one request has one key.
  const key = Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
  if (key === undefined || key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw new ApiError('parameter_invalid', {
      message: `The Idempotency-Key header must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters.`,
      param: 'Idempotency-Key',
    });
  }
  return key;
}

/** Fingerprint of a request body: the raw bytes as received ("the exact same JSON body"). */
export function requestBodyHash(body: string | Buffer | undefined): string {
  return createHash('sha256')
    .update(body ?? '')
    .digest('hex');
}

interface Sending {
  status: number;
  body: string;
  headers?: Record<string, string> | undefined;
  /** Where the body's stored document starts, for a body that ends with one. */
  documentAt?: number | undefined;
}

function sendJson(request: FastifyRequest, reply: FastifyReply, response: Sending, replayed = false) {
  for (const [name, value] of Object.entries(response.headers ?? {})) reply.header(name, value);
  if (replayed) reply.header('Idempotent-Replayed', 'true');
  reply.code(response.status);
  // A body ending with a stored document may leave gzip from the compressed documents (document-gzip.ts).
  if (response.documentAt !== undefined) {
    return sendDocumentBody(request, reply, { text: response.body, at: response.documentAt });
  }
  return sendSerialized(reply, response.body);
}

/** A response to send and store: a body to serialise through the schema of its status. */
interface BodyResponse {
  status: number;
  body: unknown;
  /** Sent and stored with the body (a 202's Location and Retry-After, docs/api.md §4.3). */
  headers?: Record<string, string>;
}

/**
 * A 200 already serialised whose text from `wire.at` on is a stored result's document followed by the
 * closing brace (a simulation's last field): the record names the result instead of copying the text.
 */
interface DocumentResponse {
  status: number;
  wire: SplicedJson;
  documentResultId: number;
  headers?: Record<string, string>;
}

export type IdempotentResponse = BodyResponse | DocumentResponse;

/** A stored result's document text, for replays whose record names it. */
export type StoredDocumentText = (resultId: number) => Promise<string>;

/** Where a document response's stored document starts in its body; undefined for other responses. */
function documentAt(response: IdempotentResponse): number | undefined {
  return 'wire' in response ? response.wire.at : undefined;
}

/** The record of a response: a document response without the document's text and where it goes back. */
function storedForm(
  response: { status: number; body: string; headers: Record<string, string> },
  sent: IdempotentResponse,
): StoredResponse {
  if (!('wire' in sent)) return response;
  const { text, at } = sent.wire;
  const body = text.slice(0, at) + text.slice(text.length - 1);
  return { ...response, body, document: { resultId: sent.documentResultId, at } };
}

/** The bytes first sent: a named document's text put back where it was. */
async function replayBody(response: StoredResponse, storedDocument: StoredDocumentText | undefined) {
  if (!response.document) return response.body;
  if (!storedDocument) throw new Error('a stored response names a document this route cannot read');
  const text = await storedDocument(response.document.resultId);
  const { at } = response.document;
  return response.body.slice(0, at) + text + response.body.slice(at);
}

/**
 * Runs `run` once per Idempotency-Key (or plainly without one) and sends its response through the
 * schema of its status. An ApiError is stored as its error body when storable, then thrown on to the
 * error handler, which answers it the same way.
 */
export async function sendIdempotent(
  request: FastifyRequest,
  reply: FastifyReply,
  options: {
    store: IdempotencyStore;
    docsUrl: string;
    schemas: Record<number, z.ZodType>;
    /** For routes whose 200 carries a stored document (stored once, named by the record). */
    storedDocument?: StoredDocumentText;
    run: (record: IdempotencyRecord | null) => Promise<IdempotentResponse>;
  },
) {
  const serialize = (response: IdempotentResponse) => {
    if ('wire' in response) return response.wire.text;
    const schema = options.schemas[response.status];
    if (!schema) throw new Error(`no response schema for status ${response.status}`);
    return serializeThrough(schema, response.body);
  };
  const auth = request.auth!;
  const key = parseIdempotencyKey(request.headers['idempotency-key']);
  if (!key) {
    const response = await options.run(null);
    return sendJson(request, reply, {
      ...response,
      body: serialize(response),
      documentAt: documentAt(response),
    });
  }
  const start = await options.store.begin({
    orgId: auth.org.id,
    mode: auth.mode,
    method: request.method,
    path: request.routeOptions.url ?? request.url,
    key,
    bodyHash: requestBodyHash(request.rawBody),
  });
  if (start.kind === 'replay') {
    const { status, headers, document } = start.response;
    const body = await replayBody(start.response, options.storedDocument);
    return sendJson(request, reply, { status, body, headers, documentAt: document?.at }, true);
  }
  const record = start.record;
  let response: Sending & { headers: Record<string, string> };
  let stored: StoredResponse;
  try {
    const result = await options.run(record);
    response = {
      status: result.status,
      body: serialize(result),
      headers: result.headers ?? {},
      documentAt: documentAt(result),
    };
    stored = storedForm(response, result);
  } catch (error) {
    if (!(error instanceof ApiError)) {
      await options.store.release(record).catch(() => {});
      throw error;
    }
    const body = serializeThrough(
      errorResponseSchema,
      errorBody(error, { requestId: request.id, docsUrl: options.docsUrl }),
    );
    await options.store.complete(record, { status: error.status, headers: {}, body }).catch(() => {});
    throw error;
  }
  // The response is what happened (a delivery charged, a job created): a record that cannot be stored
  // (the store already tried twice) must not turn it into a 503 that says nothing was charged. The key
  // then stays in flight until its lease ends, and a retry continues with the record's job.
  await options.store.complete(record, stored).catch((error: unknown) => {
    request.log.warn({ err: error }, 'idempotency record not completed; answering what happened');
  });
  return sendJson(request, reply, response);
}
