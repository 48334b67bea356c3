// The playground (docs/api.md §4.9): paste a key, pick a fixture on sale, quote, run a simulation, follow
// its job with a progress bar, then draw its charts (charts.js). Calls the API of this same service.
import { goalDistributions, heatMap, lines, matchPath, outcomeBars, scorers } from './charts.js';

const $ = (id) => document.getElementById(id);
const state = { squads: null };

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

async function loadFixtures() {
  const { body } = await api('GET', '/v1/fixtures?status=fresh&limit=100');
  const select = $('fixture');
  select.replaceChildren();
  for (const fixture of body.data) {
    const option = document.createElement('option');
    option.value = String(fixture.fixture_id);
    const when = new Date(fixture.kickoff).toISOString().slice(0, 16).replace('T', ' ');
    option.textContent = `${fixture.home.name} – ${fixture.away.name} (${when} UTC)`;
    select.append(option);
  }
  if (body.data.length === 0)
    select.append(new Option('No fixture on sale (test keys list none: use an id)', ''));
  select.disabled = body.data.length === 0;
  state.squads = null;
  $('lineups').replaceChildren();
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
    const simulation = started.body.object === 'simulation' ? started.body : await follow(started.body);
    draw(simulation);
  } finally {
    $('run').disabled = false;
    $('progress-box').hidden = true;
  }
}

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

function cumulative(values) {
  let sum = 0;
  return values.map((value) => {
    sum += value;
    return sum;
  });
}

function draw(delivered) {
  const doc = delivered.simulation;
  const teams = { home: doc.fixture.home.short_name, away: doc.fixture.away.short_name };
  $('summary').textContent =
    `${doc.fixture.home.name} – ${doc.fixture.away.name}: ${doc.basis.draws} draws, expected goals ${doc.goals.expected.home.toFixed(2)} – ${doc.goals.expected.away.toFixed(2)}; ${delivered.credits_charged} credits charged.`;
  outcomeBars($('chart-1x2'), doc.result);
  heatMap($('chart-grid'), doc.goals.score_grid.cells);
  goalDistributions($('chart-goals'), doc.goals.distributions);
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

async function loadSquads() {
  const { body } = await api('GET', `/v1/fixtures/${fixtureId()}/squads`);
  state.squads = body;
  $('lineups').replaceChildren(sideEditor('home', body), sideEditor('away', body));
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
  const error = document.createElement('p');
  error.className = 'field-error';
  error.dataset.param = `lineups.${side}`;
  error.setAttribute('role', 'status');
  set.append(legend, enable, formation, players, error);
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
$('fixture').addEventListener('change', () => {
  $('fixture-id').value = '';
  state.squads = null;
  $('lineups').replaceChildren();
});
