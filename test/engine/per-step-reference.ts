// The per-step sampler, the engine's loop before the event-driven one replaced it (issue 11): one pcg4d
// call per step, each side's word tested against the step's no-event threshold. Kept as a slow
// reference only: the equivalence test compares the engine with it in distribution
// (test/engine/event-sampler.test.ts) and the golden digests pin its counters (test/engine/golden.test.ts).
// It reuses the engine's set-up, events and tallies (fallback/engine.ts simulateDraws, sideEvent), so
// only the step loop lives here.
import { cellRowOf, goalsOf, sideEvent, simulateDraws } from '../../fallback/engine.js';
import {
  AWAY,
  COUNTER_WORDS,
  type CompiledFixture,
  type EngineSeed,
  EVENT_KINDS,
  EVENT_SUBSTITUTION,
  HOME,
  RED_CARD_BUCKETS,
  SCORE_STATE_BUCKETS,
  SECOND_HALF_START,
  SIDES,
  STEPS,
  STRENGTH_BUCKETS,
  THRESHOLD_SIDE_STRIDE,
  THRESHOLD_STEP_STRIDE,
  THRESHOLD_STRENGTH_STRIDE,
} from '../../src/engine-contract/layout.js';
import type { SamplePath } from '../../src/engine-contract/sample-path.js';

// pcg4d's first stage (x * 1664525 + 1013904223), inlined in the step loop: see src/engine-contract/rng.ts.
const LCG_MULTIPLIER = 1664525;
const LCG_INCREMENT = 1013904223;
const CELLS = SCORE_STATE_BUCKETS * RED_CARD_BUCKETS;

interface StepMajorTables {
  events: Uint32Array;
  noEvent: Uint32Array;
}

const stepMajorCache = new WeakMap<Uint32Array, StepMajorTables>();

/**
 * The threshold table reordered so that a draw's consecutive steps in one cell read neighbouring words:
 * `events` at ((cell row) * STEPS + step) * EVENT_KINDS + kind, where the cell row is the engine's
 * (side, strength bucket, score/red cell) row (cellRowOf); `noEvent` holds the EVENT_SUBSTITUTION words
 * alone at (cell row) * STEPS + step. Built once per threshold array.
 */
function stepMajorTablesOf(th: Uint32Array): StepMajorTables {
  const cached = stepMajorCache.get(th);
  if (cached !== undefined) return cached;
  const events = new Uint32Array(SIDES * STRENGTH_BUCKETS * CELLS * STEPS * EVENT_KINDS);
  const noEvent = new Uint32Array(SIDES * STRENGTH_BUCKETS * CELLS * STEPS);
  let row = 0;
  for (let side = 0; side < SIDES; side++) {
    for (let strength = 0; strength < STRENGTH_BUCKETS; strength++) {
      for (let cell = 0; cell < CELLS; cell++) {
        for (let step = 0; step < STEPS; step++, row++) {
          const from =
            side * THRESHOLD_SIDE_STRIDE +
            strength * THRESHOLD_STRENGTH_STRIDE +
            step * THRESHOLD_STEP_STRIDE +
            cell * EVENT_KINDS;
          for (let kind = 0; kind < EVENT_KINDS; kind++) events[row * EVENT_KINDS + kind] = th[from + kind]!;
          noEvent[row] = th[from + EVENT_SUBSTITUTION]!;
        }
      }
    }
  }
  const tables = { events, noEvent };
  stepMajorCache.set(th, tables);
  return tables;
}

/** pcg4d's first stage applied to each step index (the step loop's second input word). */
const STEP_LCG = Int32Array.from(
  { length: STEPS },
  (_, step) => (Math.imul(step, LCG_MULTIPLIER) + LCG_INCREMENT) | 0,
);

/**
 * simulateRange of the per-step sampler: draws [firstDraw, endDraw) into `counters`, with `samples` the
 * event paths. A side has an event in a step when its word falls below the step's no-event threshold;
 * bit 15 of word 3 orders the sides within the step.
 */
export function simulateRangePerStep(
  compiled: CompiledFixture,
  seed: EngineSeed,
  firstDraw: number,
  endDraw: number,
  counters: Uint32Array,
  samples?: SamplePath[],
): void {
  const { events, noEvent } = stepMajorTablesOf(compiled.thresholds);
  const hashed = new Int32Array(4 * STEPS);
  simulateDraws(compiled, seed, firstDraw, endDraw, counters, samples, (st, draw, firstEnd, secondEnd) => {
    hashSteps(st.seedC, st.seedD, st.drawA, firstEnd, secondEnd, hashed);
    let halfTime = 0;
    for (let half = 0; half < 2; half++) {
      const from = half === 0 ? 0 : SECOND_HALF_START;
      const to = half === 0 ? firstEnd : secondEnd;
      for (let step = from; step < to; step++) {
        const a = hashed[4 * step]!;
        const b = hashed[4 * step + 1]!;
        const uHome = a >>> 0;
        const uAway = b >>> 0;
        const homeRow = cellRowOf(HOME) * STEPS + step;
        const awayRow = cellRowOf(AWAY) * STEPS + step;
        if (uHome < noEvent[homeRow]! || uAway < noEvent[awayRow]!) {
          // The second round's c and d, finished only for steps with an event.
          const c = (hashed[4 * step + 2]! + Math.imul(a, b)) | 0;
          const d = (hashed[4 * step + 3]! + Math.imul(b, c)) | 0;
          // The second side's row is re-read at its turn: the first side's goal or red card changes it.
          const first = (d & 0x8000) === 0 ? HOME : AWAY;
          for (const side of first === HOME ? [HOME, AWAY] : [AWAY, HOME]) {
            const row = cellRowOf(side) * STEPS + step;
            const u = side === HOME ? uHome : uAway;
            if (u < noEvent[row]!)
              sideEvent(st, events, row * EVENT_KINDS, side, u, side === HOME ? c : d, step, draw);
          }
        }
      }
      if (half === 0) halfTime = goalsOf(HOME) | (goalsOf(AWAY) << 8);
    }
    return halfTime;
  });
}

/**
 * pcg4d(draw, step, key.lo, key.hi) of every played step (src/engine-contract/rng.ts, inlined), up to
 * the second round's c and d: words a, b, c, d of step s at hashed[4 * s ..].
 */
function hashSteps(
  seedC: number,
  seedD: number,
  drawA: number,
  firstEnd: number,
  secondEnd: number,
  hashed: Int32Array,
): void {
  for (let step = 0; step < secondEnd; step++) {
    if (step === firstEnd) step = SECOND_HALF_START;
    const stepB = STEP_LCG[step]!;
    let a = (drawA + Math.imul(stepB, seedD)) | 0;
    let b = (stepB + Math.imul(seedC, a)) | 0;
    let c = (seedC + Math.imul(a, b)) | 0;
    let d = (seedD + Math.imul(b, c)) | 0;
    a ^= a >>> 16;
    b ^= b >>> 16;
    c ^= c >>> 16;
    d ^= d >>> 16;
    a = (a + Math.imul(b, d)) | 0;
    hashed[4 * step] = a;
    hashed[4 * step + 1] = (b + Math.imul(c, a)) | 0;
    hashed[4 * step + 2] = c;
    hashed[4 * step + 3] = d;
  }
}

/** recordSamplePaths of the per-step sampler. */
export function recordSamplePathsPerStep(
  compiled: CompiledFixture,
  seed: EngineSeed,
  count: number,
): SamplePath[] {
  const samples: SamplePath[] = [];
  simulateRangePerStep(compiled, seed, 0, count, new Uint32Array(COUNTER_WORDS), samples);
  return samples;
}
