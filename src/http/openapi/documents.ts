// The two OpenAPI documents (docs/api.md §4, docs/decisions.md §8): the customer API at /openapi.json and
// the operators' admin API at /admin/openapi.json. @fastify/swagger builds one document from the routes'
// zod schemas (named ones become components, src/http/schemas/registry.ts); this module finishes it: it
// adds every route's error responses from the one table of codes (src/errors.ts) with an example per
// code, the Request-Id and Retry-After headers, a real response as the example of each named response
// schema (examples.json, `npm run client:generate`), splits customer and admin paths, and keeps in each
// document only the components it uses. Response objects are documented open (no
// `additionalProperties: false`): fields may be added (docs/api.md §9).
import type { FastifyContextConfig } from 'fastify';
import { ApiError, ERRORS, type ErrorCode, errorBody } from '../../errors.js';
import type { App } from '../app-types.js';
import { notModifiedResponse } from '../schemas/common.js';
import { codesByStatus, routeErrorCodes } from './route-errors.js';

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI documents are JSON trees walked generically.
type Json = any;

export interface DocumentedRoute {
  method: string;
  /** The OpenAPI path: `/v1/fixtures/{fixture_id}/squads`. */
  path: string;
  codes: ErrorCode[];
}

export interface OpenApiDocuments {
  customer: Json;
  admin: Json;
}

/** Real responses captured from a running service, by the component name of their schema. */
export type CapturedExamples = Record<string, unknown>;

const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Records each documented route's error codes as it is added; call before any route is registered. */
export function recordDocumentedRoutes(app: App): DocumentedRoute[] {
  const routes: DocumentedRoute[] = [];
  app.addHook('onRoute', (route) => {
    const schema = route.schema as {
      hide?: boolean;
      body?: unknown;
      querystring?: unknown;
      params?: unknown;
    };
    if (!schema || schema.hide) return;
    const takesInput = Boolean(schema.body || schema.querystring || schema.params);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      const config = (route.config ?? {}) as FastifyContextConfig;
      routes.push({
        method: method.toLowerCase(),
        path: openApiPath(route.url),
        codes: routeErrorCodes(config, takesInput, ['POST', 'PATCH', 'PUT'].includes(method)),
      });
    }
  });
  return routes;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthenticated',
  402: 'Payment required',
  403: 'Forbidden',
  404: 'Not found',
  408: 'Request timeout',
  409: 'Conflict',
  429: 'Too many requests',
  431: 'Headers too large',
  500: 'Internal error',
  502: 'Bad gateway',
  503: 'Unavailable',
};

const REQUEST_ID = { $ref: '#/components/headers/RequestId' };
const RETRY_AFTER = { $ref: '#/components/headers/RetryAfter' };

/** An example error body per code, made by the function that makes real ones (src/errors.ts). */
export function errorExample(code: ErrorCode, docsUrl: string) {
  return errorBody(new ApiError(code), { requestId: 'req_3Yd9kQm2TfW8xLpA0cVb7nZe', docsUrl });
}

/** One example error object per code, referenced by every response that can carry the code. */
function errorExamples(docsUrl: string): Record<string, Json> {
  return Object.fromEntries(
    (Object.keys(ERRORS) as ErrorCode[]).map((code) => [
      code,
      { summary: ERRORS[code].message, value: errorExample(code, docsUrl) },
    ]),
  );
}

function errorResponse(status: number, codes: ErrorCode[], docsUrl: string): Json {
  const list = codes.map((code) => `[\`${code}\`](${docsUrl}#${code})`).join(', ');
  return {
    description: `${STATUS_TEXT[status] ?? 'Error'}. Codes: ${list}.`,
    headers:
      status === 429 || status === 503
        ? { 'Request-Id': REQUEST_ID, 'Retry-After': RETRY_AFTER }
        : { 'Request-Id': REQUEST_ID },
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        examples: Object.fromEntries(codes.map((code) => [code, { $ref: `#/components/examples/${code}` }])),
      },
    },
  };
}

/** Deletes `additionalProperties: false` in a response schema: response objects may gain fields. */
function openUp(schema: Json): void {
  if (Array.isArray(schema)) {
    for (const item of schema) openUp(item);
    return;
  }
  if (schema === null || typeof schema !== 'object') return;
  if (schema.additionalProperties === false) delete schema.additionalProperties;
  for (const value of Object.values(schema)) openUp(value);
}

/** The description of a success response: its named schema's, since a `$ref` hides it from @fastify/swagger. */
function describedBy(media: Json, schemas: Record<string, Json>): string | undefined {
  const ref = media?.schema?.$ref;
  return typeof ref === 'string' ? schemas[ref.split('/').pop()!]?.description : undefined;
}

function finishOperation(
  operation: Json,
  route: DocumentedRoute | undefined,
  docsUrl: string,
  schemas: Record<string, Json>,
) {
  for (const [status, response] of Object.entries(operation.responses ?? {}) as [string, Json][]) {
    response.headers = { 'Request-Id': REQUEST_ID, ...response.headers };
    // A response without content (a null schema) loses its description on the way through @fastify/swagger.
    if (status === '304') response.description = notModifiedResponse.description;
    const media = response.content?.['application/json'];
    if (!media) continue;
    if (response.description === 'Default Response')
      response.description = describedBy(media, schemas) ?? 'Success';
    openUp(media.schema);
  }
  for (const [status, codes] of codesByStatus(route?.codes ?? [])) {
    operation.responses[String(status)] = errorResponse(status, codes, docsUrl);
  }
}

const HEADERS = {
  RequestId: {
    description: 'The id of this request; quote it to support. Equals `error.request_id`.',
    schema: { type: 'string' },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying; on every 429 and on 503s with retry advice.',
    schema: { type: 'integer', minimum: 0 },
  },
};

/** Every `$ref` under `node`, as component keys `schemas/Name` or `headers/Name`. */
function collectRefs(node: Json, into: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) collectRefs(item, into);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  if (typeof node.$ref === 'string' && node.$ref.startsWith('#/components/')) {
    into.add(node.$ref.slice('#/components/'.length));
  }
  for (const value of Object.values(node)) collectRefs(value, into);
}

/** The components `paths` reach, directly or through other components. */
function reachableComponents(paths: Json, components: Json): Set<string> {
  const reached = new Set<string>();
  collectRefs(paths, reached);
  let size = -1;
  while (size !== reached.size) {
    size = reached.size;
    for (const key of [...reached]) {
      const [kind, name] = key.split('/') as [string, string];
      collectRefs(components[kind]?.[name], reached);
    }
  }
  return reached;
}

/** The document of the paths `keep` selects, with only the components they use, request names without `Input`. */
function subset(full: Json, keep: (path: string) => boolean, head: Json, docsUrl: string): Json {
  const paths = Object.fromEntries(Object.entries(full.paths ?? {}).filter(([path]) => keep(path)));
  const all: Record<string, Record<string, Json>> = {
    schemas: full.components?.schemas ?? {},
    headers: HEADERS,
    examples: errorExamples(docsUrl),
  };
  const used = reachableComponents(paths, all);
  const components: Record<string, Record<string, Json>> = { schemas: {}, headers: {}, examples: {} };
  for (const key of [...used].sort()) {
    const [kind, name] = key.split('/') as [string, string];
    components[kind]![name] = all[kind]![name];
  }
  const schemas = components.schemas!;
  let text = JSON.stringify({ ...head, paths, components: { ...head.components, ...components } });
  for (const name of Object.keys(schemas)) {
    const bare = name.replace(/Input$/, '');
    if (bare === name || schemas[bare]) continue;
    text = text.replaceAll(`"#/components/schemas/${name}"`, `"#/components/schemas/${bare}"`);
    text = text.replace(`"${name}":{`, `"${bare}":{`);
  }
  return JSON.parse(text);
}

export interface DocumentOptions {
  baseUrl: string;
  docsUrl: string;
  version: string;
  examples: CapturedExamples;
}

/** What a document's head says of itself; the rest of the head is the same for both documents. */
interface HeadText {
  title: string;
  description: string;
  tags: Json[];
  /** The one bearer scheme every operation of the document needs. */
  scheme: { name: string; description: string };
}

function documentHead(options: DocumentOptions, { title, description, tags, scheme }: HeadText): Json {
  return {
    openapi: '3.1.0',
    info: { title, version: options.version, description },
    servers: [{ url: options.baseUrl }],
    security: [{ [scheme.name]: [] }],
    tags,
    components: {
      securitySchemes: {
        [scheme.name]: { type: 'http', scheme: 'bearer', description: scheme.description },
      },
    },
  };
}

function customerHead(options: DocumentOptions): Json {
  return documentHead(options, {
    title: 'matchsim API',
    description:
      'Credit-metered football match simulation. Every request carries `Authorization: Bearer <API key>`; ' +
      // In backticks: Markdown would take a bare <code> for an HTML tag and show nothing.
      `every error is the Error object, and each code has an entry at \`${options.docsUrl}#<code>\` ` +
      `(${options.docsUrl}#balance_too_low, for one). ` +
      'Objects may gain fields and enums documented as open may gain values: tolerate both.',
    tags: [
      { name: 'credits', description: 'The balance, plan tier and limits of the organisation.' },
      { name: 'fixtures', description: 'Fixture discovery, squads and expected lineups.' },
      { name: 'simulations', description: 'Quotes, runs, jobs and batches.' },
      { name: 'odds', description: "Bookmakers' odds read as probabilities, the margin taken out." },
      { name: 'webhooks', description: 'Signed events sent to your endpoints, and the events list.' },
    ],
    scheme: {
      name: 'ApiKeyAuth',
      description: 'An API key: `ms_live_…` (charged) or `ms_test_…` (test mode, never charged).',
    },
  });
}

function adminHead(options: DocumentOptions): Json {
  return documentHead(options, {
    title: 'matchsim admin API',
    description:
      "Operators' API (docs/decisions.md §8): organisations, keys, top-ups and feed loads. It exists only " +
      'when ADMIN_TOKEN is set; every path answers 404 otherwise.',
    tags: [{ name: 'admin', description: 'Operator actions; the CLI offers the same.' }],
    scheme: { name: 'AdminToken', description: 'Authorization: Bearer <ADMIN_TOKEN>.' },
  });
}

/** Finishes the document @fastify/swagger built and splits it into the customer and the admin document. */
export function buildDocuments(
  generated: Json,
  routes: DocumentedRoute[],
  options: DocumentOptions,
): OpenApiDocuments {
  const full = structuredClone(generated);
  for (const [path, methods] of Object.entries(full.paths ?? {}) as Array<[string, Json]>) {
    for (const [method, operation] of Object.entries(methods) as Array<[string, Json]>) {
      const route = routes.find((r) => r.path === path && r.method === method);
      finishOperation(operation, route, options.docsUrl, full.components?.schemas ?? {});
    }
  }
  for (const [name, schema] of Object.entries(full.components?.schemas ?? {}) as Array<[string, Json]>) {
    if (name.endsWith('Input')) continue;
    openUp(schema);
    if (options.examples[name] !== undefined) schema.examples = [options.examples[name]];
  }
  const isAdmin = (path: string) => path.startsWith('/admin/');
  return {
    customer: subset(full, (path) => !isAdmin(path), customerHead(options), options.docsUrl),
    admin: subset(full, isAdmin, adminHead(options), options.docsUrl),
  };
}
