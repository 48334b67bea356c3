// The playground and the docs in a real browser: Debian's chromium (installed by .ci/run) driven by
// playwright-core, headless, against the running demo service. The playground loads, runs a test-key
// simulation with a progress bar, draws every chart, shows an error as a message; /docs renders and
// /docs#balance_too_low scrolls to its entry; the reference draws, without Scalar's hosted AI and MCP
// buttons, its authentication box readable; no page loads anything from elsewhere, and under each page's
// Content-Security-Policy (src/http/page-security.ts) nothing is refused. The playground's boxes
// stay inside their cards at 1,280 × 800 and 390 px and its chart labels are neither cut nor overlapping
// (both measured); at 390 px the win-probability path (its events labelled with their minutes, added
// time as minutes of its own), the lines' legends, the top scorers and the sample match are whole on
// screen with text of 11 px and more; every market is listed with its fair price; a run downloads as JSON and CSV, is
// shared by its link and compared with a custom-lineup run made in the editor. Screenshots go to
// test-output/ (kept out of git).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: the playground's own browser module, plain JavaScript without declarations
import { formatOdds, formatPercent, marketRows } from '../../src/http/playground/markets.js';
import { type DemoService, startDemoService } from '../helpers/demo-service.js';

const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
if (!present && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
if (!present) console.log(`browser tests: skipped, ${CHROMIUM} is missing (apt-get install -y chromium)`);

const OUTPUT = new URL('../../test-output/', import.meta.url);

let demo: DemoService;
let browser: Browser;
const foreign: string[] = [];
/** What the pages asked this service for and did not get (a missing /favicon.ico, a stale link). */
const missing: string[] = [];
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
  page.on('response', (response) => {
    if (response.status() === 404) missing.push(response.url());
  });
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

async function freshFixtureId(): Promise<string> {
  const fresh = await fetch(`${demo.baseUrl}/v1/fixtures?status=fresh&limit=1`, {
    headers: { authorization: `Bearer ${demo.liveKey}` },
  }).then((response) => response.json());
  return String(fresh.data[0].fixture_id);
}

/** The text of the file a click downloads. */
async function downloaded(page: Page, selector: string): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFileSync((await download.path())!, 'utf8');
}

/**
 * Boxes that leave their card: every field, button, label, table and chart must lie within its panel
 * (scrolling tables and the players' list excepted), and the page must not scroll sideways.
 */
function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const sideways = document.documentElement.scrollWidth - window.innerWidth;
    if (sideways > 1) problems.push(`the page scrolls ${sideways}px sideways`);
    for (const panel of document.querySelectorAll('.panel')) {
      const edge = panel.getBoundingClientRect();
      for (const node of panel.querySelectorAll(
        'input, select, button, label, p, table, svg, figure, fieldset, h2',
      )) {
        const box = node.getBoundingClientRect();
        if (box.width === 0 || node.closest('.table-scroll, .players, .chart') !== null) continue;
        if (box.left < edge.left - 1 || box.right > edge.right + 1) {
          const name = node.id || node.textContent?.trim().slice(0, 30) || node.tagName;
          problems.push(
            `${node.tagName.toLowerCase()} "${name}" leaves its panel (${Math.round(box.left)}–${Math.round(box.right)} in ${Math.round(edge.left)}–${Math.round(edge.right)})`,
          );
        }
      }
    }
    // The markets' tables side by side: none runs into another, and at full width none needs to scroll.
    for (const grid of document.querySelectorAll('.markets')) {
      const boxes = [...grid.children].map((child) => ({ child, box: child.getBoundingClientRect() }));
      boxes.forEach(({ child, box }, i) => {
        const name = child.querySelector('caption')?.textContent ?? child.tagName;
        if (window.innerWidth >= 1280 && child.scrollWidth > child.clientWidth + 1)
          problems.push(`market "${name}" scrolls ${child.scrollWidth - child.clientWidth}px sideways`);
        for (const other of boxes.slice(i + 1)) {
          const across = Math.min(box.right, other.box.right) - Math.max(box.left, other.box.left);
          const down = Math.min(box.bottom, other.box.bottom) - Math.max(box.top, other.box.top);
          if (across > 0.5 && down > 0.5)
            problems.push(`market "${name}" meets "${other.child.querySelector('caption')?.textContent}"`);
        }
      });
    }
    return problems;
  });
}

/**
 * Chart text drawn smaller than 10 px on screen (a chart scales with its container), and at desktop
 * width a chart that needs to scroll sideways to be seen whole.
 */
function textSizeProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    for (const chart of document.querySelectorAll<SVGSVGElement>('.chart svg')) {
      const where = chart.parentElement!.id;
      const scale = chart.getBoundingClientRect().width / chart.viewBox.baseVal.width;
      for (const text of chart.querySelectorAll('text')) {
        const px = Number(text.getAttribute('font-size')) * scale;
        if (text.textContent !== '' && px < 9.95) {
          problems.push(`${where}: "${text.textContent}" drawn at ${px.toFixed(1)}px`);
          break;
        }
      }
      const holder = chart.parentElement!;
      if (window.innerWidth >= 1280 && holder.scrollWidth > holder.clientWidth + 1)
        problems.push(`${where} scrolls ${holder.scrollWidth - holder.clientWidth}px sideways at full width`);
    }
    return problems;
  });
}

/**
 * Chart labels cut by their chart's edge or meeting another label of the same chart, for every chart
 * under `scope`. Runs in the page (passed to page.evaluate, or installed there as `labelProblemsIn`), so
 * it refers to nothing outside itself.
 */
function chartLabelProblems(scope: ParentNode = document): string[] {
  const problems: string[] = [];
  for (const chart of scope.querySelectorAll<SVGSVGElement>('.chart svg')) {
    const view = chart.viewBox.baseVal;
    const texts = [...chart.querySelectorAll<SVGTextElement>('text')].filter(
      (text) => text.textContent !== '',
    );
    const boxes = texts.map((text) => text.getBBox());
    const where = chart.parentElement!.id;
    boxes.forEach((box, i) => {
      const label = texts[i]!.textContent;
      if (
        box.x < view.x - 0.5 ||
        box.y < view.y - 0.5 ||
        box.x + box.width > view.x + view.width + 0.5 ||
        box.y + box.height > view.y + view.height + 0.5
      ) {
        problems.push(
          `${where}: "${label}" is cut by the chart's edge (${[box.x, box.y, box.width, box.height].map(Math.round)} in ${view.width}×${view.height})`,
        );
      }
      for (let j = i + 1; j < boxes.length; j += 1) {
        const other = boxes[j]!;
        const across = Math.min(box.x + box.width, other.x + other.width) - Math.max(box.x, other.x);
        const down = Math.min(box.y + box.height, other.y + other.height) - Math.max(box.y, other.y);
        if (across > 0.5 && down > 0.5)
          problems.push(`${where}: "${label}" meets "${texts[j]!.textContent}"`);
      }
    });
  }
  return problems;
}

/** Chart labels of the page that are cut or meet another (chartLabelProblems over the whole page). */
function labelProblems(page: Page): Promise<string[]> {
  return page.evaluate(chartLabelProblems, undefined);
}

/**
 * What of a chart is not on screen without scrolling: each text and marker (`[data-event]`) of the chart
 * in `selector` whose box leaves the viewport or the chart's visible box, and each text drawn under
 * `minPx` pixels. A chart drawn to its container's width (charts.js drawnToWidth) has none.
 */
function offScreenProblems(page: Page, selector: string, minPx: number): Promise<string[]> {
  return page.evaluate(
    ({ selector, minPx }) => {
      const problems: string[] = [];
      const holder = document.querySelector(selector)!;
      const chart = holder.querySelector('svg')!;
      const visible = holder.getBoundingClientRect();
      const scale = chart.getBoundingClientRect().width / chart.viewBox.baseVal.width;
      for (const node of chart.querySelectorAll<SVGGraphicsElement>('text, [data-event]')) {
        const name = node.textContent || node.getAttribute('data-event') || node.tagName;
        const box = node.getBoundingClientRect();
        if (
          box.left < Math.max(0, visible.left) - 1 ||
          box.right > Math.min(window.innerWidth, visible.right) + 1
        )
          problems.push(
            `${selector}: "${name}" is off screen (${Math.round(box.left)}–${Math.round(box.right)})`,
          );
        const size = Number(node.getAttribute('font-size')) * scale;
        if (node.tagName === 'text' && node.textContent !== '' && size < minPx - 0.05)
          problems.push(`${selector}: "${name}" drawn at ${size.toFixed(1)}px`);
      }
      return problems;
    },
    { selector, minPx },
  );
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
    const fixtureId = await freshFixtureId();
    const page = await openPage();
    await page.goto(`${demo.baseUrl}/playground`);
    expect(await layoutProblems(page)).toEqual([]);
    // The fixtures on sale (a live key lists them; reading them is free): long names in the select.
    await page.fill('#key', demo.liveKey);
    await page.click('#load-fixtures');
    await expect.poll(() => page.locator('#fixture option').count()).toBeGreaterThan(1);
    expect(await layoutProblems(page)).toEqual([]);
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
    // The run's event (docs/api.md §6), listed for the test key after the run.
    await expect.poll(() => page.locator('#events table').textContent()).toContain('simulation.succeeded');
    expect(await labelProblems(page)).toEqual([]);
    expect(await textSizeProblems(page)).toEqual([]);
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: new URL('playground.png', OUTPUT).pathname, fullPage: true });
    expect(await layoutProblems(page)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await layoutProblems(page)).toEqual([]);
    expect(await labelProblems(page)).toEqual([]);
    expect(await textSizeProblems(page)).toEqual([]);
    // On a phone the lines' legends, the top scorers and the sample match are whole on screen, their
    // text at 11 px and more (drawn again at the new width).
    for (const id of ['state', 'xg', 'scorers', 'sample'])
      await expect.poll(() => offScreenProblems(page, `#chart-${id}`, 11)).toEqual([]);
    expect(await page.locator('#chart-sample svg [data-added-time]').count()).toBe(2);
    // The goals chart is wider than a phone and scrolls; it opens on its legend, both sides named.
    const legendOffScreen = await page.evaluate(() => {
      const holder = document.querySelector('#chart-goals')!;
      const right = Math.min(window.innerWidth, holder.getBoundingClientRect().right);
      return [...holder.querySelectorAll('svg text')]
        .slice(-2)
        .filter((text) => text.getBoundingClientRect().right > right + 1)
        .map((text) => text.textContent);
    });
    expect(legendOffScreen).toEqual([]);
    await page
      .locator('.charts')
      .first()
      .screenshot({ path: new URL('playground-phone-charts.png', OUTPUT).pathname });
    await page.screenshot({ path: new URL('playground-phone.png', OUTPUT).pathname, fullPage: true });
    await page.close();
  }, 240_000);

  it('keeps the goal chart labels apart and inside it for any pair of goal distributions', async () => {
    // The demo data moves with the clock, so the run above meets different numbers each day; this draws
    // the chart for a sweep of home and away scoring rates (equal rates put a pair's bars level, the case
    // where their labels would meet) and every percentage format, on no day's data.
    const page = await openPage();
    await page.goto(`${demo.baseUrl}/playground`);
    // Given as text, so that the test's own transform leaves them alone: the check, and the page's module.
    await page.evaluate(`window.labelProblemsIn = ${chartLabelProblems.toString()}`);
    await page.evaluate(
      "import('/playground/charts.js').then((charts) => { window.goalDistributions = charts.goalDistributions; })",
    );
    const problems = await page.evaluate(() => {
      const { goalDistributions, labelProblemsIn } = window as unknown as {
        goalDistributions: (container: Element, distributions: object, teams: object) => void;
        labelProblemsIn: (scope: ParentNode) => string[];
      };
      const poisson = (mean: number) => {
        const p = [Math.exp(-mean)];
        for (let k = 1; k <= 10; k += 1) p.push((p[k - 1]! * mean) / k);
        return p;
      };
      const sweep = document.createElement('div');
      const holder = document.createElement('div');
      holder.className = 'chart';
      holder.id = 'sweep';
      sweep.append(holder);
      document.body.append(sweep);
      const found: string[] = [];
      let drawn = 0;
      for (let home = 0.1; home <= 4.05; home += 0.1) {
        for (let away = 0.1; away <= 4.05; away += 0.1) {
          goalDistributions(
            holder,
            { home: poisson(home), away: poisson(away) },
            { home: 'Home', away: 'Away' },
          );
          for (const problem of labelProblemsIn(sweep))
            found.push(`${home.toFixed(1)}-${away.toFixed(1)} ${problem}`);
          drawn += 1;
        }
      }
      return { drawn, found: found.slice(0, 10) };
    });
    expect(problems.drawn).toBe(40 * 40);
    expect(problems.found).toEqual([]);
    await page.close();
  }, 120_000);

  it('projects a season: the table with expected points, the places heat map, title and relegation bars', async () => {
    const page = await openPage();
    await page.goto(`${demo.baseUrl}/playground`);
    // The chosen fixture's competition is projected when no id is typed. The demo's test key alone
    // lists its fixtures here: the API lists none for a test key, the demo's page route does.
    await page.fill('#key', demo.testKey);
    await page.click('#load-fixtures');
    await expect.poll(() => page.locator('#fixture option').count()).toBeGreaterThan(1);
    await page.fill('#seasons', '2000');
    await page.click('#project');
    await page.locator('#chart-relegation svg').waitFor({ timeout: 120_000 });
    const rows = page.locator('#projection-table tbody tr');
    const clubs = await rows.count();
    expect(clubs).toBeGreaterThan(10);
    expect(await page.locator('#projection-table thead').textContent()).toContain('Expected points');
    // Zones by their names in words and their places, not their keys (top_four).
    const head = await page.locator('#projection-table thead').textContent();
    expect(head).toMatch(/Relegation \(\d+–\d+\)/);
    expect(head).not.toMatch(/_/);
    // Ordered by expected points, as the projection is.
    const expected = await page.locator('#projection-table tbody tr td:nth-child(5)').allTextContents();
    expect(expected.map(Number)).toEqual([...expected.map(Number)].sort((a, b) => b - a));
    // One shaded cell per club and place, one bar per club shown.
    expect(await page.locator('#chart-places svg rect').count()).toBe(clubs * clubs);
    expect(await page.locator('#chart-title svg rect').count()).toBe(8);
    expect(await page.locator('#chart-relegation svg rect').count()).toBe(8);
    expect(await page.locator('#projection-summary').textContent()).toContain('2000 seasons');
    expect(await page.locator('#projection-summary').textContent()).toContain('0 credits charged');
    expect(await layoutProblems(page)).toEqual([]);
    expect(await textSizeProblems(page)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await layoutProblems(page)).toEqual([]);
    expect(await textSizeProblems(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
    mkdirSync(OUTPUT, { recursive: true });
    await page.locator('#projection-title').scrollIntoViewIfNeeded();
    await page.screenshot({ path: new URL('playground-projection.png', OUTPUT).pathname, fullPage: true });
    await page.close();
  }, 240_000);

  it('fits a run to entered odds beside the unfitted run, and marks the offered prices with an edge', async () => {
    const fixtureId = await freshFixtureId();
    const page = await openPage();
    await page.goto(`${demo.baseUrl}/playground`);
    await page.fill('#key', demo.testKey);
    await page.fill('#fixture-id', fixtureId);
    await page.fill('#draws', '4000');
    await page.click('#market-run');
    await expect.poll(() => page.locator('#market-note').textContent()).toContain('Enter the 1X2 odds');
    await page.fill('#odds-1x2', '2.10, 3.40, 3.60');
    await page.fill('#odds-total', '1.90, 1.95');
    // A home price far above the fitted one (an edge), and a draw price far below it (none).
    await page.fill('#offered-home_win', '4.0');
    await page.fill('#offered-draw', '1.5');
    await page.click('#market-run');
    await page.locator('#market-compare table').waitFor({ timeout: 120_000 });
    const note = await page.locator('#market-note').textContent();
    expect(note).toContain('Fitted (exact, shin) to home_win_minus_away_win, over_2_5');
    const home = page.locator('#market-compare tr[data-outcome="home_win"]');
    expect(await home.getAttribute('class')).toBe('edge');
    expect(await page.locator('#market-compare tr[data-outcome="draw"]').getAttribute('class')).toBeNull();
    const cells = await home.locator('td').allTextContents();
    // Outcome, unfitted, fitted, market (the Shin probability of 2.10 / 3.40 / 3.60), offered 4.00.
    expect(cells[0]).toBe('Home win');
    expect(cells[3]).toBe('45.9%');
    expect(cells[4]).toBe('4.00');
    expect(cells[6]).toMatch(/^\+\d+\.\d% ± \d\.\d%$/);
    // Both runs joined the tab's runs, so the comparison can pick them.
    expect(await page.locator('#compare-a option').count()).toBeGreaterThanOrEqual(2);
    expect(await layoutProblems(page)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await layoutProblems(page)).toEqual([]);
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: new URL('playground-market.png', OUTPUT).pathname, fullPage: true });
    await page.close();
  }, 240_000);

  it('runs a win-probability path of the chosen fixture and draws the worm with its events marked', async () => {
    const page = await openPage();
    await page.goto(`${demo.baseUrl}/playground`);
    await page.fill('#key', demo.testKey);
    await page.click('#load-fixtures');
    await expect.poll(() => page.locator('#fixture option').count()).toBeGreaterThan(1);
    // The box's example ends with a goal at 75: past a path through 60, which the service refuses
    // (docs/api.md §4.14), naming the event.
    await page.fill('#path-through', '60');
    await page.fill('#path-draws', '100');
    await page.click('#path-quote');
    await expect.poll(() => page.locator('#error').textContent()).toContain('events.2');
    await page.fill('#path-events', '30 goal home\n60 red_card away');
    await page.click('#path-quote');
    await expect.poll(() => page.locator('#path-summary').textContent()).toContain('70 minutes × 100 draws');
    await page.click('#path-run');
    await page.locator('#chart-worm svg').waitFor({ timeout: 120_000 });
    // Home win, draw and away win stacked; the goal at 30 and the red card at 60 marked.
    expect(await page.locator('#chart-worm svg polygon').count()).toBe(3);
    expect(await page.locator('#chart-worm svg [data-event]').count()).toBe(2);
    expect(await page.locator('#path-summary').textContent()).toMatch(/^70 minutes; at 60': home/);
    expect(await layoutProblems(page)).toEqual([]);
    expect(await textSizeProblems(page)).toEqual([]);
    // Each step a minute of its own: the first half's ten added-time steps shaded under the axis, "+10".
    const added = page.locator('#chart-worm svg [data-added-time]');
    expect(await added.count()).toBe(1);
    expect(await page.locator('#chart-worm svg text', { hasText: '+10' }).count()).toBe(1);
    // The band's points, one a step (the upper line, then the lower one back): evenly spaced, the
    // stretch ten of them wide.
    const band = await page.locator('#chart-worm svg [data-band="home_win"]').getAttribute('points');
    const xs = band!.split(' ').map((point) => Number(point.split(',')[0]));
    const steps = xs.slice(0, 70);
    const step = (steps[69]! - steps[0]!) / 69;
    for (let i = 1; i < steps.length; i += 1) expect(steps[i]! - steps[i - 1]!).toBeCloseTo(step, 0);
    expect(Number(await added.getAttribute('width'))).toBeCloseTo(10 * step, 0);
    // Every marker labelled with its minute.
    for (const minute of ['30', '60'])
      expect(await page.locator(`#chart-worm svg [data-event-minute="${minute}"]`).textContent()).toBe(
        `${minute}'`,
      );
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await layoutProblems(page)).toEqual([]);
    expect(await textSizeProblems(page)).toEqual([]);
    // On a phone it opens on the whole path: every marker, minute label and legend entry on screen.
    await expect.poll(() => offScreenProblems(page, '#chart-worm', 11)).toEqual([]);
    expect(await labelProblems(page)).toEqual([]);
    await page.locator('#chart-worm').scrollIntoViewIfNeeded();
    await page
      .locator('#chart-worm')
      .screenshot({ path: new URL('playground-path-phone.png', OUTPUT).pathname });
    await page.setViewportSize({ width: 1280, height: 800 });
    mkdirSync(OUTPUT, { recursive: true });
    await page.locator('#path-title').scrollIntoViewIfNeeded();
    await page.screenshot({ path: new URL('playground-path.png', OUTPUT).pathname });
    await page.close();
  }, 240_000);

  it('lists every market with its fair price, downloads JSON and CSV, shares a run and compares two', async () => {
    const fixtureId = await freshFixtureId();
    const page = await openPage();
    await page.goto(`${demo.baseUrl}/playground`);
    await page.fill('#key', demo.testKey);
    await page.fill('#fixture-id', fixtureId);
    await page.fill('#draws', '1000');
    await page.click('#run');
    await page.locator('#markets table').first().waitFor({ timeout: 120_000 });

    // The share link is the page's own address now, and names the delivery.
    const simulationId = new URL(page.url()).searchParams.get('simulation') ?? '';
    expect(simulationId).toMatch(/^sim_/);
    expect(await page.locator('#share-link').getAttribute('href')).toBe(page.url());
    const delivered = await fetch(`${demo.baseUrl}/v1/simulations/${simulationId}`, {
      headers: { authorization: `Bearer ${demo.testKey}` },
    }).then((response) => response.json());
    const doc = delivered.simulation;
    const teams = { home: doc.fixture.home.short_name, away: doc.fixture.away.short_name };

    // Every market of the document, each selection with 1/p (a push refunded) as the page shows it.
    const rows = marketRows(doc, teams);
    const captions = await page.locator('#markets table caption').allTextContents();
    expect(captions).toEqual([...new Set(rows.map((row: { market: string }) => row.market))]);
    expect(captions).toEqual(
      expect.arrayContaining(['Total goals', 'Both teams to score', 'Asian handicap', 'Half-time/full-time']),
    );
    const shown = await page
      .locator('#markets tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(shown).toHaveLength(rows.length);
    const over25 = shown.find((cells) => cells[0] === 'Over 2.5')!;
    const p = doc.markets.totals.find((total: { line: number }) => total.line === 2.5).over;
    expect(over25).toEqual(['Over 2.5', formatPercent(p), formatOdds(1 / p)]);
    expect(await page.locator('#chart-grid svg rect').count()).toBe(36);

    // Downloads: the delivery as JSON, the markets and the players as CSV.
    const json = JSON.parse(await downloaded(page, '#export-json'));
    expect(json).toMatchObject({ object: 'simulation', id: simulationId });
    const markets = (await downloaded(page, '#export-markets')).trimEnd().split('\r\n');
    expect(markets[0]).toBe('market,selection,probability,push,fair_odds');
    expect(markets).toHaveLength(rows.length + 1);
    const players = (await downloaded(page, '#export-players')).trimEnd().split('\r\n');
    expect(players[0]).toMatch(
      /^player_id,name,team,position,starts,appears,expected_minutes,anytime_scorer,/,
    );
    expect(players).toHaveLength(doc.players.length + 1);

    // The link in another tab (no key kept there yet): paste the key, and the run comes back by its id.
    const shared = await openPage();
    await shared.goto(page.url());
    await shared.locator('#load-shared').waitFor();
    await shared.fill('#key', demo.testKey);
    const read = shared.waitForRequest((request) =>
      request.url().endsWith(`/v1/simulations/${simulationId}`),
    );
    await shared.click('#load-shared');
    await read;
    await shared.locator('#markets table').first().waitFor();
    expect(await shared.locator('#summary').textContent()).toBe(
      (await page.locator('#summary').textContent())!.replace(/\d+ credits charged/, '0 credits charged'),
    );
    await shared.close();

    // The custom-lineup editor: start from the run's XIs, swap one home player for another of his position.
    await page.click('#load-squads');
    await page.locator('#lineups-from-run').click();
    await page.check('#custom-home');
    expect(await page.locator('#picked-home').textContent()).toBe('11 of 11 picked');
    const swap = await page.evaluate(() => {
      const boxes = [...document.querySelectorAll<HTMLInputElement>('input[id^="xi-home-"]')];
      const position = (input: HTMLInputElement) => /\((\w+)\)$/.exec(input.parentElement!.textContent!)?.[1];
      for (const out of boxes.filter((input) => input.checked && position(input) !== 'GK')) {
        const into = boxes.find((input) => !input.checked && position(input) === position(out));
        if (into) return { out: out.id, into: into.id };
      }
      return null;
    });
    expect(swap).not.toBeNull();
    await page.uncheck(`#${swap!.out}`);
    await page.check(`#${swap!.into}`);
    expect(await page.locator('#picked-home').textContent()).toBe('11 of 11 picked');
    await page.click('#run');
    await expect
      .poll(() => page.locator('#summary').textContent(), { timeout: 120_000 })
      .toContain('lineups custom');
    expect(new URL(page.url()).searchParams.get('simulation')).not.toBe(simulationId);

    // Side by side: the run with the fixture's own lineups as A, the custom one as B, every market of both.
    expect(await page.locator('#compare-a option').count()).toBe(2);
    const comparison = page.locator('#comparison table');
    expect(await comparison.locator('caption').textContent()).toMatch(
      /^A: .*lineups (announced|predicted)\/\w+.* · B: .*lineups custom\//,
    );
    expect(await comparison.locator('tbody tr').count()).toBe(rows.length + 2);
    expect(await layoutProblems(page)).toEqual([]);
    await page.screenshot({ path: new URL('playground-compare.png', OUTPUT).pathname, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await layoutProblems(page)).toEqual([]);
    await page.close();
  }, 300_000);

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
    // Only what works here: Scalar's hosted "Ask AI" and "Generate MCP" are off.
    expect(await page.getByText('Ask AI').count()).toBe(0);
    expect(await page.getByText('Generate MCP').count()).toBe(0);
    // The authentication box: its "Required" mark is shown whole and nothing covers it.
    const mark = page.locator('[data-testid="auth-indicator"]').first();
    const picker = page.locator('button', { hasText: 'Selected Auth Type' }).first();
    const [markBox, pickerBox] = [await mark.boundingBox(), await picker.boundingBox()];
    const clip = await mark.evaluate((node) => node.closest('button')!.getBoundingClientRect().toJSON());
    expect(markBox!.x + markBox!.width).toBeLessThanOrEqual(clip.right + 0.5);
    const across =
      Math.min(markBox!.x + markBox!.width, pickerBox!.x + pickerBox!.width) -
      Math.max(markBox!.x, pickerBox!.x);
    const down =
      Math.min(markBox!.y + markBox!.height, pickerBox!.y + pickerBox!.height) -
      Math.max(markBox!.y, pickerBox!.y);
    expect(across > 0.5 && down > 0.5, 'the scheme picker covers "Required"').toBe(false);
    const authBox = page.locator('section', { has: mark }).first();
    await authBox.screenshot({ path: new URL('docs-reference-auth.png', OUTPUT).pathname });
    await page.goto(`${demo.baseUrl}/docs/admin/`);
    await page.locator('#app *').first().waitFor({ timeout: 60_000 });
    await page.close();
    expect(foreign).toEqual([]);
    expect(missing).toEqual([]);
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
