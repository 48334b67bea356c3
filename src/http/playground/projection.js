// The playground's season projection (docs/api.md §4.12): a competition id (the chosen fixture's, when
// fixtures are loaded) and a number of seasons; the projection's table with expected points and zone
// odds, a places × clubs heat map, and title and relegation bars (charts.js). Followed through its job
// like a simulation when it is not ready within the request.
import { horizontalBars, placesHeatMap } from './charts.js';
import { formatPercent } from './markets.js';

/** A zone's column title: its name in words and its places ("Top four (1–4)" for `top_four`). */
export function zoneTitle(zone) {
  const words = zone.name.replaceAll('_', ' ');
  const places = zone.from === zone.to ? `${zone.from}` : `${zone.from}–${zone.to}`;
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} (${places})`;
}

/** The table: rank, club, played, points, expected points, then each zone's probability. */
function projectionTable(projection) {
  const table = document.createElement('table');
  const zones = projection.zones.map((zone) => zone.name);
  const head = table.createTHead().insertRow();
  for (const title of [
    '#',
    'Club',
    'Played',
    'Points',
    'Expected points',
    ...projection.zones.map(zoneTitle),
  ]) {
    const cell = document.createElement('th');
    cell.scope = 'col';
    cell.textContent = title;
    head.append(cell);
  }
  const body = table.createTBody();
  projection.teams.forEach((team, index) => {
    const row = body.insertRow();
    const values = [
      index + 1,
      team.team.name,
      team.played,
      team.points,
      team.expected_points.toFixed(1),
      ...zones.map((zone) => formatPercent(team.zones[zone])),
    ];
    for (const value of values) row.insertCell().textContent = String(value);
  });
  return table;
}

export function showProjection($, projection) {
  $('projection-summary').textContent =
    `${projection.competition.name} ${projection.competition.season}: ${projection.seasons} seasons, ${projection.played_fixtures} fixtures played, ${projection.remaining_fixtures} to play; ${projection.credits_charged} credits charged.`;
  $('projection-table').replaceChildren(projectionTable(projection));
  placesHeatMap($('chart-places'), projection.teams);
  const byTitle = [...projection.teams].sort((a, b) => b.title - a.title).slice(0, 8);
  horizontalBars(
    $('chart-title'),
    byTitle.map((team) => ({ label: team.team.name, value: team.title })),
    'Title probabilities',
  );
  const relegation = (team) => team.zones.relegation ?? 0;
  const byRelegation = [...projection.teams].sort((a, b) => relegation(b) - relegation(a)).slice(0, 8);
  horizontalBars(
    $('chart-relegation'),
    byRelegation.map((team) => ({ label: team.team.name, value: relegation(team) })),
    'Relegation probabilities',
    '#c2571a',
  );
}

/** The chosen fixture's competition (0 when none is chosen). */
const selectedCompetition = ($) => Number($('fixture').selectedOptions[0]?.dataset.competition ?? 0);

/** Wires the projection form: `api` is the playground's call helper. */
export function setupProjection({ $, api, guarded }) {
  $('projection').addEventListener(
    'submit',
    guarded(async (event) => {
      event.preventDefault();
      const typed = Number($('competition-id').value);
      const competitionId = typed > 0 ? typed : selectedCompetition($);
      const body = { competition_id: competitionId, seasons: Number($('seasons').value), wait_seconds: 25 };
      $('project').disabled = true;
      try {
        let { status, body: answer } = await api('POST', '/v1/projections', body);
        while (status === 202) {
          await new Promise((resolve) => setTimeout(resolve, answer.retry_after_seconds * 1000));
          const url = new URL(answer.result_url, location.href);
          ({ status, body: answer } = await api('GET', url.pathname + url.search));
        }
        showProjection($, answer);
      } finally {
        $('project').disabled = false;
      }
    }),
  );
}
