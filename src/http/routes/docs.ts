// GET /openapi.json (the customer API), GET /admin/openapi.json (the operators' API), GET /docs (the
// server-rendered start page and error-code reference, src/http/views/docs-page.ts) and the endpoint
// references drawn by Scalar from the two documents at /docs/reference/ and /docs/admin/, its script served
// by this service (no CDN, no web fonts). The documents are built once (src/http/openapi/documents.ts).
import scalar from '@scalar/fastify-api-reference';
import type { App, AppDeps } from '../app-types.js';
import {
  buildDocuments,
  type CapturedExamples,
  type DocumentedRoute,
  type OpenApiDocuments,
} from '../openapi/documents.js';
import examples from '../openapi/examples.json' with { type: 'json' };
import { renderDocsPage } from '../views/docs-page.js';

export const API_VERSION = '2.0.0';

export function registerDocsRoutes(app: App, deps: AppDeps, routes: DocumentedRoute[]) {
  let documents: OpenApiDocuments | null = null;
  let page: string | null = null;
  const built = () => {
    documents ??= buildDocuments(app.swagger(), routes, {
      baseUrl: deps.config.baseUrl,
      docsUrl: deps.config.docsUrl,
      version: API_VERSION,
      examples: examples as CapturedExamples,
    });
    return documents;
  };
  const json = 'application/json; charset=utf-8';
  app.get(
    '/openapi.json',
    { config: { access: 'public' }, schema: { hide: true } },
    async (_request, reply) => reply.type(json).send(built().customer),
  );
  app.get(
    '/admin/openapi.json',
    { config: { access: 'public' }, schema: { hide: true } },
    async (_request, reply) => reply.type(json).send(built().admin),
  );
  registerReference(app, '/docs/reference', '/openapi.json', 'matchsim API reference');
  registerReference(app, '/docs/admin', '/admin/openapi.json', 'matchsim admin API reference');
  app.get('/docs', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
    page ??= renderDocsPage(built().customer, deps.config.docsUrl);
    return reply.type('text/html; charset=utf-8').send(page);
  });
}

/**
 * The authentication box's header holds "Authentication", its "Required" mark and the scheme picker
 * ("Selected Auth Type: ApiKeyAuth"), which takes the full width and covered "Required" in the
 * reference's right-hand column. Let the header wrap so that the picker goes to its own line.
 */
const AUTH_BOX_CSS = `
.rounded-t-xl:has(.group\\/combobox-button) { flex-wrap: wrap; }
.rounded-t-xl:has(.group\\/combobox-button) > button { flex: 1 0 auto; max-height: none; }
.rounded-t-xl:has(.group\\/combobox-button) > div { padding: 0 0.5rem 0.25rem; }
`;

/** A Scalar reference page of one document; everything it loads comes from this service. */
function registerReference(app: App, routePrefix: `/${string}`, documentUrl: string, pageTitle: string) {
  app.register(scalar, {
    routePrefix,
    configuration: {
      url: documentUrl,
      pageTitle,
      withDefaultFonts: false,
      hideClientButton: true,
      hideDarkModeToggle: true,
      showDeveloperTools: 'never',
      telemetry: false,
      // "Ask AI" and "Generate MCP" call Scalar's hosted services, which this self-contained page never
      // reaches: without these the buttons would lead nowhere.
      agent: { disabled: true },
      mcp: { disabled: true },
      customCss: AUTH_BOX_CSS,
    },
  });
}
