// The named wire schemas: a schema added here becomes `#/components/schemas/<id>` in the OpenAPI
// documents and every use of it a `$ref` (src/http/openapi/documents.ts). Request schemas are named
// too; the document drops the `Input` suffix the zod provider gives them when no response shares the name.
import { z } from 'zod';

export const wireSchemas = z.registry<{ id: string; description?: string }>();

/** Registers `schema` under the component name `id` and returns it. */
export function named<T extends z.ZodType>(id: string, schema: T): T {
  wireSchemas.add(schema, { id });
  return schema;
}

/**
 * A string enum that may gain values (docs/api.md §9): documented as `anyOf: [enum, string]` so that a
 * generated client keeps the known values and does not break on a new one.
 */
export function openEnum<const T extends readonly [string, ...string[]]>(values: T, what: string) {
  return z
    .union([z.enum(values), z.string()])
    .describe(
      `${what} Known values: ${values.join(', ')}; the list may gain values, so tolerate unknown ones.`,
    );
}
