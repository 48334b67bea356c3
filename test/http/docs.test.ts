// GET /docs (server-rendered: endpoints, curl tour, one entry per error code under `#<code>`), the Scalar
// references at /docs/reference/ and /docs/admin/ with their script served locally, and the curl tour of
// docs/api.md §4.11.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';
import { curlTour } from '../../src/http/views/curl-tour.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

/** Every absolute address in a page that is not the service's own. */
const foreignUrls = (html: string) =>
  [...html.matchAll(/(?:src|href)\s*=\s*["']?(https?:)?\/\/([^"'\s>/]+)/g)]
    .map((match) => match[2])
    .filter((host) => host !== 'api.test');

describe('GET /docs', () => {
  it('renders every error code under its anchor, with what to do, in HTML', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    const html = response.body;
    for (const [code, definition] of Object.entries(ERRORS)) {
      const entry = html.slice(html.indexOf(`id="${code}"`));
      expect(entry.length, code).toBeLessThan(html.length);
      expect(entry.slice(0, 1200)).toContain(String(definition.status));
    }
    expect(html).toContain('<code>Authorization: Bearer &lt;API key&gt;</code>');
    expect(html).not.toMatch(/`[a-z_]+`/);
    expect(foreignUrls(html)).toEqual([]);
  });

  it('lists every operation of /openapi.json and shows the curl tour', async () => {
    const html = (await t.app.inject({ method: 'GET', url: '/docs' })).body;
    const openapi = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const path of Object.keys(openapi.paths)) expect(html).toContain(path);
    expect(html).not.toContain('/admin/v1/orgs');
    for (const step of curlTour('http://api.test')) {
      const escaped = step.command
        .replaceAll('&', '&amp;')
        .replaceAll('<', '&lt;')
        .replaceAll('"', '&quot;')
        .replaceAll("'", '&#39;');
      expect(html).toContain(escaped);
    }
  });

  it('keeps the curl tour of docs/api.md §4.11 the same as the page', () => {
    const apiMd = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    for (const step of curlTour('http://localhost:8080')) expect(apiMd).toContain(step.command);
  });
});

describe('the endpoint references', () => {
  it('serve the Scalar page and its script from the service, reading the two documents', async () => {
    for (const [prefix, document] of [
      ['/docs/reference', '/openapi.json'],
      ['/docs/admin', '/admin/openapi.json'],
    ]) {
      const page = await t.app.inject({ method: 'GET', url: `${prefix}/` });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('js/scalar.js');
      expect(page.body).toContain(document);
      expect(foreignUrls(page.body)).toEqual([]);
      const script = await t.app.inject({ method: 'GET', url: `${prefix}/js/scalar.js` });
      expect(script.statusCode).toBe(200);
      expect(script.body.length).toBeGreaterThan(100_000);
    }
  });
});
