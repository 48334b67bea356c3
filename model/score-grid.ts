// Scoreline probabilities and the markets the backtest scores (1X2, over/under 2.5, both teams to
// score), from a score grid of home goals × away goals.
import { lowScoreCorrection } from './team-ratings.js';

/** Goals 0..GRID_MAX−1 per side; past 15 goals the Poisson tail is below 1e-9 at any realistic rate. */
export const GRID_MAX = 16;

export type ScoreGrid = Float64Array;

export interface MarketProbabilities {
  home: number;
  draw: number;
  away: number;
  over25: number;
  btts: number;
}

/** Independent Poisson scores with the Dixon-Coles τ on the four low scorelines. */
export function dixonColesGrid(lambdaHome: number, lambdaAway: number, rho: number): ScoreGrid {
  const grid = new Float64Array(GRID_MAX * GRID_MAX);
  const ph = poissonPmf(lambdaHome);
  const pa = poissonPmf(lambdaAway);
  let total = 0;
  for (let h = 0; h < GRID_MAX; h++) {
    for (let a = 0; a < GRID_MAX; a++) {
      const p = ph[h]! * pa[a]! * lowScoreCorrection(h, a, lambdaHome, lambdaAway, rho);
      grid[h * GRID_MAX + a] = Math.max(p, 0);
      total += grid[h * GRID_MAX + a]!;
    }
  }
  for (let i = 0; i < grid.length; i++) grid[i]! /= total;
  return grid;
}

function poissonPmf(lambda: number): Float64Array {
  const pmf = new Float64Array(GRID_MAX);
  let p = Math.exp(-lambda);
  for (let k = 0; k < GRID_MAX; k++) {
    pmf[k] = p;
    p *= lambda / (k + 1);
  }
  return pmf;
}

export function marketsFromGrid(grid: ScoreGrid, size = GRID_MAX): MarketProbabilities {
  let home = 0;
  let draw = 0;
  let away = 0;
  let over25 = 0;
  let btts = 0;
  for (let h = 0; h < size; h++) {
    for (let a = 0; a < size; a++) {
      const p = grid[h * size + a]!;
      if (h > a) home += p;
      else if (h === a) draw += p;
      else away += p;
      if (h + a > 2) over25 += p;
      if (h > 0 && a > 0) btts += p;
    }
  }
  const total = home + draw + away;
  return {
    home: home / total,
    draw: draw / total,
    away: away / total,
    over25: over25 / total,
    btts: btts / total,
  };
}
