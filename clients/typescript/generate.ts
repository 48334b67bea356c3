// The client's types from the customer OpenAPI document (docs/openapi/openapi.json): openapi-typescript,
// after dropping the schemas' captured examples (a whole simulation) that would only bloat the comments.
// Used by `npm run client:generate` (scripts/openapi.ts) and by the test that fails when the committed
// clients/typescript/src/schema.ts is stale (test/clients/typescript-client.test.ts).
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';

export async function schemaSource(document: unknown): Promise<string> {
  const copy = structuredClone(document) as OpenAPI3 & {
    components: { schemas: Record<string, { examples?: unknown }> };
  };
  for (const schema of Object.values(copy.components.schemas)) delete schema.examples;
  const ast = await openapiTS(copy);
  return `${COMMENT_HEADER}${astToString(ast)}`;
}
