// The event-driven sampler's tables (layout in ./layout.ts, "Event tables" and "Shot tables"), derived
// from a fixture's threshold table on the host, once per run; and the integer exponential both engines
// draw from them.
// Only the host uses floating point here: the engines read the finished u32 tables, so the CPU engine
// and the GPU kernel stay bit-identical.
import {
  EVENT_CELLS,
  EVENT_GOAL,
  EVENT_KIND_WORDS,
  EVENT_KINDS,
  EVENT_KINDS_AT,
  EVENT_LOG2_AT,
  EVENT_RED,
  EVENT_ROWS,
  EVENT_SHOT_OFF_TARGET,
  EVENT_SHOT_ON_TARGET,
  EVENT_SHOTS_AT,
  EVENT_SUBSTITUTION,
  EVENT_TABLE_WORDS,
  EVENT_YELLOW,
  HAZARD_FRACTION_BITS,
  HAZARD_ROW_WORDS,
  KIND_WORD_GOAL,
  KIND_WORD_RED,
  KIND_WORD_YELLOW,
  LOG2_TABLE_BITS,
  LOG2_TABLE_WORDS,
  SHOT_FRACTION_BITS,
  SHOT_ON_TARGET_OFFSET,
  SHOT_ROW_WORDS,
  SIDES,
  STEPS,
  STRENGTH_BUCKETS,
  THRESHOLD_SIDE_STRIDE,
  THRESHOLD_STEP_STRIDE,
  THRESHOLD_STRENGTH_STRIDE,
} from './layout.js';

const UNIT = 2 ** HAZARD_FRACTION_BITS;
const SHOT_UNIT = 2 ** SHOT_FRACTION_BITS;
// Copies for exponentialBits, which runs in the CPU engine's inner loop: V8 (Node 20) folds a module's own
// constants into optimised code but reads an imported binding through the exporting module's cell on
// every use.
const FRACTION_BITS = HAZARD_FRACTION_BITS;
const LOG2_AT = EVENT_LOG2_AT;
const LOG2_BITS = LOG2_TABLE_BITS;
const TWO_32 = 2 ** 32;

/** The log2 interpolation table: round(2^F * log2(1 + i / 2^LOG2_TABLE_BITS)); the same for every fixture. */
const LOG2_TABLE = Uint32Array.from({ length: LOG2_TABLE_WORDS }, (_, i) =>
  Math.round(UNIT * Math.log2(1 + i / (1 << LOG2_TABLE_BITS))),
);

/**
 * The steps of a (side, strength) block at which any of its words differ from the step before's (step 0
 * always), ending with STEPS: the model's rates change by 15-minute band, and thresholdTable copies a
 * step's whole block when its rates repeat, so a block has some ten of them.
 */
function blockChanges(thresholds: Uint32Array, from: number, changes: Int32Array): number {
  let count = 0;
  changes[count++] = 0;
  for (let step = 1; step < STEPS; step++) {
    const at = from + step * THRESHOLD_STEP_STRIDE;
    for (let word = 0; word < THRESHOLD_STEP_STRIDE; word++) {
      if (thresholds[at + word] !== thresholds[at - THRESHOLD_STEP_STRIDE + word]) {
        changes[count++] = step;
        break;
      }
    }
  }
  changes[count] = STEPS;
  return count;
}

/**
 * One row's cumulative state-event hazards, per-step kind words and cumulative expected shots. Between two
 * of its block's changes (blockChanges) a row's words repeat, so its increments and kind words are worked
 * out once per stretch (the same words give the same numbers: a stretch that starts on a change of other
 * cells of the block gives its row the numbers it had), and each step of the stretch only adds them up.
 */
function fillRow(
  tables: Uint32Array,
  thresholds: Uint32Array,
  row: number,
  from: number,
  changes: Int32Array,
  stretches: number,
): void {
  let hazard = 0;
  let shots = 0;
  let saved = 0;
  const hazardRow = row * HAZARD_ROW_WORDS;
  const shotRow = EVENT_SHOTS_AT + row * SHOT_ROW_WORDS;
  const savedRow = shotRow + SHOT_ON_TARGET_OFFSET;
  const kindsRow = EVENT_KINDS_AT + row * STEPS * EVENT_KIND_WORDS;
  tables[hazardRow] = 0;
  tables[shotRow] = 0;
  tables[savedRow] = 0;
  for (let stretch = 0; stretch < stretches; stretch++) {
    const first = changes[stretch]!;
    const end = changes[stretch + 1]!;
    const at = from + first * THRESHOLD_STEP_STRIDE;
    const goal = thresholds[at + EVENT_GOAL]!;
    const onTarget = thresholds[at + EVENT_SHOT_ON_TARGET]!;
    const offTarget = thresholds[at + EVENT_SHOT_OFF_TARGET]!;
    // The step's shots that are not goals: the words between the goals' and the shots' cut-offs.
    const shot = offTarget - goal;
    const state = thresholds[at + EVENT_SUBSTITUTION]! - shot;
    // A certain event (state = 2^32 - 1 or more) costs 32 bits: never more, so the sums stay below 2^32.
    const increment = state === 0 ? 0 : -Math.log2(Math.max(1 - state / TWO_32, 2 ** -32));
    const goalKind = kindWord(goal, state);
    const yellowKind = kindWord(thresholds[at + EVENT_YELLOW]! - shot, state);
    const redKind = kindWord(thresholds[at + EVENT_RED]! - shot, state);
    const shotIncrement = shot / TWO_32;
    const savedIncrement = (onTarget - goal) / TWO_32;
    for (let step = first; step < end; step++) {
      const kinds = kindsRow + step * EVENT_KIND_WORDS;
      tables[kinds + KIND_WORD_GOAL] = goalKind;
      tables[kinds + KIND_WORD_YELLOW] = yellowKind;
      tables[kinds + KIND_WORD_RED] = redKind;
      hazard += increment;
      shots += shotIncrement;
      saved += savedIncrement;
      tables[hazardRow + step + 1] = roundNonNegative(hazard * UNIT);
      tables[shotRow + step + 1] = roundNonNegative(shots * SHOT_UNIT);
      tables[savedRow + step + 1] = roundNonNegative(saved * SHOT_UNIT);
    }
  }
}

/** The largest double below 0.5: the one non-negative x whose x + 0.5 rounds up to an integer (1). */
const BELOW_HALF = 0.49999999999999994;

/**
 * Math.round(x) for 0 <= x < 2^52 (the rows' sums stay below 2^32), without Math.round's branch: V8
 * rounds by ceil(x) and a compare that steps back by one when the fraction was below one half, a branch
 * taken at random for these sums, whose mispredictions were half of buildEventTables' time (0.85 → 0.45
 * ms a compile, one thread; docs/decisions.md §6, "What a job costs the host"). floor(x + 0.5) is the
 * same number for every such x but BELOW_HALF: adding 0.5 is exact within x's binade, and where the sum
 * crosses into the next one (x in [2^k - 0.5, 2^k)) it rounds to a neighbour of a value in
 * [2^k, 2^k + 0.5), whose floor is 2^k either way, as Math.round's. test/engine/event-sampler.test.ts
 * compares the two on edges and random values.
 */
export function roundNonNegative(x: number): number {
  return x === BELOW_HALF ? 0 : Math.floor(x + 0.5);
}

/** A kind word: the share `cumulative / state` of the state events' words, as a u32 cut-off. */
function kindWord(cumulative: number, state: number): number {
  return state === 0 ? 0 : Math.min(TWO_32 - 1, Math.floor((cumulative * TWO_32) / state));
}

/**
 * The event tables of a threshold table (THRESHOLD_WORDS words); EVENT_TABLE_WORDS words, written into
 * `tables` (every word is written). `changes` (its first `stretches` entries, then STEPS), when the
 * compiler gives them, are steps at or after which its rates may change, step 0 first: every change of a
 * block's words is among them, so they stand for each block's blockChanges without a comparison of its
 * words (a stretch that starts where a block's words do not change gives its rows the numbers they had).
 */
export function buildEventTables(
  thresholds: Uint32Array,
  tables: Uint32Array = new Uint32Array(EVENT_TABLE_WORDS),
  stretches?: { changes: Int32Array; stretches: number },
): Uint32Array {
  tables.set(LOG2_TABLE, EVENT_LOG2_AT);
  const found = new Int32Array(STEPS + 1);
  for (let side = 0; side < SIDES; side++) {
    for (let strength = 0; strength < STRENGTH_BUCKETS; strength++) {
      const block = side * THRESHOLD_SIDE_STRIDE + strength * THRESHOLD_STRENGTH_STRIDE;
      const changes = stretches?.changes ?? found;
      const count = stretches?.stretches ?? blockChanges(thresholds, block, found);
      for (let cell = 0; cell < EVENT_CELLS; cell++) {
        const row = (side * STRENGTH_BUCKETS + strength) * EVENT_CELLS + cell;
        fillRow(tables, thresholds, row, block + cell * EVENT_KINDS, changes, count);
      }
    }
  }
  if (EVENT_ROWS !== SIDES * STRENGTH_BUCKETS * EVENT_CELLS) throw new Error('event table rows');
  return tables;
}

const eventTableCache = new WeakMap<Uint32Array, Uint32Array>();

/**
 * The event tables of a threshold table, built once per threshold array (a compiled fixture's tables
 * are never modified, and a fixture's runs share them).
 */
export function eventTablesOf(thresholds: Uint32Array): Uint32Array {
  let tables = eventTableCache.get(thresholds);
  if (tables === undefined) {
    tables = buildEventTables(thresholds);
    eventTableCache.set(thresholds, tables);
  }
  return tables;
}

/**
 * Takes `tables` (buildEventTables(thresholds), built elsewhere: the CPU pool builds them once on the
 * host and shares them with its workers) as the event tables of `thresholds`.
 */
export function adoptEventTables(thresholds: Uint32Array, tables: Uint32Array): void {
  eventTableCache.set(thresholds, tables);
}

/**
 * -log2(w / 2^32) in units of 2^-HAZARD_FRACTION_BITS, from u32 word w: an Exp(ln 2)-distributed hazard
 * budget (P(result > x bits) = 2^-x). Integer only (leading zeros, a table and a linear interpolation
 * between its entries, error below 2^-F bits), the same steps as the kernel's exponential_bits.
 * w = 0 counts as 2^-32.
 */
export function exponentialBits(tables: Uint32Array, w: number): number {
  if (w === 0) return 32 << FRACTION_BITS;
  const lz = Math.clz32(w);
  const m = (w << lz) >>> 0; // top bit set: m / 2^31 in [1, 2)
  const index = (m >>> (31 - LOG2_BITS)) & ((1 << LOG2_BITS) - 1);
  const fraction = (m >>> (15 - LOG2_BITS)) & 0xffff;
  const low = tables[LOG2_AT + index]!;
  const high = tables[LOG2_AT + index + 1]!;
  const log2 = low + (((high - low) * fraction) >>> 16);
  return ((lz + 1) << FRACTION_BITS) - log2;
}
