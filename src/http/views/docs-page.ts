// The /docs page, rendered on the server: the start (authentication, the documents, the curl tour) and
// the error-code reference, one entry per code of src/errors.ts under the anchor `#<code>`, so that every
// `error.doc_url` lands on its entry without JavaScript. The endpoint reference is drawn by Scalar from
// /openapi.json at /docs/reference (src/http/routes/docs.ts), served from this service.
import { ERRORS, type ErrorDefinition, errorType } from '../../errors.js';
import { curlTour } from './curl-tour.js';

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** Escapes, then shows Markdown `code` spans as <code>. */
const inline = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

function renderErrorCode(code: string, definition: ErrorDefinition): string {
  const retry = definition.retryable ? `yes, <code>${definition.strategy}</code>` : 'no';
  return `<article class="code" id="${code}">
<h3><a href="#${code}"><code>${code}</code></a> <span class="status">${definition.status} · ${errorType(definition.status)}</span></h3>
<p>${inline(definition.message)}</p>
<p><strong>What to do:</strong> ${inline(definition.fix)}</p>
<dl><dt>Retry</dt><dd>${retry}</dd><dt>Idempotency-Key on retry</dt><dd><code>${definition.idempotencyKey}</code></dd>
<dt>Credits</dt><dd><code>${definition.creditEffect}</code></dd></dl>
</article>`;
}

interface DocumentLike {
  info: { title: string; version: string };
  paths: Record<
    string,
    Record<string, { summary?: string; operationId?: string; responses?: Record<string, unknown> }>
  >;
}

/**
 * The operations, each marked when it charges or holds credits: those that can answer 402 (a balance or
 * spending cap too low for what they would take), which the route's own list of errors decides.
 */
function renderOperations(document: DocumentLike): string {
  return Object.entries(document.paths)
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => {
        const charged =
          operation.responses && '402' in operation.responses
            ? ' <span class="charged">charges credits (live keys)</span>'
            : '';
        return `<li id="op-${escapeHtml(operation.operationId ?? '')}"><a href="/docs/reference/"><code>${method.toUpperCase()} ${escapeHtml(path)}</code></a> ${inline(operation.summary ?? '')}${charged}</li>`;
      }),
    )
    .join('\n');
}

const STYLE = `*{box-sizing:border-box}body{font:16px/1.55 system-ui,sans-serif;margin:0;color:#1c1c1c;background:#fff}
main{max-width:60rem;margin:0 auto;padding:1rem 1.25rem 4rem}header{background:#0b3d2e;color:#fff;padding:1rem 1.25rem}
header a{color:#d7f5e6}nav a{margin-right:1rem}h1{margin:.2rem 0}code{background:#f1f3f2;padding:0 .25rem;border-radius:3px;overflow-wrap:anywhere}
pre{background:#0f1f19;color:#e8f3ee;padding:.75rem;overflow-x:auto;border-radius:6px;white-space:pre-wrap;word-break:break-all}
pre code{background:none;padding:0}.code{border-top:1px solid #ddd;padding:.5rem 0}.code h3{margin:.3rem 0;font-size:1.05rem}
.status{font-weight:normal;color:#555;font-size:.9rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:0 1rem;margin:.3rem 0}
dt{color:#555}dd{margin:0}.charged{font-size:.85rem;color:#7a4a00;background:#fff3d6;padding:0 .3rem;border-radius:3px}.code:target{background:#fff6cc;outline:3px solid #e6b800}a{color:#075e43}`;

export function renderDocsPage(document: DocumentLike, docsUrl: string): string {
  const baseUrl = docsUrl.replace(/\/docs$/, '');
  const tour = curlTour(baseUrl)
    .map(
      (step) =>
        `<section><h3>${escapeHtml(step.title)}</h3><p>${inline(step.note)}</p><pre><code>${escapeHtml(step.command)}</code></pre></section>`,
    )
    .join('\n');
  const codes = Object.entries(ERRORS)
    .map(([code, definition]) => renderErrorCode(code, definition))
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(document.info.title)} ${escapeHtml(document.info.version)}</title><style>${STYLE}</style></head><body>
<header><h1>${escapeHtml(document.info.title)} ${escapeHtml(document.info.version)}</h1>
<nav><a href="/docs/reference/">Endpoint reference</a><a href="#tour">curl tour</a><a href="#errors">Error codes</a><a href="/playground">Playground</a><a href="/openapi.json">openapi.json</a></nav></header>
<main>
<p>Every request carries <code>Authorization: Bearer &lt;API key&gt;</code>: <code>ms_live_…</code> keys are charged,
<code>ms_test_…</code> keys never are. Every response carries a <code>Request-Id</code> header; every error is the
<a href="#errors">error object</a>. The machine-readable description is <a href="/openapi.json">/openapi.json</a>
(OpenAPI 3.1; operators: <a href="/admin/openapi.json">/admin/openapi.json</a>); a typed TypeScript client is in
<code>clients/typescript</code> of the repository.</p>
<h2 id="endpoints">Endpoints</h2><ul>${renderOperations(document)}</ul>
<h2 id="tour">curl tour</h2><p>Set <code>MATCHSIM_KEY</code> to an API key first (the demo's live key after a first <code>npm start</code>), then paste the steps in order into one shell: later steps use the variables earlier ones set.</p>${tour}
<h2 id="errors">Error codes</h2>
<p>Errors answer <code>{"error": {type, code, message, fix, param, doc_url, request_id, retry, credit_effect, recovery}}</code>.
Every 429 carries <code>Retry-After</code>. The list can gain codes: tolerate unknown ones.</p>
${codes}
</main></body></html>`;
}
