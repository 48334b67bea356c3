// The season sampler (docs/model.md, "Season projections"): every remaining fixture of a competition
// played once per simulated season, goals only, from the fixture's own score model, and the final table
// ranked by the competition's rules. Within one season each club draws one strength perturbation that
// moves all of its remaining fixtures (clubs' fortunes correlate across a season). Pure: no database,
// no threads; the projection thread (season-thread.ts), the bench and the backtest call it.
import { makeRandom } from '../fixtures/seeded-random.js';

export type TieBreaker = 'goal_difference' | 'goals_for' | 'head_to_head';

export interface SeasonRules {
  win: number;
  draw: number;
  /** Applied in order after points; clubs still level are separated by lot. */
  tieBreakers: readonly TieBreaker[];
}

/** A played fixture: club indexes and the final score. */
export interface PlayedFixture {
  home: number;
  away: number;
  homeGoals: number;
  awayGoals: number;
}

/** A fixture still to play: club indexes and its rated expected goals (docs/model.md, the rated goals). */
export interface RemainingFixture {
  home: number;
  away: number;
  homeExpectedGoals: number;
  awayExpectedGoals: number;
}

export interface SeasonInput {
  clubs: number;
  played: readonly PlayedFixture[];
  remaining: readonly RemainingFixture[];
  rules: SeasonRules;
  /** Sd of each club's season strength perturbation on the log goal scale (0: none). */
  strengthSd: number;
}

export interface SeasonTally {
  seasons: number;
  clubs: number;
  /** positions[club * clubs + place]: seasons the club finished in that place (0 = first). */
  positions: Float64Array;
  pointsSum: Float64Array;
  pointsSquares: Float64Array;
  goalDifferenceSum: Float64Array;
}

/** Goals beyond which the inversion stops (a side's 30th goal has probability below 1e-20 at 4 goals). */
const MAX_GOALS = 30;

/** A Poisson count by inversion of one uniform. */
function poisson(mean: number, u: number): number {
  let p = Math.exp(-mean);
  let cumulative = p;
  let k = 0;
  while (u > cumulative && k < MAX_GOALS) {
    k++;
    p *= mean / k;
    cumulative += p;
  }
  return k;
}

export function emptyTally(clubs: number): SeasonTally {
  return {
    seasons: 0,
    clubs,
    positions: new Float64Array(clubs * clubs),
    pointsSum: new Float64Array(clubs),
    pointsSquares: new Float64Array(clubs),
    goalDifferenceSum: new Float64Array(clubs),
  };
}

/** Adds `from` into `into` (tallies of the same competition from several threads). */
export function mergeTally(into: SeasonTally, from: SeasonTally): void {
  into.seasons += from.seasons;
  for (let i = 0; i < into.positions.length; i++) into.positions[i]! += from.positions[i]!;
  for (let c = 0; c < into.clubs; c++) {
    into.pointsSum[c]! += from.pointsSum[c]!;
    into.pointsSquares[c]! += from.pointsSquares[c]!;
    into.goalDifferenceSum[c]! += from.goalDifferenceSum[c]!;
  }
}

/** One season's table: points, goals for and against per club (the finished fixtures' part is fixed). */
interface Table {
  points: Float64Array;
  goalsFor: Float64Array;
  goalsAgainst: Float64Array;
}

function tableOf(clubs: number): Table {
  return {
    points: new Float64Array(clubs),
    goalsFor: new Float64Array(clubs),
    goalsAgainst: new Float64Array(clubs),
  };
}

function addResult(table: Table, rules: SeasonRules, home: number, away: number, hg: number, ag: number) {
  table.goalsFor[home]! += hg;
  table.goalsAgainst[home]! += ag;
  table.goalsFor[away]! += ag;
  table.goalsAgainst[away]! += hg;
  if (hg > ag) table.points[home]! += rules.win;
  else if (hg < ag) table.points[away]! += rules.win;
  else {
    table.points[home]! += rules.draw;
    table.points[away]! += rules.draw;
  }
}

/** The table of the finished fixtures alone: what every simulated season starts from. */
export function playedTable(input: Pick<SeasonInput, 'clubs' | 'played' | 'rules'>): Table {
  const table = tableOf(input.clubs);
  for (const f of input.played) addResult(table, input.rules, f.home, f.away, f.homeGoals, f.awayGoals);
  return table;
}

/**
 * Simulates `seasons` seasons with the seed's own random stream and returns their tally. Same input,
 * seasons and seed: the same tally.
 */
export function simulateSeasons(input: SeasonInput, seasons: number, seed: string | number): SeasonTally {
  const random = makeRandom(seed);
  const n = input.clubs;
  const start = playedTable(input);
  const table = tableOf(n);
  const remaining = input.remaining;
  const homeGoals = new Int32Array(remaining.length);
  const awayGoals = new Int32Array(remaining.length);
  const strength = new Float64Array(n);
  const tally = emptyTally(n);
  const ranker = makeRanker(input, homeGoals, awayGoals, random.next);
  for (let s = 0; s < seasons; s++) {
    table.points.set(start.points);
    table.goalsFor.set(start.goalsFor);
    table.goalsAgainst.set(start.goalsAgainst);
    for (let c = 0; c < n; c++)
      strength[c] = input.strengthSd > 0 ? Math.exp(random.normal(0, input.strengthSd)) : 1;
    for (let i = 0; i < remaining.length; i++) {
      const f = remaining[i]!;
      const ratio = strength[f.home]! / strength[f.away]!;
      const hg = poisson(f.homeExpectedGoals * ratio, random.next());
      const ag = poisson(f.awayExpectedGoals / ratio, random.next());
      homeGoals[i] = hg;
      awayGoals[i] = ag;
      addResult(table, input.rules, f.home, f.away, hg, ag);
    }
    const order = ranker(table);
    for (let place = 0; place < n; place++) tally.positions[order[place]! * n + place]! += 1;
    for (let c = 0; c < n; c++) {
      const points = table.points[c]!;
      tally.pointsSum[c]! += points;
      tally.pointsSquares[c]! += points * points;
      tally.goalDifferenceSum[c]! += table.goalsFor[c]! - table.goalsAgainst[c]!;
    }
  }
  tally.seasons = seasons;
  return tally;
}

/**
 * Ranks a season's table: points, then each tie-breaker among the clubs still level, then lots. Head to
 * head is the mini-table of the fixtures between the clubs level at that point (points, goal difference,
 * goals scored in those fixtures), computed once for that group.
 */
function makeRanker(
  input: SeasonInput,
  homeGoals: Int32Array,
  awayGoals: Int32Array,
  uniform: () => number,
): (table: Table) => number[] {
  const n = input.clubs;
  const key = new Float64Array(n);
  const inGroup = new Uint8Array(n);
  const headToHead = (group: number[]) => {
    for (const c of group) {
      inGroup[c] = 1;
      key[c] = 0;
    }
    const mini = tableOf(n);
    for (const f of input.played) {
      if (inGroup[f.home] && inGroup[f.away])
        addResult(mini, input.rules, f.home, f.away, f.homeGoals, f.awayGoals);
    }
    input.remaining.forEach((f, i) => {
      if (inGroup[f.home] && inGroup[f.away])
        addResult(mini, input.rules, f.home, f.away, homeGoals[i]!, awayGoals[i]!);
    });
    for (const c of group) {
      inGroup[c] = 0;
      key[c] =
        mini.points[c]! * 1e6 + (mini.goalsFor[c]! - mini.goalsAgainst[c]! + 1000) * 1e3 + mini.goalsFor[c]!;
    }
  };
  const separate = (table: Table, group: number[], level: number): number[] => {
    if (group.length === 1) return group;
    if (level === input.rules.tieBreakers.length) return drawLots(group, uniform);
    const breaker = input.rules.tieBreakers[level]!;
    if (breaker === 'head_to_head') headToHead(group);
    else {
      for (const c of group) {
        key[c] = breaker === 'goals_for' ? table.goalsFor[c]! : table.goalsFor[c]! - table.goalsAgainst[c]!;
      }
    }
    return splitByKey(group, key, (sub) => separate(table, sub, level + 1));
  };
  return (table) => {
    const all = Array.from({ length: n }, (_, c) => c);
    for (let c = 0; c < n; c++) key[c] = table.points[c]!;
    return splitByKey(all, key, (group) => separate(table, group, 0));
  };
}

/** Sorts `group` by `key` descending and hands each run of equal keys to `within`, in order. */
function splitByKey(group: number[], key: Float64Array, within: (sub: number[]) => number[]): number[] {
  const values = group.map((c) => key[c]!);
  const sorted = group.map((c, i) => ({ c, k: values[i]! })).sort((a, b) => b.k - a.k);
  const out: number[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i + 1;
    while (j < sorted.length && sorted[j]!.k === sorted[i]!.k) j++;
    const sub = sorted.slice(i, j).map((e) => e.c);
    out.push(...(sub.length === 1 ? sub : within(sub)));
    i = j;
  }
  return out;
}

/** Clubs level on every rule: a random order (the lots a competition would draw, or a play-off). */
function drawLots(group: number[], uniform: () => number): number[] {
  const out = [...group];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(uniform() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
