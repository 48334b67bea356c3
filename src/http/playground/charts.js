// SVG charts of the playground, drawn by hand: bars, a heat map, lines and a match path. Each function
// replaces the content of `container` with one <svg> whose viewBox scales to the container's width.

const SVG = 'http://www.w3.org/2000/svg';
const HOME = '#0b5e43';
const AWAY = '#c2571a';
const DRAW = '#6b7a73';

function svg(width, height, label) {
  const root = document.createElementNS(SVG, 'svg');
  root.setAttribute('viewBox', `0 0 ${width} ${height}`);
  root.setAttribute('role', 'img');
  root.setAttribute('aria-label', label);
  return root;
}

function add(parent, name, attributes, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  parent.appendChild(node);
  return node;
}

const percent = (p) => `${(p * 100).toFixed(1)}%`;

/** The smallest text a chart may draw on screen, in CSS pixels (test/browser/playground.test.ts measures). */
const MIN_TEXT_PX = 10;

/**
 * Shows `root` in `container`. A chart scales to its container's width, so on a narrow screen its text
 * would shrink with it: it is given the least width at which its smallest text still draws at
 * MIN_TEXT_PX, and past that its container scrolls sideways (with a shadow at the edge that has more).
 */
function mount(container, root) {
  const sizes = [...root.querySelectorAll('text')].map((text) => Number(text.getAttribute('font-size')));
  const smallest = Math.min(...sizes.filter((size) => size > 0));
  if (Number.isFinite(smallest)) {
    root.style.minWidth = `${Math.ceil((root.viewBox.baseVal.width * MIN_TEXT_PX) / smallest)}px`;
  }
  container.replaceChildren(root);
  return root;
}

/** Vertical bars: one per value, each with its label and percentage. */
export function bars(container, items, label) {
  const width = 360;
  const height = 200;
  const root = svg(width, height, label);
  const slot = width / items.length;
  const top = Math.max(...items.map((item) => item.value), 0.0001);
  items.forEach((item, index) => {
    const h = (item.value / top) * 140;
    const x = index * slot + slot * 0.15;
    add(root, 'rect', {
      x,
      y: 170 - h,
      width: slot * 0.7,
      height: Math.max(h, 0.5),
      fill: item.color ?? HOME,
    });
    add(
      root,
      'text',
      { x: x + slot * 0.35, y: 165 - h, 'text-anchor': 'middle', 'font-size': 12 },
      item.text ?? percent(item.value),
    );
    add(root, 'text', { x: x + slot * 0.35, y: 188, 'text-anchor': 'middle', 'font-size': 12 }, item.label);
  });
  return mount(container, root);
}

export function outcomeBars(container, result) {
  return bars(
    container,
    [
      { label: 'Home', value: result.home_win, color: HOME },
      { label: 'Draw', value: result.draw, color: DRAW },
      { label: 'Away', value: result.away_win, color: AWAY },
    ],
    `Home ${percent(result.home_win)}, draw ${percent(result.draw)}, away ${percent(result.away_win)}`,
  );
}

/** The score grid as a heat map, home goals down and away goals across, 0 to `size - 1` each. */
export function heatMap(container, cells, size = 6) {
  const cell = 48;
  const root = svg(cell * (size + 1), cell * (size + 1), 'Score grid heat map');
  const top = Math.max(...cells.slice(0, size).flatMap((row) => row.slice(0, size)), 0.0001);
  for (let home = 0; home < size; home += 1) {
    add(
      root,
      'text',
      { x: cell / 2, y: cell * (home + 1.6), 'text-anchor': 'middle', 'font-size': 13 },
      String(home),
    );
    add(
      root,
      'text',
      { x: cell * (home + 1.5), y: cell * 0.6, 'text-anchor': 'middle', 'font-size': 13 },
      String(home),
    );
    for (let away = 0; away < size; away += 1) {
      const p = cells[home]?.[away] ?? 0;
      const x = cell * (away + 1);
      const y = cell * (home + 1);
      const shade = Math.round(255 - (p / top) * 200);
      add(root, 'rect', {
        x,
        y,
        width: cell - 2,
        height: cell - 2,
        fill: `rgb(${shade},${Math.min(255, shade + 30)},${shade})`,
      });
      add(
        root,
        'text',
        {
          x: x + cell / 2 - 1,
          y: y + cell / 2 + 4,
          'text-anchor': 'middle',
          'font-size': 11,
          fill: p / top > 0.6 ? '#fff' : '#111',
        },
        p ? (p * 100).toFixed(1) : '',
      );
    }
  }
  return mount(container, root);
}

/** A short percentage for a narrow bar: whole percents from 9.5%, one decimal below, nothing under 0.5%. */
const shortPercent = (p) =>
  p < 0.005 ? '' : p >= 0.095 ? `${Math.round(p * 100)}%` : `${(p * 100).toFixed(1)}%`;

/**
 * Home and away goal counts 0 to 6+ as pairs of bars, one group per count with its label under the pair
 * and each bar's percentage above it; a legend names the sides. Sized so that no label is clipped by the
 * chart's edge or meets another, whatever the numbers (the browser test measures them over a sweep of
 * distributions): a pair's labels are 27 units apart, wider than a label, and 30 from the next pair's,
 * and when a pair's bars end within a label's height of each other the taller bar's label is lifted a
 * label's height above the other's, so the two cannot meet however wide the font draws them.
 */
export function goalDistributions(container, distributions, teams = { home: 'Home', away: 'Away' }) {
  const width = 420;
  const height = 210;
  const groups = 7;
  const pad = 10;
  const group = (width - 2 * pad) / groups;
  const bar = group * 0.36;
  const base = 180;
  const labelHeight = 13; // a 10-unit label's box is about 11.6 units tall in the fonts Chromium uses
  const root = svg(width, height, 'Goals of each side');
  const tail = (side, goals) =>
    goals === 6 ? distributions[side].slice(6).reduce((a, b) => a + b, 0) : distributions[side][goals];
  const values = [];
  for (let goals = 0; goals < groups; goals += 1) values.push(tail('home', goals), tail('away', goals));
  const top = Math.max(...values, 0.0001);
  for (let goals = 0; goals < groups; goals += 1) {
    const x0 = pad + goals * group;
    const pair = [
      { side: 'home', color: HOME, x: x0 + group * 0.08 },
      { side: 'away', color: AWAY, x: x0 + group * 0.56 },
    ].map((item) => {
      const p = tail(item.side, goals);
      const h = (p / top) * 130;
      return { ...item, p, h, text: shortPercent(p), y: base - h - 4 };
    });
    const [upper, lower] = pair[0].y <= pair[1].y ? pair : [pair[1], pair[0]];
    if (upper.text !== '' && lower.text !== '' && lower.y - upper.y < labelHeight) {
      upper.y = lower.y - labelHeight;
    }
    for (const { color, x, h, y, text } of pair) {
      add(root, 'rect', { x, y: base - h, width: bar, height: Math.max(h, 0.5), fill: color });
      add(root, 'text', { x: x + bar / 2, y, 'text-anchor': 'middle', 'font-size': 10 }, text);
    }
    add(
      root,
      'text',
      { x: x0 + group / 2, y: base + 16, 'text-anchor': 'middle', 'font-size': 12 },
      goals === 6 ? '6+' : String(goals),
    );
  }
  add(root, 'rect', { x: width - 190, y: 6, width: 10, height: 10, fill: HOME });
  add(root, 'text', { x: width - 176, y: 15, 'font-size': 11 }, teams.home);
  add(root, 'rect', { x: width - 95, y: 6, width: 10, height: 10, fill: AWAY });
  add(root, 'text', { x: width - 81, y: 15, 'font-size': 11 }, teams.away);
  return mount(container, root);
}

/** Lines over the match's steps; `series` = [{ name, values, color }]. */
export function lines(container, labels, series, label) {
  const width = 420;
  const height = 236; // the minute labels, then the legend in its own row below them
  const root = svg(width, height, label);
  const top = Math.max(...series.flatMap((line) => line.values), 0.0001);
  const x = (index) => 30 + (index / (labels.length - 1)) * (width - 40);
  const y = (value) => 190 - (value / top) * 170;
  add(root, 'line', { x1: 30, y1: 190, x2: width - 10, y2: 190, stroke: '#999' });
  for (const [index, text] of labels.entries()) {
    if (text === '1' || text === '45' || text === '90' || text === '46') {
      add(root, 'text', { x: x(index), y: 206, 'text-anchor': 'middle', 'font-size': 11 }, `${text}'`);
    }
  }
  add(root, 'text', { x: 2, y: 24, 'font-size': 11 }, top.toFixed(2));
  series.forEach((line, n) => {
    const points = line.values
      .map((value, index) => `${x(index).toFixed(1)},${y(value).toFixed(1)}`)
      .join(' ');
    add(root, 'polyline', { points, fill: 'none', stroke: line.color, 'stroke-width': 2 });
    add(root, 'text', { x: 30 + n * 125, y: height - 6, 'font-size': 12, fill: line.color }, line.name);
  });
  return mount(container, root);
}

/** Horizontal bars of the players most likely to score. */
export function scorers(container, players, teams) {
  const top = [...players]
    .sort((a, b) => b.probabilities.anytime_scorer - a.probabilities.anytime_scorer)
    .slice(0, 8);
  const width = 420;
  const root = svg(width, top.length * 26 + 10, 'Top scorers');
  top.forEach((player, index) => {
    const p = player.probabilities.anytime_scorer;
    const y = 8 + index * 26;
    const name = player.name.length > 22 ? `${player.name.slice(0, 21)}…` : player.name;
    add(root, 'text', { x: 3, y: y + 14, 'font-size': 12 }, `${name} (${teams[player.team]})`);
    add(root, 'rect', {
      x: 200,
      y,
      width: Math.max(1, p * 200),
      height: 18,
      fill: player.team === 'home' ? HOME : AWAY,
    });
    // Beside the bar, or inside its end when the bar reaches the edge.
    const inside = p > 0.8;
    add(
      root,
      'text',
      {
        x: inside ? 195 + p * 200 : 205 + p * 200,
        y: y + 14,
        'font-size': 12,
        ...(inside ? { 'text-anchor': 'end', fill: '#fff' } : {}),
      },
      percent(p),
    );
  });
  return mount(container, root);
}

/** One simulated match along the 110 steps: goals as dots, cards as squares, above (home) or below (away). */
export function matchPath(container, sample, labels) {
  const width = 720;
  const root = svg(width, 120, `Sample match ending ${sample.score.home}-${sample.score.away}`);
  const x = (minuteLabel) =>
    20 + (Math.max(0, labels.indexOf(minuteLabel)) / (labels.length - 1)) * (width - 40);
  add(root, 'line', { x1: 20, y1: 60, x2: width - 20, y2: 60, stroke: '#555', 'stroke-width': 2 });
  add(
    root,
    'text',
    { x: 20, y: 112, 'font-size': 12 },
    `Final ${sample.score.home}-${sample.score.away} (half time ${sample.half_time.home}-${sample.half_time.away})`,
  );
  for (const event of sample.events) {
    const cx = x(event.minute_label);
    const cy = event.team === 'home' ? 35 : 85;
    const color = event.team === 'home' ? HOME : AWAY;
    if (event.type === 'goal') add(root, 'circle', { cx, cy, r: 7, fill: color });
    else if (event.type.endsWith('card'))
      add(root, 'rect', {
        x: cx - 4,
        y: cy - 6,
        width: 8,
        height: 12,
        fill: event.type === 'red_card' ? '#c62828' : '#e6b800',
      });
    else add(root, 'line', { x1: cx, y1: cy - 5, x2: cx, y2: cy + 5, stroke: color });
  }
  return mount(container, root);
}

/**
 * A season projection's places × clubs heat map: one row per club (in the order given), one column per
 * final place, each cell shaded by its probability and labelled with whole percents from 1%.
 */
export function placesHeatMap(container, teams) {
  const places = teams.length;
  const cell = 30;
  const left = 150;
  const root = svg(
    left + cell * places,
    cell * (places + 1),
    'Final place probabilities, clubs down, places across',
  );
  for (let place = 0; place < places; place += 1) {
    add(
      root,
      'text',
      { x: left + cell * (place + 0.5), y: 20, 'text-anchor': 'middle', 'font-size': 12 },
      String(place + 1),
    );
  }
  teams.forEach((team, row) => {
    const y = cell * (row + 1);
    const name = team.team.name.length > 20 ? `${team.team.name.slice(0, 19)}…` : team.team.name;
    add(root, 'text', { x: 3, y: y + cell / 2 + 4, 'font-size': 12 }, name);
    team.positions.forEach((p, place) => {
      const shade = Math.round(255 - Math.min(1, p / 0.5) * 200);
      add(root, 'rect', {
        x: left + place * cell,
        y,
        width: cell - 1,
        height: cell - 1,
        fill: `rgb(${shade},${Math.min(255, shade + 30)},${shade})`,
      });
      if (p >= 0.01) {
        add(
          root,
          'text',
          {
            x: left + place * cell + cell / 2,
            y: y + cell / 2 + 4,
            'text-anchor': 'middle',
            'font-size': 10,
            fill: p > 0.3 ? '#fff' : '#111',
          },
          String(Math.round(p * 100)),
        );
      }
    });
  });
  return mount(container, root);
}

/** Horizontal bars, one per item ({label, value} with value in [0, 1]), the percentage beside each. */
export function horizontalBars(container, items, label, color = HOME) {
  const width = 420;
  const root = svg(width, items.length * 22 + 8, label);
  items.forEach((item, index) => {
    const y = 4 + index * 22;
    const name = item.label.length > 22 ? `${item.label.slice(0, 21)}…` : item.label;
    add(root, 'text', { x: 3, y: y + 14, 'font-size': 12 }, name);
    add(root, 'rect', { x: 170, y, width: Math.max(1, item.value * 190), height: 16, fill: color });
    add(root, 'text', { x: 175 + item.value * 190, y: y + 13, 'font-size': 11 }, percent(item.value));
  });
  return mount(container, root);
}

/** Running sums of a series (expected goals by minute drawn as a line). */
export function cumulative(values) {
  let sum = 0;
  return values.map((value) => {
    sum += value;
    return sum;
  });
}

/**
 * A win-probability path (the "worm"): at each minute the home win (bottom), draw and away win (top)
 * stacked to 1, with the events marked above the minute they happened in. `points` = [{ minute, result }]
 * in minute order; `events` = [{ minute, type, team }].
 */
export function worm(container, points, events, teams = { home: 'Home', away: 'Away' }) {
  const width = 720;
  const height = 250;
  const top = 30;
  const bottom = 200;
  const root = svg(width, height, `Win probability by minute, ${points.length} minutes`);
  const x = (index) => 40 + (index / Math.max(1, points.length - 1)) * (width - 60);
  const y = (p) => bottom - p * (bottom - top);
  const band = (lower, upper, fill, name) => {
    const upperLine = points.map((point, i) => `${x(i).toFixed(1)},${y(upper(point.result)).toFixed(1)}`);
    const lowerLine = points
      .map((point, i) => `${x(i).toFixed(1)},${y(lower(point.result)).toFixed(1)}`)
      .reverse();
    add(root, 'polygon', { points: [...upperLine, ...lowerLine].join(' '), fill, 'data-band': name });
  };
  band(
    () => 0,
    (r) => r.home_win,
    HOME,
    'home_win',
  );
  band(
    (r) => r.home_win,
    (r) => r.home_win + r.draw,
    DRAW,
    'draw',
  );
  band(
    (r) => r.home_win + r.draw,
    () => 1,
    AWAY,
    'away_win',
  );
  for (const p of [0, 0.5, 1]) {
    add(root, 'text', { x: 34, y: y(p) + 4, 'text-anchor': 'end', 'font-size': 11 }, `${p * 100}%`);
  }
  for (const [index, point] of points.entries()) {
    if (['1', '45', '46', '90'].includes(point.minute)) {
      add(
        root,
        'text',
        { x: x(index), y: bottom + 16, 'text-anchor': 'middle', 'font-size': 11 },
        `${point.minute}'`,
      );
    }
  }
  // An event shows from the minute after it (the state at a minute holds the events before it).
  for (const event of events) {
    const index = points.findIndex((point) => point.minute === event.minute);
    if (index < 0) continue;
    const cx = x(Math.min(index + 1, points.length - 1));
    const color = event.team === 'home' ? HOME : AWAY;
    add(root, 'line', { x1: cx, y1: top - 4, x2: cx, y2: bottom, stroke: '#222', 'stroke-dasharray': '3 3' });
    const marker =
      event.type === 'goal'
        ? add(root, 'circle', { cx, cy: top - 12, r: 6, fill: color })
        : add(root, 'rect', {
            x: cx - 4,
            y: top - 19,
            width: 8,
            height: 12,
            fill: event.type === 'red_card' ? '#c62828' : event.type === 'yellow_card' ? '#e6b800' : color,
          });
    marker.setAttribute('data-event', `${event.type} ${event.team} ${event.minute}`);
  }
  const legend = [
    [`${teams.home} win`, HOME],
    ['Draw', DRAW],
    [`${teams.away} win`, AWAY],
  ];
  legend.forEach(([name, color], n) => {
    add(root, 'rect', { x: 40 + n * 200, y: height - 20, width: 10, height: 10, fill: color });
    add(root, 'text', { x: 54 + n * 200, y: height - 11, 'font-size': 12 }, name);
  });
  return mount(container, root);
}
