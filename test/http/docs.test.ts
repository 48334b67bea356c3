// GET /docs (server-rendered: endpoints, curl tour, one entry per error code under `#<code>`), the Scalar
// references at /docs/reference/ and /docs/admin/ with their script served locally, and the curl tour of
// docs/api.md §4.11.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';
import { curlTour } from '../../src/http/views/curl-tour.js';
import { EVENT_TYPES } from '../../src/webhooks/types.js';
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

  it('says in §4.8 of docs/api.md that a job’s end is learnt by polling or by the events of §6', () => {
    const apiMd = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const start = apiMd.indexOf('### 4.8 ');
    const section = apiMd.slice(start, apiMd.indexOf('\n### ', start + 1));
    expect(apiMd).not.toMatch(/no callbacks/i);
    const paragraph = section.split('\n\n').find((text) => text.includes('webhook endpoint (§6)'));
    expect(paragraph).toContain('poll the result path');
    // Every event type the paragraph names (`data.object` is the event's field) is one the service sends.
    const named = [...paragraph!.matchAll(/`([a-z]+\.[a-z]+)`/g)]
      .map((match) => match[1])
      .filter((name) => name !== 'data.object');
    expect(named).toEqual(['simulation.succeeded', 'simulation.failed', 'batch.completed']);
    for (const type of named) expect(EVENT_TYPES).toContain(type);
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

describe('security headers of the pages (issue 33, item 9)', () => {
  it('allow each page only its own scripts and styles, by hash where inline, and forbid framing', async () => {
    for (const url of ['/playground', '/docs', '/docs/reference/', '/docs/admin/']) {
      const response = await t.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      const policy = String(response.headers['content-security-policy']);
      const directives = Object.fromEntries(
        policy.split('; ').map((directive) => [directive.split(' ')[0], directive.split(' ').slice(1)]),
      );
      expect(directives['default-src'], url).toEqual(["'none'"]);
      expect(directives['frame-ancestors'], url).toEqual(["'none'"]);
      expect(directives['connect-src'], url).toEqual(["'self'"]);
      // Every inline script is allowed by its own hash, and nothing else inline runs.
      const inlineScripts = [...response.body.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)];
      const scriptHashes = inlineScripts.map(
        (match) => `'sha256-${createHash('sha256').update(match[1]!).digest('base64')}'`,
      );
      expect(directives['script-src'], url).toEqual(["'self'", ...scriptHashes]);
      const scalar = url.startsWith('/docs/');
      if (!scalar) {
        const styleHashes = [...response.body.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/g)].map(
          (match) => `'sha256-${createHash('sha256').update(match[1]!).digest('base64')}'`,
        );
        expect(directives['style-src'], url).toEqual(["'self'", ...styleHashes]);
      } else {
        // Scalar adds its styles while it draws: inline styles, never inline or evaluated scripts.
        expect(directives['style-src'], url).toEqual(["'self'", "'unsafe-inline'"]);
      }
      expect(response.headers['x-frame-options'], url).toBe('DENY');
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
      expect(response.headers['referrer-policy'], url).toBe('no-referrer');
    }
    const script = await t.app.inject({ method: 'GET', url: '/playground/playground.js' });
    expect(script.headers['x-content-type-options']).toBe('nosniff');
    expect(script.headers['content-security-policy']).toBeUndefined();
  });
});
