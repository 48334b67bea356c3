// The match model's score process computed exactly instead of sampled: the distribution over
// (home goals, away goals, player-count difference) is pushed through the 110 minute steps with the
// per-step goal and red-card probabilities the engine uses. It serves three purposes: the analytic
// equivalent of the engine's 1X2 and goal markets, the likelihood of observed half-time and full-time
// scores when fitting score-state and red-card effects, and a check on the engine's sampling.
//
// Step layout follows src/engine-contract/layout.ts: minutes 1-45, 45+1..45+10, 46-90, 90+1..90+10. Within a
// step each side has at most one event; the two sides' events are independent; an added step is played
// only when the half's drawn added time reaches it (so the played steps of an added block are nested).

import {
  FIRST_HALF_ADDED_START,
  SECOND_HALF_ADDED_START,
  SECOND_HALF_START,
  STEPS,
} from '../src/engine-contract/layout.js';

export { FIRST_HALF_ADDED_START, SECOND_HALF_ADDED_START, SECOND_HALF_START, STEPS };

/** Cap on the player-count difference tracked (a side two men down is as far as the engine distinguishes). */
const MAX_MEN_DIFF = 2;
const MEN_STATES = 2 * MAX_MEN_DIFF + 1;

/** Score bucket from a side's goal difference, as the engine indexes its multipliers. */
export function scoreBucket(ownMinusOpponent: number): number {
  return Math.max(-2, Math.min(2, ownMinusOpponent)) + 2;
}

/** Red bucket: 0 = fewer players than the opponent, 1 = equal, 2 = more. */
export function redBucket(ownMenAdvantage: number): number {
  return ownMenAdvantage < 0 ? 0 : ownMenAdvantage === 0 ? 1 : 2;
}

/**
 * Per-step event probabilities, flattened: index ((side * STEPS + step) * 5 + score) * 3 + red.
 * `goal` and `red` are probabilities of that event in the step (not rates).
 */
export interface StepProbabilityTable {
  goal: Float64Array;
  red: Float64Array;
  /** P(step is played): 1 outside added time, decreasing within each added block. */
  stepPlayed: readonly number[];
}

export function stepTableIndex(side: number, step: number, score: number, red: number): number {
  return ((side * STEPS + step) * 5 + score) * 3 + red;
}

export function emptyStepTable(stepPlayed: readonly number[]): StepProbabilityTable {
  const size = 2 * STEPS * 5 * 3;
  return { goal: new Float64Array(size), red: new Float64Array(size), stepPlayed };
}

export interface ScoreDistribution {
  /** Goals per side 0..maxGoals; (maxGoals+1)² cells, [home * (maxGoals+1) + away]. */
  fullTime: Float64Array;
  halfTime: Float64Array;
  /** P(half-time result, full-time result), [ht * 3 + ft], results 0 home, 1 draw, 2 away. */
  htFt: Float64Array;
  maxGoals: number;
}

export interface ForwardOptions {
  /** Largest goal count tracked per side; more is clamped into it. */
  maxGoals: number;
  /** Track the half-time × full-time result table (three passes through the second half). */
  withHtFt?: boolean;
}

/** Full-time, half-time and HT/FT distributions of a fixture. */
export function scoreDistribution(table: StepProbabilityTable, options: ForwardOptions): ScoreDistribution {
  const g = options.maxGoals + 1;
  const pass = makePass(table, g);
  const start = new Float64Array(g * g * MEN_STATES);
  start[stateIndex(g, 0, 0, 0)] = 1;
  const atHalfTime = pass.run(start, 0, SECOND_HALF_START);
  const halfTime = collapseMen(atHalfTime, g);
  const fullTime = new Float64Array(g * g);
  const htFt = new Float64Array(9);
  if (options.withHtFt) {
    for (let ht = 0; ht < 3; ht++) {
      const part = new Float64Array(atHalfTime.length);
      for (let h = 0; h < g; h++) {
        for (let a = 0; a < g; a++) {
          if (resultOf(h, a) !== ht) continue;
          for (let m = 0; m < MEN_STATES; m++) {
            const i = stateIndex(g, h, a, m - MAX_MEN_DIFF);
            part[i] = atHalfTime[i]!;
          }
        }
      }
      const end = collapseMen(pass.run(part, SECOND_HALF_START, STEPS), g);
      for (let i = 0; i < end.length; i++) {
        fullTime[i]! += end[i]!;
        htFt[ht * 3 + resultOf(Math.floor(i / g), i % g)]! += end[i]!;
      }
    }
  } else {
    fullTime.set(collapseMen(pass.run(atHalfTime, SECOND_HALF_START, STEPS), g));
  }
  return { fullTime, halfTime, htFt, maxGoals: options.maxGoals };
}

/**
 * The full-time score distribution from an in-play state (docs/model.md "In play"): the score and the
 * home side's player advantage at the start of step `from`, pushed through the steps left. Goals scored
 * are in the cells; [home * (maxGoals+1) + away].
 */
export function scoreDistributionFrom(
  table: StepProbabilityTable,
  state: { home: number; away: number; menAdvantage: number },
  from: number,
  maxGoals: number,
): Float64Array {
  const g = maxGoals + 1;
  const start = new Float64Array(g * g * MEN_STATES);
  const men = Math.max(-MAX_MEN_DIFF, Math.min(MAX_MEN_DIFF, state.menAdvantage));
  start[stateIndex(g, Math.min(state.home, g - 1), Math.min(state.away, g - 1), men)] = 1;
  return collapseMen(makePass(table, g).run(start, from, STEPS), g);
}

export type RedCardCondition = 'none' | 'home' | 'away';

/**
 * Likelihood of an observed half-time and full-time score. Goals beyond the full-time score are
 * dropped rather than clamped (they cannot lead to the observation), which keeps the state space tiny.
 * With `redCard` = 'home' or 'away' the likelihood is conditional on that side receiving exactly one red
 * card at an unknown minute, distributed as the table's red probabilities; with 'none', no red card.
 * `halfTime` null: only the full-time score is known.
 */
export function observedScoreLikelihood(
  table: StepProbabilityTable,
  halfTime: { home: number; away: number } | null,
  fullTime: { home: number; away: number },
  redCard: RedCardCondition,
): number {
  const gh = fullTime.home + 1;
  const ga = fullTime.away + 1;
  const pass = makeConditionedPass(table, gh, ga, redCard);
  let dist: Float64Array = new Float64Array(gh * ga * 2);
  dist[0] = 1;
  dist = pass(dist, 0, SECOND_HALF_START);
  if (halfTime) {
    const kept = new Float64Array(dist.length);
    for (let r = 0; r < 2; r++) {
      const i = (halfTime.home * ga + halfTime.away) * 2 + r;
      if (halfTime.home < gh && halfTime.away < ga) kept[i] = dist[i]!;
    }
    dist = kept;
  }
  dist = pass(dist, SECOND_HALF_START, STEPS);
  const end = (fullTime.home * ga + fullTime.away) * 2;
  if (redCard === 'none') return dist[end]!;
  // Normalise by the chance of the red card at all: its timing is what the likelihood averages over.
  return dist[end + 1]! / redCardMass(table, redCard === 'home' ? 0 : 1);
}

function redCardMass(table: StepProbabilityTable, side: number): number {
  let total = 0;
  for (let step = 0; step < STEPS; step++) {
    total += table.stepPlayed[step]! * table.red[stepTableIndex(side, step, 2, 1)]!;
  }
  return total;
}

function stateIndex(g: number, h: number, a: number, men: number): number {
  return (h * g + a) * MEN_STATES + men + MAX_MEN_DIFF;
}

function collapseMen(dist: Float64Array, g: number): Float64Array {
  const out = new Float64Array(g * g);
  for (let i = 0; i < out.length; i++) {
    let total = 0;
    for (let m = 0; m < MEN_STATES; m++) total += dist[i * MEN_STATES + m]!;
    out[i] = total;
  }
  return out;
}

function resultOf(h: number, a: number): number {
  return h > a ? 0 : h === a ? 1 : 2;
}

function isAddedStep(step: number): boolean {
  return (step >= FIRST_HALF_ADDED_START && step < SECOND_HALF_START) || step >= SECOND_HALF_ADDED_START;
}

/**
 * Runs steps [from, to) of one half or both. In an added block the draws whose half has ended are set
 * aside (`finished`) and folded back in after the block, so they keep their state.
 */
function withAddedTime(
  stepPlayed: readonly number[],
  from: number,
  to: number,
  dist: Float64Array,
  advance: (dist: Float64Array, step: number) => Float64Array,
): Float64Array {
  let current = dist;
  let finished: Float64Array | null = null;
  let reach = 1;
  for (let step = from; step < to; step++) {
    if (isAddedStep(step)) {
      const played = stepPlayed[step]!;
      if (!finished) finished = new Float64Array(current.length);
      if (reach > 0 && played < reach) {
        const stopping = (reach - played) / reach;
        for (let i = 0; i < current.length; i++) {
          const moved = current[i]! * stopping;
          finished[i]! += moved;
          current[i]! -= moved;
        }
      }
      reach = played;
    }
    current = advance(current, step);
    const blockEnds = step === SECOND_HALF_START - 1 || step === STEPS - 1;
    if (blockEnds && finished) {
      for (let i = 0; i < current.length; i++) current[i]! += finished[i]!;
      finished = null;
      reach = 1;
    }
  }
  return current;
}

function makePass(table: StepProbabilityTable, g: number) {
  const size = g * g * MEN_STATES;
  return {
    run(start: Float64Array, from: number, to: number): Float64Array {
      let spare: Float64Array = new Float64Array(size);
      return withAddedTime(table.stepPlayed, from, to, Float64Array.from(start), (dist, step) => {
        const next = spare;
        next.fill(0);
        for (let h = 0; h < g; h++) {
          for (let a = 0; a < g; a++) {
            for (let mi = 0; mi < MEN_STATES; mi++) {
              const mass = dist[(h * g + a) * MEN_STATES + mi]!;
              if (mass === 0) continue;
              const men = mi - MAX_MEN_DIFF;
              const hi = stepTableIndex(0, step, scoreBucket(h - a), redBucket(men));
              const ai = stepTableIndex(1, step, scoreBucket(a - h), redBucket(-men));
              const hg = table.goal[hi]!;
              const hr = table.red[hi]!;
              const ag = table.goal[ai]!;
              const ar = table.red[ai]!;
              const hn = 1 - hg - hr;
              const an = 1 - ag - ar;
              const h1 = Math.min(h + 1, g - 1);
              const a1 = Math.min(a + 1, g - 1);
              // men: home's player advantage; a home red lowers it, an away red raises it.
              const mUp = Math.min(mi + 1, MEN_STATES - 1);
              const mDown = Math.max(mi - 1, 0);
              next[(h1 * g + a1) * MEN_STATES + mi]! += mass * hg * ag;
              next[(h1 * g + a) * MEN_STATES + mUp]! += mass * hg * ar;
              next[(h1 * g + a) * MEN_STATES + mi]! += mass * hg * an;
              next[(h * g + a1) * MEN_STATES + mDown]! += mass * hr * ag;
              next[(h * g + a) * MEN_STATES + mi]! += mass * (hr * ar + hn * an);
              next[(h * g + a) * MEN_STATES + mDown]! += mass * hr * an;
              next[(h * g + a1) * MEN_STATES + mi]! += mass * hn * ag;
              next[(h * g + a) * MEN_STATES + mUp]! += mass * hn * ar;
            }
          }
        }
        spare = dist;
        return next;
      });
    },
  };
}

/**
 * The pass for likelihoods: scores bounded by the observation, and the red-card dimension reduced to
 * "has the one observed red card happened yet" (r = 0 or 1). The card's step gets weight equal to its
 * red probability; every other step's "no card" weight is left at 1, since conditioning on exactly one
 * card makes the survival factor a constant that cancels.
 */
function makeConditionedPass(table: StepProbabilityTable, gh: number, ga: number, redCard: RedCardCondition) {
  const size = gh * ga * 2;
  const carded = redCard === 'home' ? 0 : 1;
  return (start: Float64Array, from: number, to: number): Float64Array => {
    let spare: Float64Array = new Float64Array(size);
    return withAddedTime(table.stepPlayed, from, to, start, (dist, step) => {
      const next = spare;
      next.fill(0);
      for (let h = 0; h < gh; h++) {
        for (let a = 0; a < ga; a++) {
          for (let r = 0; r < 2; r++) {
            const mass = dist[(h * ga + a) * 2 + r]!;
            if (mass === 0) continue;
            // r = 1: the carded side is a man down.
            const homeMen = r === 0 ? 0 : carded === 0 ? -1 : 1;
            const hg = table.goal[stepTableIndex(0, step, scoreBucket(h - a), redBucket(homeMen))]!;
            const ag = table.goal[stepTableIndex(1, step, scoreBucket(a - h), redBucket(-homeMen))]!;
            const card =
              redCard !== 'none' && r === 0 ? table.red[stepTableIndex(carded, step, scoreBucket(0), 1)]! : 0;
            // Goal and card of the same side are exclusive within a step; the card's own step keeps
            // full-strength rates (the engine applies the new count from the next step).
            const goalsHere = [
              [hg * ag, 1, 1],
              [hg * (1 - ag), 1, 0],
              [(1 - hg) * ag, 0, 1],
              [(1 - hg) * (1 - ag), 0, 0],
            ] as const;
            for (const [p, dh, da] of goalsHere) {
              if (p === 0) continue;
              const nh = h + dh;
              const na = a + da;
              if (nh >= gh || na >= ga) continue;
              next[(nh * ga + na) * 2 + r]! += mass * p;
            }
            if (card > 0) {
              // The carded side has no goal in the step of its card; the other side may score.
              const otherGoal = carded === 0 ? ag : hg;
              next[(h * ga + a) * 2 + 1]! += mass * card * (1 - otherGoal);
              const nh = carded === 1 ? h + 1 : h;
              const na = carded === 0 ? a + 1 : a;
              if (nh < gh && na < ga) next[(nh * ga + na) * 2 + 1]! += mass * card * otherGoal;
            }
          }
        }
      }
      spare = dist;
      return next;
    });
  };
}

/**
 * Expected goals of each side under a step table, tracking only goal difference and player-count
 * difference (all the dynamics depend on): much cheaper than the full score pass.
 */
export function expectedGoalsUnder(table: StepProbabilityTable): [number, number] {
  const maxDiff = 10;
  const diffs = 2 * maxDiff + 1;
  const size = diffs * MEN_STATES;
  let spare: Float64Array = new Float64Array(size);
  const start = new Float64Array(size);
  start[maxDiff * MEN_STATES + MAX_MEN_DIFF] = 1;
  const goals: [number, number] = [0, 0];
  withAddedTime(table.stepPlayed, 0, STEPS, start, (dist, step) => {
    const next = spare;
    next.fill(0);
    for (let di = 0; di < diffs; di++) {
      const diff = di - maxDiff;
      for (let mi = 0; mi < MEN_STATES; mi++) {
        const mass = dist[di * MEN_STATES + mi]!;
        if (mass === 0) continue;
        const men = mi - MAX_MEN_DIFF;
        const hi = stepTableIndex(0, step, scoreBucket(diff), redBucket(men));
        const ai = stepTableIndex(1, step, scoreBucket(-diff), redBucket(-men));
        const hg = table.goal[hi]!;
        const hr = table.red[hi]!;
        const ag = table.goal[ai]!;
        const ar = table.red[ai]!;
        goals[0] += mass * hg;
        goals[1] += mass * ag;
        const hn = 1 - hg - hr;
        const an = 1 - ag - ar;
        const up = Math.min(di + 1, diffs - 1) * MEN_STATES;
        const down = Math.max(di - 1, 0) * MEN_STATES;
        const same = di * MEN_STATES;
        const mUp = Math.min(mi + 1, MEN_STATES - 1);
        const mDown = Math.max(mi - 1, 0);
        next[same + mi]! += mass * (hg * ag + hr * ar + hn * an);
        next[up + mUp]! += mass * hg * ar;
        next[up + mi]! += mass * hg * an;
        next[down + mDown]! += mass * hr * ag;
        next[same + mDown]! += mass * hr * an;
        next[down + mi]! += mass * hn * ag;
        next[same + mUp]! += mass * hn * ar;
      }
    }
    spare = dist;
    return next;
  });
  return goals;
}
