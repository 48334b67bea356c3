// Every response the HTTP tests see is checked against its route in /openapi.json: the status must be
// declared, and a JSON body must validate against that status's schema (docs/ARCHITECTURE.md: one wire
// contract). A response that breaks it fails the test that received it.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { errorResponseSchema } from '../../src/http/schemas/common.js';

/** Routes the service answers outside its public document (operators' probes and the docs themselves). */
const UNDOCUMENTED = new Set(['/healthz', '/readyz', '/metrics', '/docs', '/openapi.json']);

interface Operation {
  responses?: Record<string, { content?: Record<string, unknown> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

const pointer = (...parts: string[]) =>
  parts.map((part) => encodeURIComponent(part.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/');

export class WireContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly templates: Array<{ template: string; pattern: RegExp }>;

  constructor(private readonly document: OpenApiDocument) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema(document as object, 'openapi.json');
    this.templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
  }

  /** Throws when the response breaks the document; returns the route template it matched, if any. */
  check(method: string, url: string, response: LightMyRequestResponse): string | null {
    const path = url.split('?')[0]!;
    if (UNDOCUMENTED.has(path)) return null;
    // A static path wins over a template with a parameter, as the router decides
    // (/v1/simulations/jobs is the list, not the simulation `jobs`).
    const template =
      this.templates.find((t) => t.template === path)?.template ??
      this.templates.find((t) => t.pattern.test(path))?.template;
    const operation = template ? this.document.paths[template]?.[method.toLowerCase()] : undefined;
    const status = String(response.statusCode);
    if (!template || !operation) {
      // No such route: the answer is the error object.
      this.expectErrorBody(method, url, response);
      return null;
    }
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
    const ref = `openapi.json#/${pointer('paths', template, method.toLowerCase(), 'responses', key, 'content', mediaType, 'schema')}`;
    const validate = this.ajv.getSchema(ref) ?? this.ajv.compile({ $ref: ref });
    // NDJSON (the batch results stream): every line is one document of the declared schema.
    const documents =
      mediaType === 'application/x-ndjson'
        ? response.body.split('\n').flatMap((line) => (line === '' ? [] : [JSON.parse(line)]))
        : [response.json()];
    for (const document of documents) {
      if (!validate(document)) {
        const errors = this.ajv.errorsText(validate.errors, { dataVar: 'body' });
        throw new Error(`${method} ${template} ${status} breaks its OpenAPI schema: ${errors}`);
      }
    }
    return template;
  }

  private expectErrorBody(method: string, url: string, response: LightMyRequestResponse) {
    const parsed = errorResponseSchema.safeParse(response.json());
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
