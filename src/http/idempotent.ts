// Idempotency-Key on the routes that create jobs (docs/decisions.md §7): replay the first response
// byte for byte, refuse conflicts, and let a retry resume what the first attempt created. The records
// live in src/idempotency/store.ts; this module reads the header and stores the bytes that were sent.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ownerOf } from '../accounts/caller.js';
import type { StoredDocument } from '../engine/stored-document.js';
import { ApiError, errorBody } from '../errors.js';
import type { IdempotencyRecord, StoredResponse } from '../idempotency/store.js';
import type { AppDeps } from './app-types.js';
import { sendDocumentBody } from './document-gzip.js';
import { errorResponseSchema } from './schemas/common.js';
import { type SplicedJson, sendSerialized, serializeThrough, splicedText } from './serialize.js';

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
  /** Serialised text, or a body that carries a stored document. */
  body: string | SplicedJson;
  headers?: Record<string, string> | undefined;
}

function sendJson(request: FastifyRequest, reply: FastifyReply, response: Sending, replayed = false) {
  for (const [name, value] of Object.entries(response.headers ?? {})) reply.header(name, value);
  if (replayed) reply.header('Idempotent-Replayed', 'true');
  reply.code(response.status);
  // A body that carries a stored document leaves gzip from its stored form (document-gzip.ts).
  if (typeof response.body !== 'string') return sendDocumentBody(request, reply, response.body);
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
 * A 200 already serialised around a stored result's document (a simulation's last field): the record
 * names the result instead of copying the document.
 */
interface DocumentResponse {
  status: number;
  wire: SplicedJson;
  documentResultId: number;
  headers?: Record<string, string>;
}

export type IdempotentResponse = BodyResponse | DocumentResponse;

/** A stored result's document, for replays whose record names it. */
export type StoredDocumentOf = (resultId: number) => Promise<StoredDocument>;

/**
 * The record of a response: a body around a stored document without it, and where it goes back; a
 * body around text (a choice of sections) as its whole text.
 */
function storedForm(
  response: { status: number; body: string | SplicedJson; headers: Record<string, string> },
  sent: IdempotentResponse,
): StoredResponse {
  const { body } = response;
  if (typeof body === 'string') return { ...response, body };
  if (!('wire' in sent) || typeof body.document === 'string') return { ...response, body: splicedText(body) };
  return {
    ...response,
    body: body.head + body.tail,
    document: { resultId: sent.documentResultId, at: body.head.length },
  };
}

/** The body first sent: a named document put back where it was. */
async function replayBody(
  response: StoredResponse,
  storedDocument: StoredDocumentOf | undefined,
): Promise<string | SplicedJson> {
  if (!response.document) return response.body;
  if (!storedDocument) throw new Error('a stored response names a document this route cannot read');
  const document = await storedDocument(response.document.resultId);
  const { at } = response.document;
  return { head: response.body.slice(0, at), document, tail: response.body.slice(at) };
}

/**
 * Runs `run` once per Idempotency-Key (or plainly without one) and sends its response through the
 * schema of its status. An ApiError is stored as its error body when storable, then thrown on to the
 * error handler, which answers it the same way.
 */
export async function sendIdempotent(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: AppDeps,
  options: {
    schemas: Record<number, z.ZodType>;
    /** For routes whose 200 carries a stored document (stored once, named by the record). */
    storedDocument?: StoredDocumentOf;
    run: (record: IdempotencyRecord | null) => Promise<IdempotentResponse>;
  },
) {
  const serialize = (response: IdempotentResponse): string | SplicedJson => {
    if ('wire' in response) return response.wire;
    const schema = options.schemas[response.status];
    if (!schema) throw new Error(`no response schema for status ${response.status}`);
    return serializeThrough(schema, response.body);
  };
  const store = deps.services.idempotency;
  const key = parseIdempotencyKey(request.headers['idempotency-key']);
  if (!key) {
    const response = await options.run(null);
    return sendJson(request, reply, { ...response, body: serialize(response) });
  }
  const start = await store.begin({
    ...ownerOf(request.auth!),
    method: request.method,
    path: request.routeOptions.url ?? request.url,
    key,
    bodyHash: requestBodyHash(request.rawBody),
  });
  if (start.kind === 'replay') {
    const { status, headers } = start.response;
    const body = await replayBody(start.response, options.storedDocument);
    return sendJson(request, reply, { status, body, headers }, true);
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
    };
    stored = storedForm(response, result);
  } catch (error) {
    if (!(error instanceof ApiError)) {
      await store.release(record).catch(() => {});
      throw error;
    }
    const body = serializeThrough(
      errorResponseSchema,
      errorBody(error, { requestId: request.id, docsUrl: deps.config.docsUrl }),
    );
    await store.complete(record, { status: error.status, headers: {}, body }).catch(() => {});
    throw error;
  }
  // The response is what happened (a delivery charged, a job created): a record that cannot be stored
  // (the store already tried twice) must not turn it into a 503 that says nothing was charged. The key
  // then stays in flight until its lease ends, and a retry continues with the record's job.
  await store.complete(record, stored).catch((error: unknown) => {
    request.log.warn({ err: error }, 'idempotency record not completed; answering what happened');
  });
  return sendJson(request, reply, response);
}
