// Every response the HTTP tests see is checked against its route in /openapi.json: the status must be
// declared, and a JSON body must validate against that status's schema (docs/ARCHITECTURE.md: one wire
// contract). A response that breaks it fails the test that received it.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { errorResponseSchema } from '../../src/http/schemas/common.js';

/** Routes the service answers outside its public document (operators' probes and the docs themselves). */
const UNDOCUMENTED = new Set([
  '/healthz',
  '/readyz',
  '/metrics',
  '/docs',
  '/openapi.json',
  '/admin/openapi.json',
  '/playground',
]);
/** The pages under /docs/ (the Scalar references and their script) and the playground's assets. */
const UNDOCUMENTED_PREFIXES = ['/docs/', '/playground/'];

interface Operation {
  responses?: Record<string, { content?: Record<string, unknown> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

const pointer = (...parts: string[]) =>
  parts.map((part) => encodeURIComponent(part.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/');

/** The body as text, decompressed first when the response was sent with a Content-Encoding. */
export function decodedText(response: LightMyRequestResponse): string {
  const encoding = response.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(response.rawPayload).toString('utf8');
  if (encoding === 'gzip') return gunzipSync(response.rawPayload).toString('utf8');
  return response.body;
}

/** The body as JSON, decompressed first when the response was sent with a Content-Encoding. */
export function decodedJson(response: LightMyRequestResponse): unknown {
  return JSON.parse(decodedText(response));
}

/**
 * The path with its dot segments resolved as a URL parser (and so inject) resolves them:
 * `/v1/fixtures/./squads` reaches no route, it is not the squads of fixture `.`.
 */
function withoutDotSegments(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    const plain = segment.toLowerCase().replaceAll('%2e', '.');
    if (plain === '.') continue;
    if (plain === '..') {
      if (segments.length > 1) segments.pop();
      continue;
    }
    segments.push(segment);
  }
  return segments.join('/') || '/';
}

export class WireContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly templates: Array<{
    template: string;
    pattern: RegExp;
    id: string;
    document: OpenApiDocument;
  }> = [];

  /** The customer document (/openapi.json) and, where tests call them, the admin one (/admin/openapi.json). */
  constructor(...documents: OpenApiDocument[]) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    documents.forEach((document, index) => {
      const id = `openapi-${index}.json`;
      this.ajv.addSchema(document as object, id);
      for (const template of Object.keys(document.paths)) {
        const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
        this.templates.push({ template, pattern, id, document });
      }
    });
  }

  /** Throws when the response breaks the document; returns the route template it matched, if any. */
  check(method: string, url: string, response: LightMyRequestResponse): string | null {
    const path = withoutDotSegments(url.split('?')[0]!);
    if (UNDOCUMENTED.has(path) || UNDOCUMENTED_PREFIXES.some((prefix) => path.startsWith(prefix)))
      return null;
    // A static path wins over a template with a parameter, as the router decides
    // (/v1/simulations/jobs is the list, not the simulation `jobs`).
    const routes = this.templates.filter((t) => t.document.paths[t.template]?.[method.toLowerCase()]);
    const found = routes.find((t) => t.template === path) ?? routes.find((t) => t.pattern.test(path));
    const operation = found?.document.paths[found.template]?.[method.toLowerCase()];
    const status = String(response.statusCode);
    if (!found || !operation) {
      // No such route: the answer is the error object.
      this.expectErrorBody(method, url, response);
      return null;
    }
    const { template } = found;
    const key = [status, `${status[0]}XX`, 'default'].find((k) => operation.responses?.[k]);
    if (!key) throw new Error(`${method} ${template} answered ${status}, which its OpenAPI does not declare`);
    const content = operation.responses![key]!.content;
    if (!content) return template;
    const type = String(response.headers['content-type'] ?? '');
    const mediaType = Object.keys(content).find((declared) => type.startsWith(declared));
    if (!mediaType) {
      const declared = Object.keys(content).map((name) => (name === 'application/json' ? 'JSON' : name));
      throw new Error(
        `${method} ${template} ${status} sent ${type}, its OpenAPI declares ${declared.join(', ')}`,
      );
    }
    const ref = `${found.id}#/${pointer('paths', template, method.toLowerCase(), 'responses', key, 'content', mediaType, 'schema')}`;
    const validate = this.ajv.getSchema(ref) ?? this.ajv.compile({ $ref: ref });
    // NDJSON (the batch results stream): every line is one document of the declared schema.
    const text = decodedText(response);
    const documents =
      mediaType === 'application/x-ndjson'
        ? text.split('\n').flatMap((line) => (line === '' ? [] : [JSON.parse(line)]))
        : [JSON.parse(text)];
    for (const document of documents) {
      if (!validate(document)) {
        const errors = this.ajv.errorsText(validate.errors, { dataVar: 'body' });
        throw new Error(`${method} ${template} ${status} breaks its OpenAPI schema: ${errors}`);
      }
    }
    // An error's code must be one its route documents for that status (src/http/openapi/route-errors.ts).
    const examples = (content['application/json'] as { examples?: Record<string, unknown> } | undefined)
      ?.examples;
    const code = (documents[0] as { error?: { code?: string } } | undefined)?.error?.code;
    if (response.statusCode >= 400 && code && !examples?.[code]) {
      throw new Error(`${method} ${template} answered ${status} ${code}, which its OpenAPI does not list`);
    }
    return template;
  }

  private expectErrorBody(method: string, url: string, response: LightMyRequestResponse) {
    const parsed = errorResponseSchema.safeParse(decodedJson(response));
    if (!parsed.success) throw new Error(`${method} ${url} (no such route) did not answer the error object`);
  }
}

/** Wraps `inject` so that every response is checked against the contract before the test sees it. */
export function checkedInject<T extends { inject(options: InjectOptions): Promise<LightMyRequestResponse> }>(
  app: T,
  contract: () => WireContract,
): T['inject'] {
  const inject = app.inject.bind(app);
  return (async (options: InjectOptions | string) => {
    const request = typeof options === 'string' ? { method: 'GET' as const, url: options } : options;
    const response = await inject(request);
    contract().check(String(request.method ?? 'GET'), String(request.url ?? request.path ?? '/'), response);
    return response;
  }) as T['inject'];
}
