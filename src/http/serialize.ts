// Responses leave through their route's zod schema, so /openapi.json is what the wire carries. Fastify
// does this for bodies a handler returns; these are the bodies sent as bytes (idempotent replays, errors).
import type { z } from 'zod';

/** A body as its schema serialises it: what is sent and, for idempotent routes, stored. */
export function serializeThrough(schema: z.ZodType, body: unknown): string {
  return JSON.stringify(schema.parse(body));
}
