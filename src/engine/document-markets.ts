// The document's score-grid sections (document.ts): results, score grids, goal distributions, markets
// and the half-time section, from the counters' score grids. Every aggregate is summed in whole counts
// and divided by the draws once, so probabilities stay inside [0, 1] and complementary ones (over/under,
// yes/no) sum to 1 exactly.
import { C_HT_FT, GRID_SIZE } from '../engine-contract/layout.js';
import { HT_FT_KEYS, type SimulationDocument } from './document-schema.js';

const TOP_SCORELINES = 20;
const TOTAL_LINES = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5];
const HANDICAP_LINES = [-2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5];

/** The counts of the score grid at `at`: cells[home goals][away goals]. */
export function countGrid(counts: Uint32Array, at: number): number[][] {
  const grid = new Array<number[]>(GRID_SIZE);
  for (let home = 0; home < GRID_SIZE; home++) {
    const row = new Array<number>(GRID_SIZE);
    for (let away = 0; away < GRID_SIZE; away++) row[away] = counts[at + home * GRID_SIZE + away]!;
    grid[home] = row;
  }
  return grid;
}

export function toProbabilities(grid: number[][], draws: number): number[][] {
  return grid.map((row) => row.map((count) => count / draws));
}

export function halfTime(
  counts: Uint32Array,
  htCounts: number[][],
  draws: number,
): SimulationDocument['half_time'] {
  return {
    result: resultOf(htCounts, draws),
    score_grid: { max: GRID_SIZE - 1, cells: toProbabilities(htCounts, draws) },
    ht_ft: Object.fromEntries(HT_FT_KEYS.map((key, i) => [key, counts[C_HT_FT + i]! / draws])) as Record<
      (typeof HT_FT_KEYS)[number],
      number
    >,
  };
}

/** Grids here hold whole counts (cells[home][away]); results are divided by `draws` once. */
export function resultOf(
  grid: number[][],
  draws: number,
): { home_win: number; draw: number; away_win: number } {
  let homeWin = 0;
  let draw = 0;
  let awayWin = 0;
  grid.forEach((row, home) => {
    row.forEach((count, away) => {
      if (home > away) homeWin += count;
      else if (home === away) draw += count;
      else awayWin += count;
    });
  });
  return { home_win: homeWin / draws, draw: draw / draws, away_win: awayWin / draws };
}

function goalCounts(grid: number[][]): { home: number[]; away: number[]; total: number[] } {
  const home = new Array<number>(GRID_SIZE).fill(0);
  const away = new Array<number>(GRID_SIZE).fill(0);
  const total = new Array<number>(GRID_SIZE).fill(0);
  grid.forEach((row, h) => {
    row.forEach((count, a) => {
      home[h]! += count;
      away[a]! += count;
      // A capped cell (10+) always has a total of 10 or more.
      total[Math.min(h + a, GRID_SIZE - 1)]! += count;
    });
  });
  return { home, away, total };
}

export function goalDistributions(
  grid: number[][],
  draws: number,
): { home: number[]; away: number[]; total: number[] } {
  const { home, away, total } = goalCounts(grid);
  const p = (count: number) => count / draws;
  return { home: home.map(p), away: away.map(p), total: total.map(p) };
}

export function markets(grid: number[][], draws: number) {
  const p = (count: number) => count / draws;
  const cells: Array<{ home: number; away: number; probability: number }> = [];
  for (let home = 0; home < GRID_SIZE; home++) {
    for (let away = 0; away < GRID_SIZE; away++)
      cells.push({ home, away, probability: p(grid[home]![away]!) });
  }
  const scorelines = cells
    .sort((a, b) => b.probability - a.probability || a.home - b.home || a.away - b.away)
    .slice(0, TOP_SCORELINES);
  const { total } = goalCounts(grid);
  const totals = TOTAL_LINES.map((line) => {
    let under = 0;
    total.forEach((count, goals) => {
      if (goals < line) under += count;
    });
    return { line, over: p(draws - under), under: p(under) };
  });
  let bttsYes = 0;
  grid.forEach((row, home) => {
    row.forEach((count, away) => {
      if (home > 0 && away > 0) bttsYes += count;
    });
  });
  // Margin distribution (home minus away), at index margin + GRID_SIZE - 1; capped cells count as
  // exactly 10. Whole counts: their sums are exact in any order.
  const margins = new Array<number>(2 * GRID_SIZE - 1).fill(0);
  for (let home = 0; home < GRID_SIZE; home++) {
    for (let away = 0; away < GRID_SIZE; away++) margins[home - away + GRID_SIZE - 1]! += grid[home]![away]!;
  }
  const handicaps = (['home', 'away'] as const).flatMap((team) =>
    HANDICAP_LINES.map((line) => {
      let win = 0;
      let push = 0;
      for (let at = 0; at < margins.length; at++) {
        const margin = at - (GRID_SIZE - 1);
        const adjusted = (team === 'home' ? margin : -margin) + line;
        if (adjusted > 0) win += margins[at]!;
        else if (adjusted === 0) push += margins[at]!;
      }
      return { team, line, win: p(win), push: p(push), lose: p(draws - win - push) };
    }),
  );
  const result = resultOf(grid, 1);
  return {
    scorelines,
    totals,
    btts: { yes: p(bttsYes), no: p(draws - bttsYes) },
    double_chance: {
      home_or_draw: p(result.home_win + result.draw),
      home_or_away: p(result.home_win + result.away_win),
      draw_or_away: p(result.draw + result.away_win),
    },
    handicaps,
  };
}
