// The markets of a simulation document (docs/api.md §2.3) as rows with their fair prices, and the players'
// probabilities, for the playground's tables, its CSV downloads and its side-by-side comparison. Pure
// functions of the document: no DOM here, so a test can run them in Node as well.

/**
 * Fair decimal odds of a selection: 1/p, or (1 − refund)/p where a push refunds the stake (Asian
 * handicaps on whole lines); null where the probability is 0.
 */
export function fairOdds(probability, refund = 0) {
  return probability > 0 ? (1 - refund) / probability : null;
}

const signed = (line) => (line > 0 ? `+${line}` : line < 0 ? `−${-line}` : '0');

function row(market, selection, probability, push = null) {
  return { market, selection, probability, push, odds: fairOdds(probability, push ?? 0) };
}

/** Every market of the document, in the document's order; `teams` = {home, away} display names. */
export function marketRows(doc, teams) {
  const { result, markets, half_time: halfTime, goal_events: goalEvents } = doc;
  const rows = [
    row('Match result', teams.home, result.home_win),
    row('Match result', 'Draw', result.draw),
    row('Match result', teams.away, result.away_win),
    row('Double chance', `${teams.home} or draw`, markets.double_chance.home_or_draw),
    row('Double chance', `${teams.home} or ${teams.away}`, markets.double_chance.home_or_away),
    row('Double chance', `Draw or ${teams.away}`, markets.double_chance.draw_or_away),
    row('Both teams to score', 'Yes', markets.btts.yes),
    row('Both teams to score', 'No', markets.btts.no),
  ];
  for (const total of markets.totals) {
    rows.push(row('Total goals', `Over ${total.line}`, total.over));
    rows.push(row('Total goals', `Under ${total.line}`, total.under));
  }
  for (const handicap of markets.handicaps) {
    rows.push(
      row('Asian handicap', `${teams[handicap.team]} ${signed(handicap.line)}`, handicap.win, handicap.push),
    );
  }
  rows.push(
    row('Half-time result', teams.home, halfTime.result.home_win),
    row('Half-time result', 'Draw', halfTime.result.draw),
    row('Half-time result', teams.away, halfTime.result.away_win),
  );
  for (const [key, probability] of Object.entries(halfTime.ht_ft))
    rows.push(row('Half-time/full-time', key, probability));
  for (const score of markets.scorelines) {
    rows.push(row('Correct score', `${score.home}-${score.away}`, score.probability));
  }
  if (goalEvents) {
    rows.push(
      row('First goal', teams.home, goalEvents.first_goal.home),
      row('First goal', teams.away, goalEvents.first_goal.away),
      row('First goal', 'No goal', goalEvents.first_goal.none),
    );
  }
  return rows;
}

const PROBABILITIES = [
  'anytime_scorer',
  'two_plus_goals',
  'hat_trick',
  'first_scorer',
  'assist',
  'goal_or_assist',
  'yellow_card',
  'red_card',
];
const BOX_SCORE = ['goals', 'assists', 'shots', 'shots_on_target', 'yellow_cards', 'red_cards'];

export const PLAYER_COLUMNS = [
  'player_id',
  'name',
  'team',
  'position',
  'starts',
  'appears',
  'expected_minutes',
  ...PROBABILITIES,
  ...BOX_SCORE.map((name) => `expected_${name}`),
];

/** One row per squad player, in PLAYER_COLUMNS' order. */
export function playerRows(doc) {
  return doc.players.map((player) => [
    player.player_id,
    player.name,
    player.team,
    player.position ?? '',
    player.starts,
    player.appears,
    player.expected_minutes,
    ...PROBABILITIES.map((name) => player.probabilities[name]),
    ...BOX_SCORE.map((name) => player.box_score[name]),
  ]);
}

export const MARKET_COLUMNS = ['market', 'selection', 'probability', 'push', 'fair_odds'];

export function marketCsvRows(rows) {
  return rows.map((item) => [
    item.market,
    item.selection,
    item.probability,
    item.push ?? '',
    item.odds ?? '',
  ]);
}

/** RFC 4180 CSV: fields with a comma, a quote or a line break are quoted, quotes doubled; CRLF lines. */
export function toCsv(columns, rows) {
  const field = (value) => {
    const text = value === null || value === undefined ? '' : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return `${[columns, ...rows].map((line) => line.map(field).join(',')).join('\r\n')}\r\n`;
}

export const formatOdds = (odds) => (odds === null ? '—' : odds >= 100 ? odds.toFixed(0) : odds.toFixed(2));
export const formatPercent = (p) => `${(p * 100).toFixed(1)}%`;
