// GET /openapi.json (generated from the zod schemas) and GET /docs: one HTML page that documents every
// endpoint and every error code, each code under an anchor `#<code>` so that error.doc_url lands on it.
import { ERRORS, type ErrorDefinition, errorType } from '../../errors.js';
import type { App, AppDeps } from '../app-types.js';

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

interface OpenApiOperation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Array<{
    name: string;
    in: string;
    required?: boolean;
    description?: string;
    schema?: unknown;
  }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string }>;
}

function renderOperation(method: string, path: string, operation: OpenApiOperation): string {
  const id = `${method}-${path}`.replace(/[^a-zA-Z0-9]+/g, '-');
  const parameters = (operation.parameters ?? [])
    .map(
      (p) =>
        `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : 'no'}</td>` +
        `<td><code>${escapeHtml(JSON.stringify(p.schema ?? {}))}</code></td></tr>`,
    )
    .join('');
  const body = operation.requestBody?.content?.['application/json']?.schema;
  const responses = Object.entries(operation.responses ?? {})
    .map(([status, response]) => `<li><code>${status}</code> ${escapeHtml(response.description ?? '')}</li>`)
    .join('');
  return `<section id="${id}"><h3><code>${method.toUpperCase()} ${escapeHtml(path)}</code></h3>
<p>${escapeHtml(operation.summary ?? '')}</p>${operation.description ? `<p>${escapeHtml(operation.description)}</p>` : ''}
${parameters ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th></tr>${parameters}</table>` : ''}
${body ? `<details><summary>Request body schema</summary><pre>${escapeHtml(JSON.stringify(body, null, 2))}</pre></details>` : ''}
${responses ? `<ul>${responses}</ul>` : ''}</section>`;
}

function renderErrorCode(code: string, definition: ErrorDefinition): string {
  return `<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${definition.status}</td>
<td><code>${errorType(definition.status)}</code></td><td>${escapeHtml(definition.message)}</td>
<td>${escapeHtml(definition.fix)}</td><td>${definition.retryable ? 'yes' : 'no'}, <code>${definition.strategy}</code>,
key <code>${definition.idempotencyKey}</code></td><td><code>${definition.creditEffect}</code></td></tr>`;
}

function renderDocsPage(openapi: { paths?: Record<string, Record<string, OpenApiOperation>> }): string {
  const operations = Object.entries(openapi.paths ?? {})
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => renderOperation(method, path, operation)),
    )
    .join('\n');
  const codes = Object.entries(ERRORS)
    .map(([code, definition]) => renderErrorCode(code, definition))
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>matchsim API 2.0.0</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.3rem;vertical-align:top;text-align:left}
code{background:#f4f4f4;padding:0 .2rem}pre{background:#f4f4f4;padding:.5rem;overflow:auto}tr:target{background:#fff3b0}</style>
</head><body><h1>matchsim API 2.0.0</h1>
<p>Every request carries <code>Authorization: Bearer &lt;API key&gt;</code> (security scheme <code>ApiKeyAuth</code>).
The machine-readable description is <a href="/openapi.json">/openapi.json</a>.</p>
<h2 id="endpoints">Endpoints</h2>${operations}
<h2 id="errors">Error codes</h2>
<p>Errors answer <code>{"error": {type, code, message, fix, param, doc_url, request_id, retry, credit_effect, recovery}}</code>.
Every response carries a <code>Request-Id</code> header; every 429 carries <code>Retry-After</code>. The list can gain codes: tolerate unknown ones.</p>
<table><tr><th>code</th><th>status</th><th>type</th><th>meaning</th><th>what to do</th><th>retry</th><th>credit effect</th></tr>
${codes}</table></body></html>`;
}

export function registerDocsRoutes(app: App, _deps: AppDeps) {
  let page: string | null = null;
  app.get(
    '/openapi.json',
    { config: { access: 'public' }, schema: { hide: true } },
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(app.swagger()),
  );
  app.get('/docs', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
    page ??= renderDocsPage(app.swagger() as Parameters<typeof renderDocsPage>[0]);
    return reply.type('text/html; charset=utf-8').send(page);
  });
}
