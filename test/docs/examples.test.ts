// Every example in the documents (README.md, docs/*.md, the typed client's README) is run, or says why
// not (issue 62). The test reads the documents as a reader does: each fenced block must follow a marker,
//   <!-- example: run NAME (a note) -->          run here, by the check of that name below;
//   <!-- example: tested by PATH (a note) -->    run by another test, the file at PATH;
//   <!-- example: not run: REASON -->             an illustration, with the reason;
// and a `run` marker may also stand before a table whose figures are checked. The runnable examples go,
// as written, to a fresh demo service (test/helpers/demo-service.ts; CI moves its day with
// CLOCK_OFFSET_SECONDS), and the figures shown are compared with the answers: to the shown precision
// where they are computed, and within Monte Carlo error as well where they come from draws (the docs mark
// those ≈). Illustrations of answers whose ids and states are made up ("…-shape") are compared by their
// fields: every field shown must be in the service's answer, with a value of the same kind.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDemoFeed } from '../../src/fixtures/demo-data.js';
import { DEMO_SEED } from '../../src/operations/demo.js';
import { type DemoService, startDemoService } from '../helpers/demo-service.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

/** The documents whose examples are run; docs/*.md is read whole, so a new document joins by itself. */
const DOCUMENTS = [
  'README.md',
  'clients/typescript/README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
type Json = any;

type Marker =
  | { kind: 'run'; name: string }
  | { kind: 'tested'; file: string }
  | { kind: 'not-run'; reason: string };

interface Example {
  document: string;
  /** 1-based line of the marker. */
  line: number;
  marker: Marker;
  /** The fenced block after the marker, if any: its text without the fences (and a blockquote's "> "). */
  block: string | undefined;
  /** The lines after the marker up to the first blank line (a table's rows, when no block follows). */
  following: string;
  /** The document's text before the marker. */
  before: string;
}

const MARKER = /^(?:> )?<!-- example: (.*?) -->$/;
const FENCE = /^(?:> )?```/;

function parseMarker(text: string): Marker | undefined {
  let match = /^run ([a-z0-9-]+)(?: \(.+\))?$/.exec(text);
  if (match) return { kind: 'run', name: match[1]! };
  match = /^tested by (\S+)(?: \(.+\))?$/.exec(text);
  if (match) return { kind: 'tested', file: match[1]! };
  match = /^not run: (.+)$/.exec(text);
  if (match) return { kind: 'not-run', reason: match[1]! };
  return undefined;
}

/** Every marker and every fenced block of a document; a block without its marker is an error. */
function examplesOf(document: string): { examples: Example[]; unmarked: number[]; badMarkers: number[] } {
  const lines = readFileSync(path.join(root, document), 'utf8').split('\n');
  const examples: Example[] = [];
  const unmarked: number[] = [];
  const badMarkers: number[] = [];
  const strip = (line: string) => line.replace(/^> ?/, '');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (FENCE.test(line)) {
      // A block: its marker is the line just before it.
      if (!MARKER.test(lines[i - 1] ?? '')) unmarked.push(i + 1);
      let end = i + 1;
      while (end < lines.length && !FENCE.test(lines[end]!)) end++;
      i = end;
      continue;
    }
    const found = MARKER.exec(line);
    if (!found) continue;
    const marker = parseMarker(found[1]!);
    if (!marker) {
      badMarkers.push(i + 1);
      continue;
    }
    let block: string | undefined;
    const next = lines[i + 1] ?? '';
    if (FENCE.test(next)) {
      let end = i + 2;
      while (end < lines.length && !FENCE.test(lines[end]!)) end++;
      block = lines
        .slice(i + 2, end)
        .map((l) => (line.startsWith('>') ? strip(l) : l))
        .join('\n');
    }
    let stop = i + 1;
    while (stop < lines.length && lines[stop]!.trim() !== '') stop++;
    examples.push({
      document,
      line: i + 1,
      marker,
      block,
      following: lines.slice(i + 1, stop).join('\n'),
      before: lines.slice(0, i).join('\n'),
    });
  }
  return { examples, unmarked, badMarkers };
}

// ---------------------------------------------------------------------------------------------------
// Comparing shown figures with answers.

/** JSON as shown, each number kept with its text, so that "0.20" is known to have two decimals. */
interface ShownNumber {
  shown: number;
  decimals: number;
}
function parseShown(text: string): Json {
  return JSON.parse(text, (_key, value, context?: { source?: string }) => {
    if (typeof value !== 'number') return value;
    const source = context?.source ?? String(value);
    const decimals = source.includes('.') ? source.length - source.indexOf('.') - 1 : 0;
    return { shown: value, decimals } satisfies ShownNumber;
  });
}
const isShownNumber = (value: unknown): value is ShownNumber =>
  typeof value === 'object' && value !== null && 'shown' in value && 'decimals' in value;

/**
 * The shown figure is the answer's, rounded to the shown decimals; with `draws`, a figure that is not a
 * whole number may also differ by four standard errors of a mean of that many draws (`spread` is the
 * draws' standard deviation: at most 0.5 for a probability, about √mean for goals).
 */
function closeTo(shown: ShownNumber, actual: number, draws?: number, spread = 0.5): boolean {
  const rounding = 0.5 * 10 ** -shown.decimals + 1e-9;
  const error = draws && shown.decimals > 0 ? (4 * spread) / Math.sqrt(draws) : 0;
  return Math.abs(actual - shown.shown) <= rounding + error;
}

/** Every value shown equals the answer's (numbers as closeTo says); returns the paths that differ. */
function differences(shown: Json, actual: Json, at = '', draws?: number): string[] {
  if (isShownNumber(shown)) {
    // Goals spread about as a Poisson count: √mean, at least a probability's 0.5.
    const spread = Math.max(0.5, Math.sqrt(Math.abs(shown.shown)));
    return typeof actual === 'number' && closeTo(shown, actual, draws, spread)
      ? []
      : [`${at}: shown ${shown.shown}, answered ${actual}`];
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual) || actual.length !== shown.length)
      return [`${at}: shown ${JSON.stringify(shown)}, answered ${JSON.stringify(actual)}`];
    return shown.flatMap((item, index) => differences(item, actual[index], `${at}.${index}`, draws));
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object') return [`${at}: answered ${JSON.stringify(actual)}`];
    return Object.keys(shown).flatMap((key) => differences(shown[key], actual[key], `${at}.${key}`, draws));
  }
  return shown === actual
    ? []
    : [`${at}: shown ${JSON.stringify(shown)}, answered ${JSON.stringify(actual)}`];
}

/** The fields an illustration shows that the answer lacks or holds as another kind ("..." stands for the rest). */
function missingFields(shown: Json, actual: Json, at = ''): string[] {
  const kind = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);
  if (shown === null || typeof shown !== 'object') {
    const [a, b] = [kind(shown), kind(actual)];
    return a === b || a === 'null' || b === 'null' ? [] : [`${at}: shown a ${a}, answered a ${b}`];
  }
  if (kind(shown) !== kind(actual))
    return [`${at}: shown a ${kind(shown)}, answered ${JSON.stringify(actual)}`];
  if (Array.isArray(shown))
    return shown.flatMap((item, index) => missingFields(item, actual[0], `${at}.${index}`));
  return Object.keys(shown)
    .filter((key) => key !== '...')
    .flatMap((key) =>
      key in actual
        ? missingFields(shown[key], actual[key], `${at}.${key}`)
        : [`${at}.${key}: not in the answer`],
    );
}

// ---------------------------------------------------------------------------------------------------
// The demo service and its answers.

let demo: DemoService;
const workDir = mkdtempSync(path.join(tmpdir(), 'matchsim-doc-examples-'));
/** Answers an example leaves for the examples after it (a request's answer for its response block). */
const answers = new Map<string, Json>();

beforeAll(async () => {
  demo = await startDemoService();
});
afterAll(async () => {
  await demo?.close();
  rmSync(workDir, { recursive: true, force: true });
});

async function call(
  method: string,
  url: string,
  body?: unknown,
  key = demo.liveKey,
): Promise<{ status: number; body: Json; text: string }> {
  const response = await fetch(`${demo.baseUrl}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: Json = null;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed, text };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A simulation as documented: 200 with it, or 202 and its result path followed until it is delivered. */
async function simulate(request: Json): Promise<Json> {
  let answer = await call('POST', '/v1/simulations', request);
  while (answer.status === 202) {
    await pause(500);
    answer = await call('GET', answer.body.result_url);
  }
  expect(answer.status, answer.text).toBe(200);
  return answer.body.simulation;
}

/** A batch's results once no item is queued or running, as NDJSON lines. */
async function batchResults(batchId: string, query = ''): Promise<Json[]> {
  for (;;) {
    const answer = await call('GET', `/v1/simulations/batch/${batchId}/results${query}`);
    expect(answer.status, answer.text).toBe(200);
    const lines = answer.text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    if (lines.every((line) => !['queued', 'running'].includes(line.status))) return lines;
    await pause(1000);
  }
}

/** The figures of a number in prose ("1,000" → 1000). */
const figure = (text: string) => Number(text.replace(/,/g, ''));

// ---------------------------------------------------------------------------------------------------
// The runnable examples, by the name their marker gives.

type Check = (example: Example) => Promise<void>;

/** The batch the three batch illustrations of docs/api.md are compared with: one delivered item, one rejected. */
let illustratedBatch: Promise<{ status: Json; results: Json[]; list: Json }> | undefined;
function batchOfThree() {
  illustratedBatch ??= (async () => {
    const submitted = await call('POST', '/v1/simulations/batch', {
      fixtures: [
        { custom_id: 'north-south', fixture_id: 1051 },
        { custom_id: 'typo', home: 'Nowhere Town', away: 'Bramholt United' },
        { custom_id: 'east-west', fixture_id: 1052 },
      ],
      draws: 1000,
      metadata: { run: 'nightly' },
    });
    expect(submitted.status, submitted.text).toBe(202);
    const batchId = submitted.body.batch_id;
    const results = await batchResults(batchId);
    const cancelled = await call('POST', `/v1/simulations/batch/${batchId}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    const status = await call('GET', `/v1/simulations/batch/${batchId}`);
    const list = await call('GET', '/v1/simulations/batches?limit=1');
    return { status: status.body, results, list: list.body };
  })();
  return illustratedBatch;
}

const checks: Record<string, Check> = {
  async 'readme-credits'(example) {
    const command = example
      .block!.replace('<live key>', demo.liveKey)
      .replaceAll('http://localhost:8080', demo.baseUrl);
    const { stdout } = await run('bash', ['-c', `set -euo pipefail\n${command}`], { cwd: workDir });
    expect(JSON.parse(stdout)).toMatchObject({ object: 'credit_balance', livemode: true });
  },

  async 'fitted-request'(example) {
    const request = JSON.parse(example.block!);
    const simulation = await simulate(request);
    answers.set('fitted', simulation);
    // The heading's rated goals are the model's, before the fit.
    const rated = /rated\s+([\d.]+)\s+against\s+([\d.]+)\s+goals/.exec(example.before.slice(-400));
    expect(rated, 'the heading names the rated goals').not.toBeNull();
    const shown = parseShown(`{"home": ${rated![1]}, "away": ${rated![2]}}`);
    expect(differences(shown, simulation.calibration.rated_goals)).toEqual([]);
    // The same market by the 1X2 alone, and by supremacy, as the sentence after the example says.
    const { 'total_2.5': _total, ...oneByTwo } = request.market.odds;
    const base = { fixture_id: request.fixture_id, draws: 100 };
    answers.set('fitted-1x2', await simulate({ ...base, market: { odds: oneByTwo } }));
    answers.set(
      'fitted-supremacy',
      await simulate({ ...base, market: { odds: oneByTwo, fit: 'supremacy' } }),
    );
  },

  async 'fitted-calibration'(example) {
    const shown = parseShown(`{${example.block}}`);
    const fitted = answers.get('fitted');
    expect(differences(shown.calibration, fitted.calibration, 'calibration')).toEqual([]);
    const after = readFileSync(path.join(root, example.document), 'utf8').slice(example.before.length);
    const sentence =
      /rates the home side lower than the model \(([\d.]+) against ([\d.]+) goals\) and the away side higher\s+\(([\d.]+) against ([\d.]+)\); with the 1X2 alone \(`fit` `exact`\) the fitted goals are ([\d.]+) and ([\d.]+), and with\s+`fit: "supremacy"` ([\d.]+) and ([\d.]+) \(the model's ([\d.]+) goals in all kept\)/.exec(
        after.slice(0, 2500),
      );
    expect(sentence, 'the sentence after the worked example').not.toBeNull();
    const [fittedHome, ratedHome, fittedAway, ratedAway, oneHome, oneAway, supHome, supAway, level] =
      sentence!.slice(1).map((text) => parseShown(text));
    const { calibration } = fitted;
    const supremacy = answers.get('fitted-supremacy').calibration;
    const oneByTwo = answers.get('fitted-1x2').calibration;
    expect(
      differences(
        [fittedHome, ratedHome, fittedAway, ratedAway, oneHome, oneAway, supHome, supAway, level],
        [
          calibration.fitted_goals.home,
          calibration.rated_goals.home,
          calibration.fitted_goals.away,
          calibration.rated_goals.away,
          oneByTwo.fitted_goals.home,
          oneByTwo.fitted_goals.away,
          supremacy.fitted_goals.home,
          supremacy.fitted_goals.away,
          supremacy.fitted_goals.home + supremacy.fitted_goals.away,
        ],
      ),
    ).toEqual([]);
    expect(oneByTwo.fit).toBe('exact');
    expect(supremacy.fit).toBe('supremacy');
  },

  async 'in-play-request'(example) {
    const request = JSON.parse(example.block!);
    const { sent_off: _, ...withoutSentOff } = request.from_state;
    const { from_state: __, ...beforeKickOff } = request;
    answers.set('in-play', [
      await simulate(beforeKickOff),
      await simulate({ ...request, from_state: withoutSentOff }),
      await simulate(request),
    ]);
    answers.set('in-play-draws', request.draws);
  },

  async 'in-play-table'(example) {
    const runs: Json[] = answers.get('in-play');
    const draws: number = answers.get('in-play-draws');
    const rows = example.following
      .split('\n')
      .slice(2)
      .map((row) =>
        row
          .split('|')
          .map((cell) => cell.trim())
          .slice(1, -1),
      );
    const figures: Record<string, (simulation: Json) => number[]> = {
      'home win / draw / away win': (s) => [s.result.home_win, s.result.draw, s.result.away_win],
      'goals still to come (home + away)': (s) =>
        s.state
          ? [s.state.goals_to_come.home, s.state.goals_to_come.away]
          : [s.goals.expected.home, s.goals.expected.away],
      'next goal home / away / none': (s) => [
        s.goal_events.first_goal.home,
        s.goal_events.first_goal.away,
        s.goal_events.first_goal.none,
      ],
      'over 2.5 goals (final score)': (s) => [
        s.markets.totals.find((total: Json) => total.line === 2.5).over,
      ],
    };
    expect(rows.map((row) => row[0])).toEqual(Object.keys(figures));
    const wrong: string[] = [];
    for (const [label, ...cells] of rows) {
      cells.forEach((cell, column) => {
        expect(cell, `${label}: figures from draws are marked ≈`).toMatch(/^≈ /);
        const shown = cell
          .slice(2)
          .split(/ [/+] /)
          .map((text) => parseShown(text));
        wrong.push(...differences(shown, figures[label!]!(runs[column]), `${label} [${column}]`, draws));
      });
    }
    expect(wrong).toEqual([]);
  },

  async 'in-play-state'(example) {
    const shown = parseShown(`{${example.block}}`);
    const [, , redCard] = answers.get('in-play');
    expect(differences(shown.state, redCard.state, 'state', answers.get('in-play-draws'))).toEqual([]);
  },

  async 'batch-status-shape'(example) {
    const { status } = await batchOfThree();
    const shown = JSON.parse(example.block!);
    expect(missingFields({ ...shown, items: [] }, status)).toEqual([]);
    for (const item of shown.items) {
      const real = status.items.find((candidate: Json) => candidate.custom_id === item.custom_id);
      expect(real, item.custom_id).toBeDefined();
      expect(real.fixture).toBe(item.fixture);
      expect(missingFields(item, real)).toEqual([]);
      if (item.error) expect(real.error).toMatchObject({ code: item.error.code, param: item.error.param });
    }
  },

  async 'batch-results-shape'(example) {
    const { results } = await batchOfThree();
    for (const line of example.block!.split('\n')) {
      const shown = JSON.parse(line);
      const real = results.find((candidate) => candidate.custom_id === shown.custom_id);
      expect(real, shown.custom_id).toBeDefined();
      expect(real.fixture).toBe(shown.fixture);
      // The illustration shows one item still running; the real one has finished, with more fields.
      expect(missingFields(shown, real)).toEqual([]);
    }
  },

  async 'batch-list-shape'(example) {
    const { list } = await batchOfThree();
    const shown = JSON.parse(example.block!);
    expect(missingFields({ ...shown, url: list.url }, list)).toEqual([]);
    expect(list.url).toBe(shown.url);
  },

  async 'odds-shin'(example) {
    const request = /Worked example: `(\{"odds".*?\})`/.exec(example.before.slice(-600));
    expect(request, 'the worked example names its request').not.toBeNull();
    const answer = await call('POST', '/v1/odds/implied', JSON.parse(request![1]!));
    expect(answer.status, answer.text).toBe(200);
    expect(differences(parseShown(example.block!), answer.body)).toEqual([]);
    // The table of the same odds by the other methods.
    const after = readFileSync(path.join(root, example.document), 'utf8').slice(example.before.length);
    const rows = [
      ...after.slice(0, 3000).matchAll(/^\| `(\w+)` \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (.+?) \|$/gm),
    ];
    expect(rows.map((row) => row[1])).toEqual(['multiplicative', 'additive', 'power', 'shin', 'odds_ratio']);
    for (const [, method, home, draw, away, parameter] of rows) {
      const byMethod = await call('POST', '/v1/odds/implied', { ...JSON.parse(request![1]!), method });
      const shown = parseShown(`[${home}, ${draw}, ${away}]`);
      expect(differences(shown, byMethod.body.probabilities, method)).toEqual([]);
      if (parameter === 'null') expect(byMethod.body.parameter).toBeNull();
      else {
        const [, name, value] = /^`(\w+)` ([\d.]+)$/.exec(parameter!)!;
        expect(byMethod.body.parameter.name).toBe(name);
        expect(differences(parseShown(value!), byMethod.body.parameter.value, `${method} ${name}`)).toEqual(
          [],
        );
      }
    }
  },

  async 'path-request'(example) {
    const request = JSON.parse(example.block!);
    const prose = /(\d+)\s+runs,\s+([\d,]+)\s+draws,\s+([\d.]+)\s+credits/.exec(example.before.slice(-500));
    expect(prose, 'the example states its runs, draws and credits').not.toBeNull();
    const quote = await call('POST', '/v1/simulations/path/quote', request);
    expect(quote.status, quote.text).toBe(200);
    expect([quote.body.steps, quote.body.price.draws, quote.body.price.credits]).toEqual([
      figure(prose![1]!),
      figure(prose![2]!),
      prose![3],
    ]);
    const submitted = await call('POST', '/v1/simulations/path', request);
    expect(submitted.status, submitted.text).toBe(202);
    const lines = await batchResults(submitted.body.batch_id, '?include=result,state');
    expect(lines).toHaveLength(figure(prose![1]!));
    expect(lines.every((line) => line.status === 'delivered')).toBe(true);
    const at = (minute: string) =>
      lines.find((line) => line.custom_id === minute)!.simulation.simulation.state;
    // The state at a minute holds the events of the minutes before it (docs/api.md §4.14).
    expect(at('30').score).toEqual({ home: 0, away: 0 });
    expect(at('31').score).toEqual({ home: 1, away: 0 });
    expect(at('60').red_cards).toEqual({ home: 0, away: 0 });
    expect(at('61').red_cards).toEqual({ home: 0, away: 1 });
    expect(lines.at(-1)!.custom_id).toBe(request.through);
  },

  async 'openssl-signature'(example) {
    const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(example.before)![1]!;
    const { stdout } = await run('bash', ['-c', `set -euo pipefail\n${example.block}`], {
      cwd: workDir,
      env: { PATH: process.env.PATH, BODY: field('body'), SECRET: field('secret') },
    });
    const v1 = /v1=([0-9a-f]{64})/.exec(field('header'))![1]!;
    expect(stdout.trim().endsWith(v1), stdout).toBe(true);
  },

  async 'feed-load'(example) {
    const now = new Date(Date.now() + Number(process.env.CLOCK_OFFSET_SECONDS || 0) * 1000);
    writeFileSync(
      path.join(workDir, 'feed.json'),
      JSON.stringify(generateDemoFeed({ seed: DEMO_SEED, now })),
    );
    const { stdout } = await run('bash', ['-c', `set -euo pipefail\n${example.block}`], {
      cwd: workDir,
      env: { PATH: process.env.PATH, BASE_URL: demo.baseUrl, ADMIN_TOKEN: demo.adminToken },
    });
    const loaded = JSON.parse(stdout);
    expect(loaded).toMatchObject({ object: 'feed_load', competitions: 3 });
    answers.set('feed-load', loaded);
  },

  async 'feed-load-shape'(example) {
    expect(missingFields(JSON.parse(example.block!), answers.get('feed-load'))).toEqual([]);
  },
};

// ---------------------------------------------------------------------------------------------------

const all = DOCUMENTS.map((document) => ({ document, ...examplesOf(document) }));
const examples = all.flatMap((parsed) => parsed.examples);

describe('the examples of the documents', () => {
  it('marks every fenced block: run here, tested elsewhere, or not run with a reason', () => {
    expect(
      all.filter((parsed) => parsed.unmarked.length).map((p) => `${p.document}: lines ${p.unmarked}`),
    ).toEqual([]);
    expect(
      all.filter((parsed) => parsed.badMarkers.length).map((p) => `${p.document}: lines ${p.badMarkers}`),
    ).toEqual([]);
    const names = examples.flatMap((example) => (example.marker.kind === 'run' ? [example.marker.name] : []));
    expect([...names].sort()).toEqual(Object.keys(checks).sort());
    for (const example of examples) {
      if (example.marker.kind === 'tested')
        expect(existsSync(path.join(root, example.marker.file)), `${example.document}:${example.line}`).toBe(
          true,
        );
    }
  });

  it("uses fixtures whose state is the same on any day: the examples' figures hold whatever the date", () => {
    // 1041 kicks off within the hour with its team sheets out; 1051, 1052 and 1055 are of next week's round.
    const expected = {
      1041: 'lineups_announced',
      1051: 'provisional',
      1052: 'provisional',
      1055: 'provisional',
    };
    const seen = new Map<number, string>();
    const start = Date.parse('2026-12-07T00:00:00Z');
    for (let hour = 0; hour < 14 * 24; hour += 17) {
      const feed = generateDemoFeed({ seed: DEMO_SEED, now: new Date(start + hour * 3_600_000) });
      for (const [id, state] of Object.entries(expected)) {
        const fixture = feed.fixtures.find((candidate) => candidate.fixture_id === Number(id))!;
        expect(fixture.state, `fixture ${id} at hour ${hour}`).toBe(state);
        const clubs = `${fixture.home_team_id}-${fixture.away_team_id}`;
        expect(seen.get(Number(id)) ?? clubs, `fixture ${id}'s clubs`).toBe(clubs);
        seen.set(Number(id), clubs);
      }
    }
  });

  for (const example of examples) {
    if (example.marker.kind !== 'run') continue;
    const { name } = example.marker;
    it(`runs ${example.document}:${example.line} (${name})`, async () => {
      await checks[name]!(example);
    });
  }
});
