// The exact forward pass a market fit (market-fit.ts) reads the model's own prices from: the distribution
// of (goal difference, total goals up to 3, player-count difference) carried through the 110 steps with
// the very rates the engines' tables hold (compile-rates.ts), so that the 1X2 and over/under 2.5 it gives
// are the engine's up to Monte Carlo error (docs/model.md, "Fitting to the market"). It is finer than the
// calibration's pass (compile-calibration.ts), whose arithmetic the golden digests pin: within a step the
// side whose turn comes second (a fair coin, as in the engines) plays in the cell the first side's goal or
// red card left it in, each side plays at its lineup's strength multiplier, and second yellows send
// players off at the rate a booking chain gives (bookingHazards).
import {
  FIRST_HALF_ADDED_START,
  RED_CARD_BUCKETS,
  SCORE_STATE_BUCKETS,
  SECOND_HALF_ADDED_START,
  SECOND_HALF_START,
  SIDES,
  STEPS,
  XI_SIZE,
} from '../engine-contract/layout.js';
import { type AddedTimeModel, categoricalTotal, type EventRates, rateCell } from './compile-rates.js';

/**
 * Margins beyond this count as this: a cell reads the margin only up to 2 either way, and a side 5 goals
 * behind has no measurable chance of coming back within 2 (against margins to ±7 the prices moved by
 * some 3e-8; docs/model.md, "Fitting to the market").
 */
const MAX_DIFF = 5;
/** Total goals are counted 0, 1, 2 and 3 or more: over 2.5 is the last. */
const TOTALS = 4;
/**
 * Player-count differences beyond one count as one: a cell reads only the difference's sign, so only a
 * red card the other way after two the same way is misplaced (against ±2 the prices moved by some 3e-6).
 */
const MAX_MEN_DIFF = 1;
const MEN_STATES = 2 * MAX_MEN_DIFF + 1;
const STATES = (2 * MAX_DIFF + 1) * TOTALS * MEN_STATES;
const CELLS = SCORE_STATE_BUCKETS * RED_CARD_BUCKETS;
/** Mass below this is not carried on (10-goal margins): at most some 1e-6 of the whole over a match. */
const NEGLIGIBLE_MASS = 1e-10;

function stateIndex(diff: number, total: number, men: number): number {
  return ((diff + MAX_DIFF) * TOTALS + total) * MEN_STATES + men + MAX_MEN_DIFF;
}

// The geometry, built once. Per reachable state, the plan the pass reads (PLAN_WORDS words): the state,
// its home and away cells (offsets into the step's cells), then for each first move (home goal, home
// red, away goal, away red) the state it leads to, the second side's cell there and where that side's
// goal and red card take it in turn. Laid out ahead of time so a step reads each state's moves in one run
// of words rather than looking cells and moves up again for every path.
const MOVE = new Int32Array(STATES * 4);
const STATE_DIFF = new Int32Array(STATES);
const STATE_TOTAL = new Int32Array(STATES);
const HOME_CELL = new Int32Array(STATES);
const AWAY_CELL = new Int32Array(STATES);
/** The states a match can be in: below 3 goals the margin is at most the total, of the same parity. */
const REACHABLE: number[] = [];
for (let diff = -MAX_DIFF; diff <= MAX_DIFF; diff++) {
  for (let total = 0; total < TOTALS; total++) {
    for (let men = -MAX_MEN_DIFF; men <= MAX_MEN_DIFF; men++) {
      const i = stateIndex(diff, total, men);
      HOME_CELL[i] = rateCell(0, diff, men);
      AWAY_CELL[i] = rateCell(1, diff, men);
      STATE_DIFF[i] = diff;
      STATE_TOTAL[i] = total;
      const d = (x: number) => Math.max(-MAX_DIFF, Math.min(MAX_DIFF, x));
      const t = Math.min(TOTALS - 1, total + 1);
      const m = (x: number) => Math.max(-MAX_MEN_DIFF, Math.min(MAX_MEN_DIFF, x));
      // men = home's opponents sent off minus home's.
      MOVE[i * 4] = stateIndex(d(diff + 1), t, men);
      MOVE[i * 4 + 1] = stateIndex(diff, total, m(men - 1));
      MOVE[i * 4 + 2] = stateIndex(d(diff - 1), t, men);
      MOVE[i * 4 + 3] = stateIndex(diff, total, m(men + 1));
      if (total === TOTALS - 1 || (Math.abs(diff) <= total && (total - diff) % 2 === 0)) REACHABLE.push(i);
    }
  }
}

/** A cell's words in the step's cells: goal, red card (straight or second yellow), neither. */
const CELL_WORDS = 3;
const PLAN_WORDS = 3 + 4 * 4;
const PLAN = new Int32Array(REACHABLE.length * PLAN_WORDS);
REACHABLE.forEach((i, r) => {
  const at = r * PLAN_WORDS;
  PLAN[at] = i;
  PLAN[at + 1] = HOME_CELL[i]! * CELL_WORDS;
  PLAN[at + 2] = (CELLS + AWAY_CELL[i]!) * CELL_WORDS;
  for (let k = 0; k < 4; k++) {
    const to = MOVE[i * 4 + k]!;
    // After home's goal or red card (k 0, 1) away plays second in the new state's cell, and the reverse.
    const second = k < 2 ? 1 : 0;
    PLAN[at + 3 + k * 4] = to;
    PLAN[at + 4 + k * 4] = (second === 0 ? HOME_CELL[to]! : CELLS + AWAY_CELL[to]!) * CELL_WORDS;
    PLAN[at + 5 + k * 4] = MOVE[to * 4 + second * 2]!;
    PLAN[at + 6 + k * 4] = MOVE[to * 4 + second * 2 + 1]!;
  }
});

/** What the pass finds: the full-time result, over 2.5 and each side's expected goals. */
export interface PassPrices {
  homeWin: number;
  draw: number;
  awayWin: number;
  over25: number;
  goals: [number, number];
}

/** The pass's reusable arrays: one per thread (market-fit.ts keeps it beside the fit cache). */
export interface PassWork {
  dist: Float64Array;
  next: Float64Array;
  finished: Float64Array;
  /** Per side and cell: goal, red (straight or second yellow) and neither, probabilities of the step. */
  cells: Float64Array;
}

export function createPassWork(): PassWork {
  return {
    dist: new Float64Array(STATES),
    next: new Float64Array(STATES),
    finished: new Float64Array(STATES),
    cells: new Float64Array(SIDES * CELLS * CELL_WORDS),
  };
}

/**
 * The prices of the rates at base goals `base` (each side's goals per match before the curve, as
 * setBaseGoals writes them), each side's goals multiplied by `strength` (its lineup's strength bucket
 * multiplier), with `secondYellow[side * STEPS + step]` the probability that a yellow card of that step
 * is a player's second (bookingHazards).
 */
export function passPrices(
  rates: EventRates,
  added: AddedTimeModel,
  base: readonly [number, number],
  strength: readonly [number, number],
  secondYellow: Float64Array,
  work: PassWork,
): PassPrices {
  let { dist, next } = work;
  const { finished, cells } = work;
  dist.fill(0);
  finished.fill(0);
  dist[stateIndex(0, 0, 0)] = 1;
  let homeGoals = 0;
  let awayGoals = 0;
  let reach = 1;
  for (let step = 0; step < STEPS; step++) {
    stepCells(rates, base, strength, secondYellow, step, cells);
    reach = setAsideStopped(step, added, reach, dist, finished);
    next.fill(0);
    for (let at = 0; at < PLAN.length; at += PLAN_WORDS) {
      const i = PLAN[at]!;
      const mass = dist[i]!;
      if (mass < NEGLIGIBLE_MASS) continue;
      const half = 0.5 * mass;
      const h = PLAN[at + 1]!;
      const a = PLAN[at + 2]!;
      const hg = cells[h]!;
      const hr = cells[h + 1]!;
      const homeQuiet = cells[h + 2]!;
      const ag = cells[a]!;
      const ar = cells[a + 1]!;
      const awayQuiet = cells[a + 2]!;
      // Both quiet: the state stays, whichever side's turn came first.
      next[i]! += mass * homeQuiet * awayQuiet;
      // One side's event after the other's quiet turn (each order is half the draws).
      next[PLAN[at + 3]!]! += half * awayQuiet * hg;
      next[PLAN[at + 7]!]! += half * awayQuiet * hr;
      next[PLAN[at + 11]!]! += half * homeQuiet * ag;
      next[PLAN[at + 15]!]! += half * homeQuiet * ar;
      homeGoals += half * (hg + awayQuiet * hg);
      awayGoals += half * (ag + homeQuiet * ag);
      // The first side's goal or red card moves the state; the second plays in the cell it left.
      awayGoals += spreadSecond(next, cells, at + 3, half * hg);
      awayGoals += spreadSecond(next, cells, at + 7, half * hr);
      homeGoals += spreadSecond(next, cells, at + 11, half * ag);
      homeGoals += spreadSecond(next, cells, at + 15, half * ar);
    }
    [dist, next] = [next, dist];
    reach = foldFinished(step, reach, dist, finished);
  }
  work.dist = dist;
  work.next = next;
  let homeWin = 0;
  let draw = 0;
  let over25 = 0;
  for (let i = 0; i < STATES; i++) {
    const mass = dist[i]!;
    if (STATE_DIFF[i]! > 0) homeWin += mass;
    else if (STATE_DIFF[i] === 0) draw += mass;
    if (STATE_TOTAL[i] === TOTALS - 1) over25 += mass;
  }
  return { homeWin, draw, awayWin: 1 - homeWin - draw, over25, goals: [homeGoals, awayGoals] };
}

/**
 * The second side's turn after the first side's goal or red card took the state to the plan's move at
 * `move`, with `weight` the path's probability: spreads it over the second side's goal, red card or
 * nothing in its new cell. Returns the second side's goals.
 */
function spreadSecond(next: Float64Array, cells: Float64Array, move: number, weight: number): number {
  if (weight === 0) return 0;
  const c = PLAN[move + 1]!;
  const goal = cells[c]!;
  next[PLAN[move]!]! += weight * cells[c + 2]!;
  next[PLAN[move + 2]!]! += weight * goal;
  next[PLAN[move + 3]!]! += weight * cells[c + 1]!;
  return weight * goal;
}

/** The goal, red-card and neither probabilities of every (side, cell) at `step`, as writeCell forms them. */
function stepCells(
  rates: EventRates,
  base: readonly [number, number],
  strength: readonly [number, number],
  secondYellow: Float64Array,
  step: number,
  cells: Float64Array,
): void {
  for (let side = 0; side < SIDES; side++) {
    const sideStep = side * STEPS + step;
    const stepGoals = base[side]! * rates.goalCurve[step]!;
    for (let score = 0; score < SCORE_STATE_BUCKETS; score++) {
      for (let red = 0; red < RED_CARD_BUCKETS; red++) {
        const goals =
          stepGoals * rates.scoreMultipliers[score]! * rates.redMultipliers[red]! * strength[side]!;
        const total = categoricalTotal(rates, sideStep, goals);
        const at = (side * CELLS + score * RED_CARD_BUCKETS + red) * CELL_WORDS;
        const goal = goals / total;
        const sentOff = (rates.red[sideStep]! + rates.yellow[sideStep]! * secondYellow[sideStep]!) / total;
        cells[at] = goal;
        cells[at + 1] = sentOff;
        cells[at + 2] = 1 - goal - sentOff;
      }
    }
  }
}

/**
 * Added time, as the calibration's pass plays it (compile-calibration.ts): added steps are nested, so at
 * an added step the draws whose half ended before it (reach − played of them) move from `dist` to
 * `finished`. Returns the share of draws that play the step within its half's added time (1 elsewhere
 * once the half's draws are folded back): the next step's reach.
 */
function setAsideStopped(
  step: number,
  added: AddedTimeModel,
  reach: number,
  dist: Float64Array,
  finished: Float64Array,
): number {
  const inAdded =
    (step >= FIRST_HALF_ADDED_START && step < SECOND_HALF_START) || step >= SECOND_HALF_ADDED_START;
  if (!inAdded) return reach;
  const played = added.stepPlayed[step]!;
  const stopping = reach - played;
  if (stopping > 0 && reach > 0) {
    const keep = played / reach;
    for (let i = 0; i < dist.length; i++) {
      finished[i]! += (dist[i]! * stopping) / reach;
      dist[i]! *= keep;
    }
  }
  return played;
}

/** After a half's last step its draws set aside join the others again; returns the reach, then 1. */
function foldFinished(step: number, reach: number, dist: Float64Array, finished: Float64Array): number {
  if (step !== SECOND_HALF_START - 1 && step !== STEPS - 1) return reach;
  for (let i = 0; i < dist.length; i++) dist[i]! += finished[i]!;
  finished.fill(0);
  return 1;
}

/** Booked players a side's chain counts up to (more are a vanishing share of draws). */
const MAX_BOOKED = 6;

/**
 * Per side and step, the probability that a yellow card is a player's second: a chain over (players on
 * the pitch already booked, substitutions made) fed by the side's yellow and substitution rates, which
 * do not depend on the score. A yellow goes to a booked player with probability k f / (n − k + k f)
 * (n = XI_SIZE players of equal card weight, f the booked player's weight factor); a substitution (at
 * most `maxSubstitutions`) takes a booked player off with probability k / (XI_SIZE − 1). The engine picks
 * players by their own card and substitution weights: this is the chain of the average player, close
 * enough for the red cards' share of the prices (docs/model.md, "Fitting to the market").
 */
export function bookingHazards(
  rates: EventRates,
  added: AddedTimeModel,
  bookedFactor: number,
  maxSubstitutions: number,
): Float64Array {
  const hazards = new Float64Array(SIDES * STEPS);
  const subStates = maxSubstitutions + 1;
  const size = (MAX_BOOKED + 1) * subStates;
  const share = Float64Array.from({ length: MAX_BOOKED + 1 }, (_, k) =>
    k === 0 ? 0 : (k * bookedFactor) / (XI_SIZE - k + k * bookedFactor),
  );
  for (let side = 0; side < SIDES; side++) {
    let dist = new Float64Array(size);
    let next = new Float64Array(size);
    const finished = new Float64Array(size);
    dist[0] = 1;
    let reach = 1;
    for (let step = 0; step < STEPS; step++) {
      const sideStep = side * STEPS + step;
      reach = setAsideStopped(step, added, reach, dist, finished);
      let playing = 0;
      let second = 0;
      for (let i = 0; i < size; i++) {
        playing += dist[i]!;
        second += dist[i]! * share[Math.floor(i / subStates)]!;
      }
      hazards[sideStep] = playing > 0 ? second / playing : 0;
      // The level cell's total (1 at football's rates: categoricalTotal).
      const total = categoricalTotal(rates, sideStep, rates.goals[sideStep] ?? 0);
      const yellow = rates.yellow[sideStep]! / total;
      const substitution = rates.substitution[sideStep]! / total;
      next.fill(0);
      for (let k = 0; k <= MAX_BOOKED; k++) {
        for (let s = 0; s < subStates; s++) {
          const i = k * subStates + s;
          const mass = dist[i]!;
          if (mass === 0) continue;
          const sub = s < maxSubstitutions ? substitution : 0;
          next[i]! += mass * (1 - yellow - sub);
          next[Math.max(0, k - 1) * subStates + s]! += mass * yellow * share[k]!;
          next[Math.min(MAX_BOOKED, k + 1) * subStates + s]! += mass * yellow * (1 - share[k]!);
          if (sub > 0) {
            const off = k / (XI_SIZE - 1);
            next[Math.max(0, k - 1) * subStates + s + 1]! += mass * sub * off;
            next[k * subStates + s + 1]! += mass * sub * (1 - off);
          }
        }
      }
      [dist, next] = [next, dist];
      reach = foldFinished(step, reach, dist, finished);
    }
  }
  return hazards;
}
