// Responses leave through their route's zod schema, so /openapi.json is what the wire carries. Fastify
// does this for bodies a handler returns (responseSerializerCompiler); serializeThrough does it for the
// bodies sent as bytes (idempotent replays, errors, cached pages).

import fastJson from 'fast-json-stringify';
import type { FastifyReply, FastifySerializerCompiler } from 'fastify';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { documentText, type StoredDocument } from '../engine/stored-document.js';

/** A body as its schema serialises it: what is sent and, for idempotent routes, stored. */
export function serializeThrough(schema: z.ZodType, body: unknown): string {
  return JSON.stringify(schema.parse(body));
}

const schemasWithout = new WeakMap<z.ZodObject, Map<string, z.ZodObject>>();

/** `schema` without `field`, made once per schema and field. */
function schemaWithout(schema: z.ZodObject, field: string): z.ZodObject {
  let byField = schemasWithout.get(schema);
  if (!byField) {
    byField = new Map();
    schemasWithout.set(schema, byField);
  }
  let rest = byField.get(field);
  if (!rest) {
    rest = schema.omit({ [field]: true } as Record<string, true>);
    byField.set(field, rest);
  }
  return rest;
}

/**
 * A body serialised with one field's value spliced in: the text before the value, the value, and the text
 * after it. The value is a stored document (src/engine/stored-document.ts: a gzip body splices its deflate
 * in, document-gzip.ts) or JSON text (a document with a choice of its sections).
 */
export interface SplicedJson {
  head: string;
  document: StoredDocument | string;
  tail: string;
}

/**
 * A body whose last field is JSON that already went through that field's schema (a stored simulation
 * document, docs/decisions.md §6; or a body spliced so, as a batch's result line carries a simulation): the
 * other fields go through `schema` without the field, and the value is spliced in unchanged, so some 70 KB
 * are neither parsed nor serialised per response. The bytes are those `serializeThrough(schema, …)` gives
 * for the parsed value: zod writes an object's fields in the order of its schema, and `field` is the last
 * one `body` has.
 */
export function serializeWithJsonField(
  schema: z.ZodObject,
  field: string,
  body: Record<string, unknown>,
  value: StoredDocument | string | SplicedJson,
): SplicedJson {
  const head = serializeThrough(schemaWithout(schema, field), body);
  const open = head.slice(0, -1);
  const prefix = `${open}${open.length > 1 ? ',' : ''}${JSON.stringify(field)}:`;
  if (typeof value === 'object' && 'head' in value) {
    return { head: `${prefix}${value.head}`, document: value.document, tail: `${value.tail}}` };
  }
  return { head: prefix, document: value, tail: '}' };
}

/** A spliced body's whole text (a stored document inflated). */
export function splicedText({ head, document, tail }: SplicedJson): string {
  return `${head}${typeof document === 'string' ? document : documentText(document)}${tail}`;
}

/**
 * Sends JSON that already went through the route's schema: Fastify sends such a string (or the bytes of
 * it, compressed with their Content-Encoding set: document-gzip.ts) as it is.
 */
export function sendSerialized(reply: FastifyReply, json: string | Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

const compiledSchemas = new WeakSet<z.ZodType>();

/**
 * Marks a response schema of a hot route, sent many times a second with a body built by typed code:
 * its body is written by a serializer compiled once from the schema's JSON Schema (fast-json-stringify,
 * Fastify's own), not checked field by field through zod on each response. The schema stays the one
 * source: the same fields, in the same order, and what /openapi.json documents. A missing field or a
 * value that is not a finite number still fails the response.
 */
export function compiledSerializer<T extends z.ZodType>(schema: T): T {
  compiledSchemas.add(schema);
  return schema;
}

type ZodRoute = Parameters<typeof zodSerializerCompiler>[0];

export const responseSerializerCompiler: FastifySerializerCompiler<z.ZodType> = (route) => {
  if (!compiledSchemas.has(route.schema)) return zodSerializerCompiler(route as ZodRoute);
  const jsonSchema = z.toJSONSchema(route.schema, { io: 'output', target: 'draft-7' });
  return fastJson(jsonSchema as Parameters<typeof fastJson>[0]);
};
