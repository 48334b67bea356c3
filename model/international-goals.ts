// Goal minutes of international matches (../shared/data/international/goalscorers.csv), for the shape
// of scoring through a match. Goals in added time are recorded at minute 45 or 90; minutes above 90
// are extra time and are left out, as are goals with no minute.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCsv } from './read-csv.js';

/** Goals by recorded minute: index 1..90 (index 0 unused). */
export type GoalsByMinute = number[];

export function loadGoalMinutes(dataDir: string, options: { since?: string } = {}): GoalsByMinute {
  const since = options.since ?? '0000';
  const counts = new Array<number>(91).fill(0);
  const rows = parseCsv(readFileSync(join(dataDir, 'international', 'goalscorers.csv'), 'utf8'));
  for (const row of rows) {
    if ((row.date ?? '') < since) continue;
    const minute = Number(row.minute);
    if (!Number.isInteger(minute) || minute < 1 || minute > 90) continue;
    counts[minute]!++;
  }
  return counts;
}

/**
 * Relative goal rate of the six 15-minute bands (goals in the band / goals per band on average);
 * bands 3 and 6 hold the added time of their half, as in the engine.
 */
export function bandWeightsFromMinutes(goals: GoalsByMinute): number[] {
  const bands = new Array<number>(6).fill(0);
  for (let minute = 1; minute <= 90; minute++) bands[Math.floor((minute - 1) / 15)]! += goals[minute] ?? 0;
  const total = bands.reduce((a, b) => a + b, 0);
  return bands.map((b) => (b / total) * 6);
}

/**
 * Rescales band weights so the first half holds `firstHalfShare` of the goals, keeping the shape
 * within each half: the club data's half-time scores fix the split better than international minutes.
 */
export function withFirstHalfShare(weights: readonly number[], firstHalfShare: number): number[] {
  const first = weights.slice(0, 3).reduce((a, b) => a + b, 0);
  const second = weights.slice(3).reduce((a, b) => a + b, 0);
  const total = first + second;
  return weights.map((w, band) =>
    band < 3 ? (w / first) * firstHalfShare * total : (w / second) * (1 - firstHalfShare) * total,
  );
}
