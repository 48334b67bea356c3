// The playground's market panel (docs/api.md §4.3, "Fitted to the market" and "Value against offered
// prices"): bookmaker odds to fit a run to, odds offered to value, and the fitted run beside the unfitted
// one with each offered price's edge, marked where it is more than two Monte Carlo standard errors from
// zero. The pure parts (what the fields ask for, the table's rows) take no DOM, so a test can run them.
import { formatOdds, formatPercent } from './markets.js';

/** The offered prices the panel asks for: the value section's key and the label shown. */
export const OFFERED = [
  ['home_win', 'Home win'],
  ['draw', 'Draw'],
  ['away_win', 'Away win'],
  ['over_2_5', 'Over 2.5'],
  ['under_2_5', 'Under 2.5'],
  ['btts_yes', 'Both score'],
  ['btts_no', 'Not both score'],
];

const numbers = (text) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map(Number);

/** The request's `market` from the panel's texts, or null when no 1X2 odds are entered. */
export function marketRequest({ oneByTwo, total, fit, method }) {
  if (oneByTwo.trim() === '') return null;
  const market = { odds: { '1x2': numbers(oneByTwo) }, margin_method: method, fit };
  if (total.trim() !== '') market.odds['total_2.5'] = numbers(total);
  return market;
}

/** The request's `offered_odds` from the panel's texts by key, or null when none is entered. */
export function offeredRequest(texts) {
  const offered = {};
  for (const [key] of OFFERED) if ((texts[key] ?? '').trim() !== '') offered[key] = Number(texts[key]);
  return Object.keys(offered).length > 0 ? offered : null;
}

const probabilityOf = (doc, key) => {
  if (key === 'home_win' || key === 'draw' || key === 'away_win') return doc.result[key];
  if (key === 'btts_yes') return doc.markets.btts.yes;
  if (key === 'btts_no') return doc.markets.btts.no;
  const total = doc.markets.totals.find((line) => line.line === 2.5);
  return key === 'over_2_5' ? total.over : total.under;
};

/**
 * One row per outcome of the panel: the unfitted and fitted runs' probabilities, the market's target
 * where the fit had one, and the fitted run's value against the offered price (`marked` when the edge
 * is positive by more than two standard errors).
 */
export function comparisonRows(unfitted, fitted) {
  const targets = fitted.calibration?.targets ?? {};
  return OFFERED.map(([key, label]) => {
    const value = fitted.value?.[key] ?? null;
    return {
      key,
      label,
      unfitted: probabilityOf(unfitted, key),
      fitted: probabilityOf(fitted, key),
      target:
        targets[key] ?? (key === 'under_2_5' && targets.over_2_5 !== undefined ? 1 - targets.over_2_5 : null),
      value,
      marked: value !== null && value.edge > 2 * value.edge_standard_error,
    };
  });
}

const edgeText = (value) =>
  value === null
    ? '—'
    : `${value.edge >= 0 ? '+' : '−'}${formatPercent(Math.abs(value.edge))} ± ${formatPercent(value.edge_standard_error)}`;

/** Wires the panel: its button runs the unfitted and the fitted simulation and shows them side by side. */
export function setupMarketFit({ $, api, guarded, requestBody, finish, show }) {
  const texts = () => Object.fromEntries(OFFERED.map(([key]) => [key, $(`offered-${key}`).value]));
  const runOne = async (body) => {
    const started = await api('POST', '/v1/simulations', { ...body, wait_seconds: 0 });
    return finish(started.body);
  };
  $('market-run').addEventListener(
    'click',
    guarded(async () => {
      const market = marketRequest({
        oneByTwo: $('odds-1x2').value,
        total: $('odds-total').value,
        fit: $('market-fit').value,
        method: $('margin-method').value,
      });
      if (market === null) {
        $('market-note').textContent = 'Enter the 1X2 odds first (home, draw, away).';
        return;
      }
      $('market-run').disabled = true;
      try {
        const offered = offeredRequest(texts());
        const unfitted = await runOne(requestBody());
        const fitted = await runOne({
          ...requestBody(),
          market,
          ...(offered ? { offered_odds: offered } : {}),
        });
        show(unfitted);
        show(fitted);
        render($, unfitted.simulation, fitted.simulation);
      } finally {
        $('market-run').disabled = false;
      }
    }),
  );
}

function render($, unfitted, fitted) {
  const { calibration } = fitted;
  $('market-note').textContent =
    `Fitted (${calibration.fit}, ${calibration.method}) to ${calibration.fitted_to.join(', ')}: goals ` +
    `${calibration.fitted_goals.home.toFixed(2)}–${calibration.fitted_goals.away.toFixed(2)}, the model's ` +
    `${calibration.rated_goals.home.toFixed(2)}–${calibration.rated_goals.away.toFixed(2)}. Marked: an edge above two standard errors.`;
  const node = document.createElement('table');
  node.createCaption().textContent = 'Unfitted and fitted runs against the market';
  const head = node.createTHead().insertRow();
  for (const text of ['Outcome', 'Unfitted', 'Fitted', 'Market', 'Offered', 'Fair odds', 'Edge', 'Kelly']) {
    const cell = document.createElement('th');
    cell.textContent = text;
    head.append(cell);
  }
  const body = node.createTBody();
  for (const row of comparisonRows(unfitted, fitted)) {
    const line = body.insertRow();
    line.dataset.outcome = row.key;
    if (row.marked) line.className = 'edge';
    const cells = [
      row.label,
      formatPercent(row.unfitted),
      formatPercent(row.fitted),
      row.target === null ? '—' : formatPercent(row.target),
      row.value ? formatOdds(row.value.offered_odds) : '—',
      formatOdds(row.fitted > 0 ? 1 / row.fitted : null),
      edgeText(row.value),
      row.value ? formatPercent(row.value.kelly) : '—',
    ];
    for (const text of cells) line.insertCell().textContent = text;
  }
  $('market-compare').replaceChildren(node);
}
