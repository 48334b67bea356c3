// The playground's win-probability path (docs/api.md §4.14): the chosen fixture, its events typed one a
// line ("30 goal home", "60 red_card away 406", "70 substitution home 322 311": minute, type, team, then
// the player, and for a substitution the player going off), the last minute and the draws a minute;
// quoted, queued as a batch, followed until it completes and drawn from its results as the worm
// (charts.js) with the events marked.
import { worm } from './charts.js';

const TYPES = ['goal', 'red_card', 'yellow_card', 'substitution'];

/** The events typed in the box, or an error naming the line. */
export function parseEvents(text) {
  const events = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const [minute, type, team, player, off] = line.split(/\s+/);
    if (!TYPES.includes(type) || (team !== 'home' && team !== 'away')) {
      throw new Error(
        `line ${index + 1}: write "minute type team [player] [player off]", type one of ${TYPES.join(', ')}`,
      );
    }
    const event = { minute, type, team };
    if (player !== undefined) event.player_id = Number(player);
    if (off !== undefined) event.player_off_id = Number(off);
    events.push(event);
  }
  return events;
}

/** The NDJSON lines of a batch's results (api() reads one JSON body). */
async function resultLines(path) {
  const key = $key();
  const response = await fetch(path, { headers: { Authorization: `Bearer ${key}` } });
  const text = await response.text();
  return text
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

let $key = () => '';

/** Wires the path form: `api` is the playground's call helper, `selectedFixture` the chosen fixture id. */
export function setupPath({ $, api, guarded, selectedFixture }) {
  $key = () => $('key').value.trim();
  const body = () => {
    const fixtureId = selectedFixture();
    return {
      fixture_id: fixtureId,
      events: parseEvents($('path-events').value),
      through: $('path-through').value.trim() || undefined,
      draws: Number($('path-draws').value),
    };
  };
  $('path-quote').addEventListener(
    'click',
    guarded(async () => {
      const { body: quote } = await api('POST', '/v1/simulations/path/quote', body());
      $('path-summary').textContent =
        `${quote.steps} minutes × ${quote.draws_per_step} draws: ${quote.price.credits} credits.`;
    }),
  );
  $('path-form').addEventListener(
    'submit',
    guarded(async (event) => {
      event.preventDefault();
      const request = body();
      $('path-run').disabled = true;
      try {
        const { body: batch } = await api('POST', '/v1/simulations/path', request);
        let status = batch;
        while (status.status !== 'completed' && status.status !== 'cancelled') {
          $('path-summary').textContent =
            `Simulating ${status.counts.total} minutes: ${status.counts.succeeded} done…`;
          await new Promise((resolve) => setTimeout(resolve, 500));
          ({ body: status } = await api('GET', `/v1/simulations/batch/${batch.batch_id}`));
        }
        const lines = await resultLines(`${batch.results_url}?include=fixture,result,state`);
        const points = lines
          .filter((line) => line.simulation)
          .map((line) => ({ minute: line.custom_id, result: line.simulation.simulation.result }));
        const fixture = lines.find((line) => line.simulation)?.simulation.simulation.fixture;
        const teams = fixture ? { home: fixture.home.short_name, away: fixture.away.short_name } : undefined;
        worm($('chart-worm'), points, request.events, teams);
        const last = points.at(-1);
        $('path-summary').textContent =
          `${points.length} minutes; at ${last.minute}': home ${(100 * last.result.home_win).toFixed(1)}%, draw ${(100 * last.result.draw).toFixed(1)}%, away ${(100 * last.result.away_win).toFixed(1)}%.`;
      } finally {
        $('path-run').disabled = false;
      }
    }),
  );
}
