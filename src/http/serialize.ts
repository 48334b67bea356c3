// Responses leave through their route's zod schema, so /openapi.json is what the wire carries. Fastify
// does this for bodies a handler returns; these are the bodies sent as bytes (idempotent replays, errors,
// cached pages).
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';

/** A body as its schema serialises it: what is sent and, for idempotent routes, stored. */
export function serializeThrough(schema: z.ZodType, body: unknown): string {
  return JSON.stringify(schema.parse(body));
}

/** Sends JSON that already went through the route's schema: Fastify sends such a string as it is. */
export function sendSerialized(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}
