// The playground (docs/api.md §4.9): paste a key, pick a fixture on sale, quote, run a simulation, follow
// its job with a progress bar, then draw its charts (charts.js) and list every market with its fair price
// (markets.js). A run can be downloaded (JSON, CSV), shared as `/playground?simulation=sim_…` (read back
// through GET /v1/simulations/{id}) and compared side by side with another run of this tab, e.g. the
// predicted lineups against a custom XI. The last events of the key (GET /v1/events, what webhooks send,
// docs/api.md §6) are listed after each run. Calls the API of this same service.
import { cumulative, goalDistributions, heatMap, lines, matchPath, outcomeBars, scorers } from './charts.js';
import { setupMarketFit } from './market-fit.js';
import {
  formatOdds,
  formatPercent,
  MARKET_COLUMNS,
  marketCsvRows,
  marketRows,
  PLAYER_COLUMNS,
  playerRows,
  toCsv,
} from './markets.js';
import { setupPath } from './path.js';
import { setupProjection } from './projection.js';

const $ = (id) => document.getElementById(id);
/** `runs`: every simulation drawn in this tab, newest last, for the comparison; `current`: the one shown. */
const state = { squads: null, runs: [], current: null };

function showError(error) {
  const box = $('error');
  if (!error) {
    box.hidden = true;
    box.textContent = '';
    for (const field of document.querySelectorAll('.field-error')) field.textContent = '';
    return;
  }
  box.hidden = false;
  box.replaceChildren();
  const code = document.createElement('a');
  code.href = error.doc_url ? `/docs#${error.code}` : '/docs#errors';
  code.textContent = error.code ?? 'error';
  box.append(code, ` ${error.message ?? ''} ${error.fix ?? ''}`);
  const param = error.param ?? '';
  const field = [...document.querySelectorAll('.field-error')].find(
    (node) => param !== '' && param.startsWith(node.dataset.param),
  );
  if (field) field.textContent = `${error.message}`;
}

async function api(method, path, body) {
  const key = $('key').value.trim();
  sessionStorage.setItem('matchsim-key', key);
  const headers = { Authorization: `Bearer ${key}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method === 'POST' && path === '/v1/simulations') headers['Idempotency-Key'] = crypto.randomUUID();
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response
    .json()
    .catch(() => ({ error: { code: 'internal_error', message: 'Not JSON.' } }));
  if (!response.ok) {
    showError(json.error);
    throw Object.assign(new Error(json.error?.message ?? 'request failed'), { handled: true });
  }
  showError(null);
  return { status: response.status, body: json };
}

/**
 * A test key lists no fixture (docs/api.md §4.2); where the service runs the demo, the demo's fixtures on
 * sale are listed for it instead, from the page's own route. Null elsewhere.
 */
async function demoFixtures() {
  const response = await fetch('/playground/demo-fixtures');
  return response.ok ? (await response.json()).data : null;
}

async function loadFixtures() {
  const { body } = await api('GET', '/v1/fixtures?status=fresh&limit=100');
  const testKey = $('key').value.trim().startsWith('ms_test_');
  const fixtures = body.data.length === 0 && testKey ? ((await demoFixtures()) ?? []) : body.data;
  const select = $('fixture');
  select.replaceChildren();
  for (const fixture of fixtures) {
    const option = document.createElement('option');
    option.value = String(fixture.fixture_id);
    option.dataset.competition = String(fixture.competition.competition_id);
    const when = new Date(fixture.kickoff).toISOString().slice(0, 16).replace('T', ' ');
    option.textContent = `${fixture.home.name} – ${fixture.away.name} (${when} UTC)`;
    select.append(option);
  }
  if (fixtures.length === 0)
    select.append(new Option('No fixture on sale (test keys list none: use an id)', ''));
  select.disabled = fixtures.length === 0;
  state.squads = null;
  $('lineups').replaceChildren();
  $('lineups-from-run').hidden = true;
}

function fixtureId() {
  const typed = Number($('fixture-id').value);
  return typed > 0 ? typed : Number($('fixture').value);
}

function requestBody() {
  const body = { fixture_id: fixtureId(), draws: Number($('draws').value) };
  const lineups = customLineups();
  if (lineups) body.lineups = lineups;
  return body;
}

async function quote() {
  const { body } = await api('POST', '/v1/simulations/quote', requestBody());
  $('quote-out').textContent =
    `Price: ${body.price.credits} credits for ${body.price.draws} draws${body.livemode ? '' : ' (test key: never charged)'}.`;
}

async function run(event) {
  event.preventDefault();
  $('run').disabled = true;
  try {
    const started = await api('POST', '/v1/simulations', { ...requestBody(), wait_seconds: 0 });
    show(await finish(started.body));
  } finally {
    $('run').disabled = false;
    $('progress-box').hidden = true;
  }
}

/** A POST's answer as a simulation: at once, or followed to its result. */
const finish = (body) => (body.object === 'simulation' ? body : follow(body));

async function follow(job) {
  $('progress-box').hidden = false;
  const url = new URL(job.result_url, location.href);
  const path = url.pathname + url.search;
  for (;;) {
    const { status, body } = await api('GET', path);
    if (status === 200) return body;
    $('progress').value = body.progress.draws_done / body.progress.draws_total;
    $('progress-text').textContent =
      `${body.status}: ${body.progress.draws_done} of ${body.progress.draws_total} draws`;
    await new Promise((resolve) => setTimeout(resolve, Math.max(250, body.retry_after_seconds * 1000)));
  }
}

/** A run's one-line description: teams, lineup sources, draws. */
function runLabel(delivered) {
  const doc = delivered.simulation;
  const sources = doc.basis.lineup_sources ?? { home: doc.basis.lineups, away: doc.basis.lineups };
  return `${doc.fixture.home.short_name}–${doc.fixture.away.short_name}, lineups ${sources.home}/${sources.away}, ${doc.basis.draws} draws (${delivered.id})`;
}

function show(delivered) {
  state.current = delivered;
  if (!state.runs.some((run) => run.id === delivered.id)) state.runs.push(delivered);
  draw(delivered);
  renderMarkets(delivered.simulation);
  const share = new URL('/playground', location.href);
  share.searchParams.set('simulation', delivered.id);
  history.replaceState(null, '', share.pathname + share.search);
  $('share-link').href = share.href;
  $('share-link').textContent = share.href;
  $('exports').hidden = false;
  refreshComparison(true);
  guarded(loadEvents)();
}

/** The key's last 10 events: when, what, about which object and its status then. */
async function loadEvents() {
  const { body } = await api('GET', '/v1/events?limit=10');
  if (body.data.length === 0) {
    const none = document.createElement('p');
    none.textContent = 'No events in the last 30 days.';
    $('events').replaceChildren(none);
    return;
  }
  const rows = body.data.map((event) => {
    const object = event.data.object;
    return [
      new Date(event.created * 1000).toISOString().replace('.000Z', 'Z'),
      event.type,
      object.job_id ?? object.batch_id ?? object.id ?? object.object,
      object.status ?? '',
      event.id,
    ];
  });
  $('events').replaceChildren(
    table('The last events', ['Created (UTC)', 'Type', 'Object', 'Status', 'Event'], rows),
  );
}

function draw(delivered) {
  const doc = delivered.simulation;
  const teams = { home: doc.fixture.home.short_name, away: doc.fixture.away.short_name };
  $('summary').textContent =
    `${doc.fixture.home.name} – ${doc.fixture.away.name}: ${doc.basis.draws} draws, lineups ${doc.basis.lineups}, expected goals ${doc.goals.expected.home.toFixed(2)} – ${doc.goals.expected.away.toFixed(2)}; ${delivered.credits_charged} credits charged.`;
  outcomeBars($('chart-1x2'), doc.result);
  heatMap($('chart-grid'), doc.goals.score_grid.cells);
  goalDistributions($('chart-goals'), doc.goals.distributions, teams);
  const labels = doc.timeline.minute_label;
  const states = doc.timeline.score_state;
  lines(
    $('chart-state'),
    labels,
    [
      { name: `${teams.home} ahead`, values: states.home_leading, color: '#0b5e43' },
      { name: 'Level', values: states.level, color: '#6b7a73' },
      { name: `${teams.away} ahead`, values: states.away_leading, color: '#c2571a' },
    ],
    'Score state probabilities by minute',
  );
  lines(
    $('chart-xg'),
    labels,
    [
      { name: teams.home, values: cumulative(doc.timeline.home.goals), color: '#0b5e43' },
      { name: teams.away, values: cumulative(doc.timeline.away.goals), color: '#c2571a' },
    ],
    'Expected goals by minute',
  );
  scorers($('chart-scorers'), doc.players, teams);
  drawSample(doc, teams);
}

function drawSample(doc, teams) {
  const sample = doc.samples[0];
  matchPath($('chart-sample'), sample, doc.timeline.minute_label);
  const names = new Map(doc.players.map((player) => [player.player_id, player.name]));
  $('sample-events').replaceChildren(
    ...sample.events.map((event) => {
      const item = document.createElement('li');
      item.textContent = `${event.minute_label}' ${teams[event.team]} ${event.type.replace('_', ' ')}: ${names.get(event.player_id) ?? event.player_id}`;
      return item;
    }),
  );
}

const teamsOf = (doc) => ({ home: doc.fixture.home.short_name, away: doc.fixture.away.short_name });

/** Every market of the document in one table per market, each selection with its fair decimal odds. */
function renderMarkets(doc) {
  const groups = new Map();
  for (const item of marketRows(doc, teamsOf(doc))) {
    if (!groups.has(item.market)) groups.set(item.market, []);
    groups.get(item.market).push(item);
  }
  $('markets').replaceChildren(
    ...[...groups].map(([market, rows]) => {
      const withPush = rows.some((item) => item.push !== null);
      const head = ['Selection', 'Probability', ...(withPush ? ['Push'] : []), 'Fair odds'];
      const body = rows.map((item) => [
        item.selection,
        formatPercent(item.probability),
        ...(withPush ? [formatPercent(item.push)] : []),
        formatOdds(item.odds),
      ]);
      // In a box of its own that scrolls, so that a table wider than its column never runs into the
      // next one (the Asian handicap's four columns and long team names did at 1,280 px).
      const box = document.createElement('div');
      box.className = 'market';
      box.append(table(market, head, body));
      return box;
    }),
  );
}

function table(caption, head, body) {
  const node = document.createElement('table');
  node.createCaption().textContent = caption;
  const headRow = node.createTHead().insertRow();
  for (const text of head) {
    const cell = document.createElement('th');
    cell.scope = 'col';
    cell.textContent = text;
    headRow.append(cell);
  }
  const tbody = node.createTBody();
  for (const values of body) {
    const line = tbody.insertRow();
    for (const text of values) line.insertCell().textContent = text;
  }
  return node;
}

function download(name, type, text) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([text], { type }));
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

function exportRun(kind) {
  const delivered = state.current;
  if (!delivered) return;
  const doc = delivered.simulation;
  if (kind === 'json') {
    download(`${delivered.id}.json`, 'application/json', `${JSON.stringify(delivered, null, 2)}\n`);
  } else if (kind === 'markets') {
    const rows = marketCsvRows(marketRows(doc, teamsOf(doc)));
    download(`${delivered.id}-markets.csv`, 'text/csv', toCsv(MARKET_COLUMNS, rows));
  } else {
    download(`${delivered.id}-players.csv`, 'text/csv', toCsv(PLAYER_COLUMNS, playerRows(doc)));
  }
}

/** The two runs chosen side by side: every market row, both probabilities and fair odds, the difference. */
function refreshComparison(newRun = false) {
  const pickers = [$('compare-a'), $('compare-b')];
  // A new run is compared with the one before it; otherwise the reader's choice stays.
  const chosen = newRun ? ['', ''] : pickers.map((picker) => picker.value);
  for (const picker of pickers) {
    picker.replaceChildren(...state.runs.map((run) => new Option(runLabel(run), run.id)));
  }
  const count = state.runs.length;
  pickers[0].value = chosen[0] || state.runs[Math.max(0, count - 2)]?.id || '';
  pickers[1].value = chosen[1] || state.runs[count - 1]?.id || '';
  const [a, b] = pickers.map((picker) => state.runs.find((run) => run.id === picker.value));
  $('comparison').replaceChildren();
  if (!a || !b || a === b) {
    $('compare-note').textContent = 'Run a second simulation (e.g. with a custom XI) to compare two runs.';
    return;
  }
  $('compare-note').textContent = '';
  const rowsB = new Map(
    marketRows(b.simulation, teamsOf(b.simulation)).map((item) => [`${item.market}|${item.selection}`, item]),
  );
  const body = [
    ['Expected goals', 'Home', a.simulation.goals.expected.home, b.simulation.goals.expected.home],
    ['Expected goals', 'Away', a.simulation.goals.expected.away, b.simulation.goals.expected.away],
  ].map(([market, selection, x, y]) => [
    market,
    selection,
    x.toFixed(2),
    '',
    y.toFixed(2),
    '',
    (y - x).toFixed(2),
  ]);
  for (const item of marketRows(a.simulation, teamsOf(a.simulation))) {
    const other = rowsB.get(`${item.market}|${item.selection}`) ?? scoreFromGrid(b.simulation, item);
    if (!other) continue;
    body.push([
      item.market,
      item.selection,
      formatPercent(item.probability),
      formatOdds(item.odds),
      formatPercent(other.probability),
      formatOdds(other.odds),
      `${((other.probability - item.probability) * 100).toFixed(1)} pp`,
    ]);
  }
  const head = ['Market', 'Selection', 'A', 'A odds', 'B', 'B odds', 'B − A'];
  $('comparison').append(table(`A: ${runLabel(a)} · B: ${runLabel(b)}`, head, body));
}

/** A correct score outside a run's 20 likeliest, read from its score grid instead. */
function scoreFromGrid(doc, item) {
  const score = item.market === 'Correct score' ? /^(\d+)-(\d+)$/.exec(item.selection) : null;
  if (!score) return null;
  const probability = doc.goals.score_grid.cells[Number(score[1])]?.[Number(score[2])] ?? 0;
  return { probability, odds: probability > 0 ? 1 / probability : null };
}

/** `/playground?simulation=sim_…`: that run, read again (free) through GET /v1/simulations/{id}. */
async function loadShared() {
  const id = new URL(location.href).searchParams.get('simulation');
  if (!id) return;
  if (!$('key').value.trim()) {
    $('summary').textContent = `Paste the key that ran ${id}, then press "Load shared run".`;
    $('load-shared').hidden = false;
    return;
  }
  const { body } = await api('GET', `/v1/simulations/${encodeURIComponent(id)}`);
  $('load-shared').hidden = true;
  show(body);
}

/** The custom-lineup editor starts from the XI and formation the shown run used. */
function lineupsFromRun() {
  const doc = state.current?.simulation;
  if (!doc || !state.squads) return;
  for (const side of ['home', 'away']) {
    const lineup = doc.lineups?.[side];
    if (!lineup) continue;
    const xi = new Set(lineup.xi.map((player) => String(player.player_id)));
    for (const input of document.querySelectorAll(`input[id^="xi-${side}-"]`))
      input.checked = xi.has(input.value);
    const formation = $(`formation-${side}`);
    if ([...formation.options].some((option) => option.value === lineup.formation))
      formation.value = lineup.formation;
    countPicked(side);
  }
}

function countPicked(side) {
  const picked = document.querySelectorAll(`input[id^="xi-${side}-"]:checked`).length;
  $(`picked-${side}`).textContent = `${picked} of 11 picked`;
}

async function loadSquads() {
  const { body } = await api('GET', `/v1/fixtures/${fixtureId()}/squads`);
  state.squads = body;
  $('lineups').replaceChildren(sideEditor('home', body), sideEditor('away', body));
  $('lineups-from-run').hidden = false;
}

function sideEditor(side, squads) {
  const set = document.createElement('fieldset');
  const legend = document.createElement('legend');
  legend.textContent = `${squads[side].team.name}: custom XI`;
  const enable = checkbox(`custom-${side}`, 'Use a custom lineup');
  const formation = document.createElement('select');
  formation.id = `formation-${side}`;
  formation.setAttribute('aria-label', `${side} formation`);
  for (const name of squads.formations) formation.append(new Option(name, name));
  const players = document.createElement('div');
  players.className = 'players';
  for (const player of squads[side].players) {
    players.append(
      checkbox(
        `xi-${side}-${player.player_id}`,
        `${player.name} (${player.position ?? '?'})`,
        player.player_id,
      ),
    );
  }
  players.addEventListener('change', () => countPicked(side));
  const picked = document.createElement('p');
  picked.id = `picked-${side}`;
  picked.className = 'picked';
  picked.setAttribute('aria-live', 'polite');
  picked.textContent = '0 of 11 picked';
  const error = document.createElement('p');
  error.className = 'field-error';
  error.dataset.param = `lineups.${side}`;
  error.setAttribute('role', 'status');
  set.append(legend, enable, formation, picked, players, error);
  return set;
}

function checkbox(id, text, value) {
  const label = document.createElement('label');
  const input = document.createElement('input');
  input.type = 'checkbox';
  input.id = id;
  if (value !== undefined) input.value = String(value);
  label.append(input, text);
  return label;
}

function customLineups() {
  if (!state.squads) return null;
  const lineups = {};
  for (const side of ['home', 'away']) {
    if (!$(`custom-${side}`)?.checked) continue;
    const xi = [...document.querySelectorAll(`input[id^="xi-${side}-"]:checked`)].map((input) =>
      Number(input.value),
    );
    lineups[side] = { source: 'custom', xi, formation: $(`formation-${side}`).value };
  }
  return Object.keys(lineups).length ? lineups : null;
}

const guarded = (action) => (event) =>
  action(event).catch((error) => {
    if (!error.handled) showError({ code: 'network', message: String(error.message ?? error) });
  });

$('key').value = sessionStorage.getItem('matchsim-key') ?? '';
$('load-fixtures').addEventListener('click', guarded(loadFixtures));
$('quote').addEventListener('click', guarded(quote));
$('setup').addEventListener('submit', guarded(run));
$('load-squads').addEventListener('click', guarded(loadSquads));
$('lineups-from-run').addEventListener('click', lineupsFromRun);
$('load-shared').addEventListener('click', guarded(loadShared));
$('load-events').addEventListener('click', guarded(loadEvents));
for (const kind of ['json', 'markets', 'players'])
  $(`export-${kind}`).addEventListener('click', () => exportRun(kind));
for (const id of ['compare-a', 'compare-b']) $(id).addEventListener('change', () => refreshComparison());
guarded(loadShared)();
$('fixture').addEventListener('change', () => {
  $('fixture-id').value = '';
  state.squads = null;
  $('lineups').replaceChildren();
  $('lineups-from-run').hidden = true;
});
setupProjection({ $, api, guarded });
setupMarketFit({ $, api, guarded, requestBody, finish, show });
setupPath({ $, api, guarded, selectedFixture: fixtureId });
