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

/** The narrowest a chart drawn to its container's width is drawn; a narrower container scrolls. */
const MIN_FITTED_WIDTH = 300;

/**
 * Draws a chart at its container's width, one SVG unit to one CSS pixel, so that its text keeps the
 * size it is given (12 px) on a phone as on a desktop, and every part of it (events, legends) is on
 * screen without scrolling; `draw(width)` returns the <svg>. Drawn again when the container's width
 * changes (a phone turned, a window resized).
 */
function drawnToWidth(container, preferred, draw) {
  const render = () => {
    const width = Math.max(MIN_FITTED_WIDTH, Math.floor(container.clientWidth) || preferred);
    container.dataset.drawnWidth = String(width);
    return mount(container, draw(width));
  };
  container.redrawChart = render;
  if (!container.widthWatch && typeof ResizeObserver === 'function') {
    container.widthWatch = new ResizeObserver(() => {
      const width = Math.max(MIN_FITTED_WIDTH, Math.floor(container.clientWidth));
      if (width !== Number(container.dataset.drawnWidth)) container.redrawChart();
    });
    container.widthWatch.observe(container);
  }
  return render();
}

/** About how wide `text` draws at `size` px (the playground's sans-serif: a little over half its size). */
const textWidth = (text, size) => text.length * size * 0.62;

/**
 * A legend of coloured squares and names, laid left to right from `x` and wrapped onto another row where
 * the next entry would pass `right`; returns the y below its last row.
 */
function legend(root, entries, x, y, right, size = 12) {
  let left = x;
  let row = y;
  for (const [name, color] of entries) {
    const width = 14 + textWidth(name, size) + 16;
    if (left > x && left + width > right) {
      left = x;
      row += size + 8;
    }
    add(root, 'rect', { x: left, y: row - size + 2, width: 10, height: 10, fill: color });
    add(root, 'text', { x: left + 14, y: row, 'font-size': size }, name);
    left += width;
  }
  return row + 8;
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
  // The legend at the left, where a phone's screen opens on a chart wider than it (mount).
  legend(
    root,
    [
      [teams.home, HOME],
      [teams.away, AWAY],
    ],
    pad,
    15,
    width,
    11,
  );
  return mount(container, root);
}

/**
 * The x of each of the match's steps from `left` to `right`, and the minute labels worth printing under
 * them: 1', 15', 30', 45', 60', 75', 90', and where the steps hold added time (45+1 … 45+10, 90+1 …),
 * its stretch as steps of its own with "+n" under it; a label that would meet the one before is left out.
 */
function minuteAxis(labels, left, right) {
  const step = (right - left) / Math.max(1, labels.length - 1);
  const x = (index) => left + index * step;
  const added = [];
  for (const [index, label] of labels.entries()) {
    if (!label.includes('+')) continue;
    const half = label.split('+')[0];
    const stretch = added.at(-1);
    if (stretch && stretch.half === half && stretch.last === index - 1) stretch.last = index;
    else added.push({ half, first: index, last: index });
  }
  // The added-time stretches' labels first, then the minutes' where they meet none already placed.
  const candidates = [
    ...added.map((s) => ({ x: (x(s.first) + x(s.last)) / 2, text: `+${s.last - s.first + 1}` })),
    ...labels
      .map((label, index) => ({ label, index }))
      .filter(({ label }) => ['1', '15', '30', '45', '60', '75', '90'].includes(label))
      .map(({ label, index }) => ({ x: x(index), text: `${label}'` })),
  ];
  const ticks = [];
  for (const tick of candidates) {
    const half = textWidth(tick.text, 11) / 2 + 2;
    if (ticks.every((other) => Math.abs(other.x - tick.x) >= half + textWidth(other.text, 11) / 2 + 2))
      ticks.push(tick);
  }
  return {
    x,
    ticks,
    added: added.map((s) => ({ ...s, x1: x(s.first) - step / 2, x2: x(s.last) + step / 2 })),
  };
}

/** The minute axis under a chart: its line, the added-time stretches shaded, the labels at `y`. */
function drawMinuteAxis(root, axis, baseline, y) {
  for (const stretch of axis.added) {
    add(root, 'rect', {
      x: stretch.x1,
      y: baseline + 1,
      width: Math.max(1, stretch.x2 - stretch.x1),
      height: 5,
      fill: '#b8c4be',
      'data-added-time': `${stretch.half}+`,
    });
  }
  for (const tick of axis.ticks) {
    add(root, 'text', { x: tick.x, y, 'text-anchor': 'middle', 'font-size': 11 }, tick.text);
  }
}

/** Lines over the match's steps; `series` = [{ name, values, color }]. Drawn to its container's width. */
export function lines(container, labels, series, label) {
  return drawnToWidth(container, 420, (width) => {
    const plotBottom = 190;
    const entries = series.map((line) => [line.name, line.color]);
    // The legend's rows below the minute labels decide the height: draw it on a scratch root first.
    const height = legend(svg(width, 1, ''), entries, 30, plotBottom + 38, width - 4) + 2;
    const root = svg(width, height, label);
    const top = Math.max(...series.flatMap((line) => line.values), 0.0001);
    const axis = minuteAxis(labels, 30, width - 10);
    const y = (value) => plotBottom - (value / top) * 170;
    add(root, 'line', { x1: 30, y1: plotBottom, x2: width - 10, y2: plotBottom, stroke: '#999' });
    drawMinuteAxis(root, axis, plotBottom, plotBottom + 18);
    add(root, 'text', { x: 2, y: 14, 'font-size': 11 }, top.toFixed(2));
    for (const line of series) {
      const points = line.values
        .map((value, index) => `${axis.x(index).toFixed(1)},${y(value).toFixed(1)}`)
        .join(' ');
      add(root, 'polyline', { points, fill: 'none', stroke: line.color, 'stroke-width': 2 });
    }
    legend(root, entries, 30, plotBottom + 38, width - 4);
    return root;
  });
}

/**
 * Horizontal bars of the players most likely to score, drawn to the container's width at 12 px: the
 * name beside its bar where there is room, above it on a narrow screen.
 */
export function scorers(container, players, teams) {
  const top = [...players]
    .sort((a, b) => b.probabilities.anytime_scorer - a.probabilities.anytime_scorer)
    .slice(0, 8);
  return drawnToWidth(container, 420, (width) => {
    const stacked = width < 400;
    const row = stacked ? 40 : 26;
    const barLeft = stacked ? 3 : 200;
    const barWidth = width - barLeft - 52; // room for "100.0%" beside a full bar
    const root = svg(width, top.length * row + 10, 'Top scorers');
    top.forEach((player, index) => {
      const p = player.probabilities.anytime_scorer;
      const y = 8 + index * row;
      const name = player.name.length > 22 ? `${player.name.slice(0, 21)}…` : player.name;
      add(root, 'text', { x: 3, y: y + 14, 'font-size': 12 }, `${name} (${teams[player.team]})`);
      const barTop = stacked ? y + 19 : y;
      add(root, 'rect', {
        x: barLeft,
        y: barTop,
        width: Math.max(1, p * barWidth),
        height: stacked ? 14 : 18,
        fill: player.team === 'home' ? HOME : AWAY,
      });
      add(
        root,
        'text',
        { x: barLeft + 5 + p * barWidth, y: barTop + (stacked ? 12 : 14), 'font-size': 12 },
        percent(p),
      );
    });
    return root;
  });
}

/**
 * One simulated match along its steps, drawn to the container's width: goals as dots, cards as squares,
 * above (home) or below (away), the minute axis (added time as steps of its own) and the score under it.
 */
export function matchPath(container, sample, labels) {
  return drawnToWidth(container, 720, (width) => {
    const root = svg(width, 140, `Sample match ending ${sample.score.home}-${sample.score.away}`);
    const axis = minuteAxis(labels, 20, width - 20);
    const x = (minuteLabel) => axis.x(Math.max(0, labels.indexOf(minuteLabel)));
    add(root, 'line', { x1: 20, y1: 60, x2: width - 20, y2: 60, stroke: '#555', 'stroke-width': 2 });
    drawMinuteAxis(root, axis, 100, 116);
    add(root, 'line', { x1: 20, y1: 100, x2: width - 20, y2: 100, stroke: '#ccc' });
    add(
      root,
      'text',
      { x: 20, y: 134, 'font-size': 12 },
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
    return root;
  });
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
 * stacked to 1, with the events marked above the minute they happened in, each with its minute. Drawn
 * to the container's width, so on a phone the whole path and every event are on screen at once; each
 * step is a minute of its own, added time included (its stretches shaded under the axis, "+10" under
 * them). `points` = [{ minute, result }]; `events` = [{ minute, type, team }].
 */
export function worm(container, points, events, teams = { home: 'Home', away: 'Away' }) {
  // The timeline's order (1 … 45, 45+1 … 45+10, 46 … 90, 90+1 …), whatever order the results came in.
  const order = (label) => {
    const [minute, extra] = label.split('+').map(Number);
    return minute + (minute > 45 ? 10 : 0) + (extra ?? 0);
  };
  const ordered = [...points].sort((a, b) => order(a.minute) - order(b.minute));
  const labels = ordered.map((point) => point.minute);
  return drawnToWidth(container, 720, (width) => {
    const entries = [
      [`${teams.home} win`, HOME],
      ['Draw', DRAW],
      [`${teams.away} win`, AWAY],
    ];
    const bottom = 230;
    const height = legend(svg(width, 1, ''), entries, 40, bottom + 40, width - 4) + 2;
    const root = svg(width, height, `Win probability by minute, ${ordered.length} minutes`);
    // Two rows of minute labels and the markers above the plot (eventMarkers).
    const top = 56;
    const axis = minuteAxis(labels, 40, width - 12);
    const y = (p) => bottom - p * (bottom - top);
    const band = (lower, upper, fill, name) => {
      const upperLine = ordered.map(
        (point, i) => `${axis.x(i).toFixed(1)},${y(upper(point.result)).toFixed(1)}`,
      );
      const lowerLine = ordered
        .map((point, i) => `${axis.x(i).toFixed(1)},${y(lower(point.result)).toFixed(1)}`)
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
    drawMinuteAxis(root, axis, bottom, bottom + 20);
    eventMarkers(root, events, labels, axis, { width, bottom });
    legend(root, entries, 40, bottom + 40, width - 4);
    return root;
  });
}

/**
 * The worm's events: a marker above the minute after each (the state at a minute holds the events before
 * it), a dashed line down to the axis, and the event's minute above the marker, in the first of two rows
 * where it meets no other label, kept inside the chart's edges.
 */
function eventMarkers(root, events, labels, axis, { width, bottom }) {
  const labelRows = [12, 26];
  const markerY = 42;
  const rowRight = labelRows.map(() => -Infinity);
  for (const event of events) {
    const index = labels.indexOf(event.minute);
    if (index < 0) continue;
    const cx = axis.x(Math.min(index + 1, labels.length - 1));
    const color = event.team === 'home' ? HOME : AWAY;
    add(root, 'line', {
      x1: cx,
      y1: markerY + 6,
      x2: cx,
      y2: bottom,
      stroke: '#222',
      'stroke-dasharray': '3 3',
    });
    const marker =
      event.type === 'goal'
        ? add(root, 'circle', { cx, cy: markerY, r: 6, fill: color })
        : add(root, 'rect', {
            x: cx - 4,
            y: markerY - 6,
            width: 8,
            height: 12,
            fill: event.type === 'red_card' ? '#c62828' : event.type === 'yellow_card' ? '#e6b800' : color,
          });
    marker.setAttribute('data-event', `${event.type} ${event.team} ${event.minute}`);
    const text = `${event.minute}'`;
    const half = textWidth(text, 11) / 2;
    const center = Math.min(Math.max(cx, half + 2), width - half - 2);
    const row = rowRight.findIndex((right) => center - half > right + 3);
    const at = row < 0 ? rowRight.indexOf(Math.min(...rowRight)) : row;
    rowRight[at] = center + half;
    const attributes = { x: center, y: labelRows[at], 'text-anchor': 'middle', 'font-size': 11 };
    add(root, 'text', { ...attributes, 'data-event-minute': event.minute }, text);
  }
}
