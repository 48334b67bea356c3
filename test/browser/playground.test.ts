// The playground and the docs in a real browser: Debian's chromium (installed by .ci/run) driven by
// playwright-core, headless, against the running demo service. The playground loads, runs a test-key
// simulation with a progress bar, draws every chart, shows an error as a message; /docs renders and
// /docs#balance_too_low scrolls to its entry; the reference draws; no page loads anything from elsewhere,
// and under each page's Content-Security-Policy (src/http/page-security.ts) nothing is refused.
// A screenshot goes to test-output/ (kept out of git).
import { existsSync, mkdirSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoService, startDemoService } from '../helpers/demo-service.js';

const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
if (!present && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
if (!present) console.log(`browser tests: skipped, ${CHROMIUM} is missing (apt-get install -y chromium)`);

const OUTPUT = new URL('../../test-output/', import.meta.url);

let demo: DemoService;
let browser: Browser;
const foreign: string[] = [];
/** What the pages' Content-Security-Policy refused, as the browser reports it. */
const violations: string[] = [];
/**
 * The one refusal expected: Scalar's bundle carries zod, which probes once whether it may compile its
 * validators (`Function('')` inside a try) and, refused, validates without compiling. The reference still
 * draws (checked below), so its pages get no 'unsafe-eval'.
 */
const zodCompileProbe = (text: string) => /script-src eval \S*\/js\/scalar\.js/.test(text);

async function openPage(width = 1280, height = 800): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height } });
  const own = new URL(demo.baseUrl).host;
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(
        `Content Security Policy violation: ${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`,
      );
    });
  });
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.host === own || url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
    foreign.push(url.href);
    return route.abort();
  });
  return page;
}

describe.skipIf(!present)('in chromium', () => {
  beforeAll(async () => {
    demo = await startDemoService();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await demo?.close();
  });

  it('runs a test-key simulation in the playground and draws every chart', async () => {
    const fresh = await fetch(`${demo.baseUrl}/v1/fixtures?status=fresh&limit=1`, {
      headers: { authorization: `Bearer ${demo.liveKey}` },
    }).then((response) => response.json());
    const fixtureId = String(fresh.data[0].fixture_id);
    const page = await openPage();
    await page.goto(`${demo.baseUrl}/playground`);
    await page.fill('#key', demo.testKey);
    await page.fill('#fixture-id', fixtureId);
    await page.fill('#draws', '50');
    await page.click('#quote');
    await expect.poll(() => page.locator('#error').isVisible()).toBe(true);
    expect(await page.locator('#error').textContent()).toContain('parameter_invalid');
    expect(await page.locator('.field-error[data-param="draws"]').textContent()).not.toBe('');

    await page.fill('#draws', '2000');
    await page.click('#quote');
    await expect
      .poll(() => page.locator('#quote-out').textContent())
      .toContain('credits for 2000 draws (test key: never charged)');
    expect(await page.locator('#error').isVisible()).toBe(false);
    await page.focus('#draws');
    await page.keyboard.press('Enter'); // from the keyboard: Enter in the form runs the simulation
    await page.locator('#chart-sample svg').waitFor({ timeout: 120_000 });
    for (const id of ['1x2', 'grid', 'goals', 'state', 'xg', 'scorers', 'sample']) {
      const chart = page.locator(`#chart-${id} svg`);
      expect(await chart.locator('rect, circle, polyline').count(), id).toBeGreaterThan(0);
      const box = await chart.boundingBox();
      expect(box && box.width > 100 && box.height > 50, id).toBe(true);
    }
    expect(await page.locator('#summary').textContent()).toContain('0 credits charged');
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: new URL('playground.png', OUTPUT).pathname, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await page.screenshot({ path: new URL('playground-phone.png', OUTPUT).pathname, fullPage: true });
    await page.close();
  }, 240_000);

  it('lands /docs#balance_too_low on its entry, and draws the endpoint reference', async () => {
    const page = await openPage();
    await page.goto(`${demo.baseUrl}/docs#balance_too_low`);
    const entry = page.locator('#balance_too_low');
    const box = await entry.boundingBox();
    expect(box && box.y > -2 && box.y < 800).toBe(true);
    expect(await entry.evaluate((node) => node.matches(':target'))).toBe(true);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await page.goto(`${demo.baseUrl}/docs/reference/`);
    await page
      .getByText('Read the credit balance, plan tier and limits')
      .first()
      .waitFor({ timeout: 60_000 });
    await page.screenshot({ path: new URL('docs-reference.png', OUTPUT).pathname });
    await page.goto(`${demo.baseUrl}/docs/admin/`);
    await page.locator('#app *').first().waitFor({ timeout: 60_000 });
    await page.close();
    expect(foreign).toEqual([]);
    expect(violations.filter((text) => !zodCompileProbe(text))).toEqual([]);
  }, 120_000);

  it('sends every page with a policy that allows only its own scripts and styles, and no framing', async () => {
    for (const path of ['/playground', '/docs', '/docs/reference/', '/docs/admin/']) {
      const response = await fetch(`${demo.baseUrl}${path}`);
      const policy = response.headers.get('content-security-policy') ?? '';
      expect(policy, path).toMatch(/default-src 'none'/);
      expect(policy, path).toMatch(/script-src 'self'( 'sha256-[^']+')*;/);
      expect(policy, path).toMatch(/frame-ancestors 'none'/);
      expect(policy, path).not.toMatch(/script-src[^;]*unsafe/);
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
    // A page in a frame of another site is refused by the browser.
    const page = await openPage();
    await page.setContent(`<iframe src="${demo.baseUrl}/playground"></iframe>`);
    await expect.poll(() => violations.some((text) => /frame-ancestors/.test(text))).toBe(true);
    violations.length = 0;
    await page.close();
  }, 60_000);
});
