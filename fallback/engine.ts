// The per-draw loop: the CPU reference that the GPU kernel (shaders/) reproduces bit for bit. Only u32
// integer work happens here; the tables come from src/engine/compile.ts. A draw's numbers depend only on
// (seed, draw, stream), so any split of a draw range gives the same counters.

import * as eventTables from '../src/engine-contract/event-tables.js';
import type { CompiledFixture, EngineSeed } from '../src/engine-contract/layout.js';
import * as layout from '../src/engine-contract/layout.js';
import * as rng from '../src/engine-contract/rng.js';
import type { SamplePath } from '../src/engine-contract/sample-path.js';

// Module constants, not imported bindings: V8 (Node 20) reads an imported binding through the exporting
// module's cell on every use (a load and a hole check, and numbers converted on each use) and does not
// fold it into optimised code, while a module's own constants are folded. The per-draw loop reads
// these on every event.
const { eventTablesOf, exponentialBits } = eventTables;
const {
  AWAY,
  C_ADDED_TIME,
  C_COMEBACK,
  C_FIRST_GOAL,
  C_FIRST_GOAL_BAND,
  C_FT_GRID,
  C_GOAL_SQUARES,
  C_HT_FT,
  C_HT_GRID,
  C_PLAYERS,
  C_STEP_CARDS,
  C_STEP_GOALS,
  C_STEP_STATE,
  C_TEAM,
  COUNTER_WORDS,
  EVENT_GOAL,
  EVENT_KIND_WORDS,
  EVENT_KINDS_AT,
  EVENT_RED,
  EVENT_SHOTS_AT,
  EVENT_SHOT_OFF_TARGET,
  EVENT_SHOT_ON_TARGET,
  EVENT_SUBSTITUTION,
  EVENT_YELLOW,
  FIRST_HALF_ADDED_START,
  FX_ADDED_TIME_FIRST,
  FX_ADDED_TIME_SECOND,
  FX_ASSIST_THRESHOLD,
  FX_MAX_SUBSTITUTIONS,
  FX_STATE_HALF_TIME_AWAY,
  FX_STATE_HALF_TIME_HOME,
  FX_STATE_IN_PLAY,
  FX_STATE_MINUTES_PLAYED,
  FX_STATE_STEP,
  GOAL_SQUARE_CAP,
  GRID_SIZE,
  HAZARD_ROW_WORDS,
  HOME,
  KIND_WORD_GOAL,
  KIND_WORD_RED,
  KIND_WORD_YELLOW,
  LINEUP_MODE_FIXED,
  LINEUP_MODE_PREDICTED,
  LINEUP_MODE_STATE,
  NO_EVENT_STEP,
  P_APPEARANCES,
  P_ASSIST_1,
  P_ASSISTS,
  P_FIRST_SCORER,
  P_GOAL_OR_ASSIST_1,
  P_GOALS,
  P_GOALS_1,
  P_GOALS_2,
  P_GOALS_3,
  P_MINUTES,
  P_RED_1,
  P_REDS,
  P_SHOTS,
  P_SHOTS_ON_TARGET,
  P_STARTS,
  P_YELLOW_1,
  P_YELLOWS,
  PLAYER_COUNTERS,
  PLAYER_SLOTS,
  playerCounterBase,
  RED_CARD_BUCKETS,
  S_ASSIST_WEIGHT,
  S_BENCH_COUNT,
  S_BENCH_LIMIT,
  S_BENCH_ORDER,
  S_BOOKED_CARD_WEIGHT,
  S_CARD_WEIGHT,
  S_GOAL_WEIGHT,
  S_IS_KEEPER,
  S_KEEPER_COUNT,
  S_KEEPER_CUM,
  S_KEEPER_ORDER,
  S_LINEUP_MODE,
  S_OUTFIELD_COUNT,
  S_OUTFIELD_CUM,
  S_OUTFIELD_ORDER,
  S_OUTFIELD_PICKS,
  S_SHOT_WEIGHT,
  S_STRENGTH_EDGES,
  S_SUB_OFF_WEIGHT,
  S_XI,
  SAMPLING_UNIT,
  SCORE_STATE_BUCKETS,
  SECOND_HALF_ADDED_START,
  SECOND_HALF_START,
  SHOT_COUNTER_BITS,
  SHOT_COUNTER_UNIT,
  SHOT_FRACTION_BITS,
  SHOT_ON_TARGET_OFFSET,
  SHOT_ROW_WORDS,
  SHOT_SHARE_BITS,
  ST_BENCH,
  ST_BENCH_LENGTH,
  ST_GOALS,
  ST_PITCH,
  ST_PITCH_COUNT,
  ST_SENT_OFF,
  ST_STRENGTH,
  ST_SUBSTITUTIONS,
  STATE_HOME_LEADING,
  STATE_PITCH_BOOKED,
  STATE_PITCH_CAME_ON,
  STATE_PITCH_SLOT,
  STATE_LEVEL,
  STEP_BAND,
  STEP_REGULAR_MINUTE,
  STEPS,
  STRENGTH_BUCKETS,
  sideBase,
  stateBase,
  TEAM_COUNTERS,
  TEAM_GOALS,
  TEAM_REDS,
  TEAM_SHOTS,
  TEAM_SHOTS_ON_TARGET,
  TEAM_SUBSTITUTIONS,
  TEAM_YELLOWS,
  XI_SIZE,
} = layout;
const {
  pcg4d,
  runKey,
  STREAM_ASSIST_BASE,
  STREAM_EVENT_BASE,
  STREAM_EVENT_SIDE_STRIDE,
  STREAM_SETUP_ADDED_TIME,
  STREAM_SETUP_LINEUPS,
} = rng;

/**
 * Weight kinds. The per-draw weights are kept in pitch-list order, index (side * WEIGHT_KINDS + kind) *
 * XI_SIZE + i for the i-th player on the side's list, so a pick walks contiguous memory and returns a
 * list index (the player leaving or booked is then found without a search).
 */
const W_GOAL = 0;
const W_ASSIST = 1;
const W_SHOT = 2;
const W_CARD = 3;
const W_OFF = 4;
const WEIGHT_KINDS = 5;
const SLOT_WEIGHT_STRIDE = 8;
const STATE_AWAY_LEADING = 2;
// pcg4d's first stage (x * 1664525 + 1013904223), inlined in the step loop: see src/engine-contract/rng.ts.
const LCG_MULTIPLIER = 1664525;
const LCG_INCREMENT = 1013904223;
const MAX_ADDED = 10;
/**
 * A player's draw record packs four small counts into one word, so the tally reads one word for the
 * many players with nothing to record: goals (bits 0-7; at most one per step), assists (8-15), yellow
 * cards (16-23; at most 2) and red cards (24-31; at most 1).
 */
const RECORD_GOAL = 1;
const RECORD_ASSIST = 1 << 8;
const RECORD_YELLOW = 1 << 16;
const RECORD_RED = 1 << 24;
const CELLS = SCORE_STATE_BUCKETS * RED_CARD_BUCKETS;
/**
 * Expected shots (layout.ts "Shot tables"): a side's sum is in units of 2^-SHOT_FRACTION_BITS shots, a
 * player's share in units of 2^-(SHOT_FRACTION_BITS + SHOT_SHARE_BITS); both become counter units
 * (2^-SHOT_COUNTER_BITS shots) by a shift after adding the dither word's top bits.
 */
const TEAM_SHOT_SHIFT = SHOT_FRACTION_BITS - SHOT_COUNTER_BITS;
const PLAYER_SHOT_SHIFT = SHOT_FRACTION_BITS + SHOT_SHARE_BITS - SHOT_COUNTER_BITS;
/** The kind of a state event from the number of its kind words at or below the event's word. */
const STATE_EVENT_KIND = Int32Array.of(EVENT_GOAL, EVENT_YELLOW, EVENT_RED, EVENT_SUBSTITUTION);

/**
 * A typed array on its own ArrayBuffer. V8 keeps a typed array of up to 64 bytes made from a length inside
 * the object (its data may move), so each access loads the data pointer and length and checks the index;
 * on an ArrayBuffer the data stays put and optimised code reads a module constant array at a fixed
 * address. The per-side arrays below are read on every event.
 */
function offHeapInt32(length: number): Int32Array {
  return new Int32Array(new ArrayBuffer(length * Int32Array.BYTES_PER_ELEMENT));
}

function offHeapUint32(length: number): Uint32Array {
  return new Uint32Array(new ArrayBuffer(length * Uint32Array.BYTES_PER_ELEMENT));
}

/** The regular minute and the 15-minute band of each step, as typed arrays for the event paths. */
const STEP_MINUTE = Int32Array.from(STEP_REGULAR_MINUTE);
const STEP_BANDS = Int32Array.from(STEP_BAND);

// Everything one draw mutates lives in these module-level arrays, reset per draw: simulateDraws runs to
// completion without yielding, so calls never interleave (each worker thread has its own module), and
// fixed arrays let the compiler fold their addresses and lengths into the code.
const word = offHeapUint32(4);
/** The assist stream's words of a goal in the per-step reference (sideEvent). */
const assistWord = offHeapUint32(4);
/** On-pitch slots per side, index side * XI_SIZE + i. Removal moves the last entry into the hole. */
const pitch = offHeapInt32(2 * XI_SIZE);
const pitchCount = offHeapInt32(2);
/** Current weight of each kind of each on-pitch player, in pitch-list order (see W_GOAL). */
const pitchWeight = offHeapInt32(2 * WEIGHT_KINDS * XI_SIZE);
/** Every slot's weights from the fixture table: (side * PLAYER_SLOTS + slot) * SLOT_WEIGHT_STRIDE + kind. */
const slotWeight = offHeapInt32(2 * PLAYER_SLOTS * SLOT_WEIGHT_STRIDE);
/** Each side's on-pitch total per kind, index side * WEIGHT_KINDS + kind. */
const totals = offHeapInt32(2 * WEIGHT_KINDS);
/** Each player's goals, assists, yellow and red cards of the draw, one byte each (see RECORD_GOAL). */
const record = offHeapInt32(2 * PLAYER_SLOTS);
/** The players (side * PLAYER_SLOTS + slot) whose record is not 0 in this draw: the tally reads only these. */
const recorded = offHeapInt32(2 * PLAYER_SLOTS);
/** The draw (DrawState.stamp) in which each player last started: no per-draw reset needed. */
const startedIn = offHeapInt32(2 * PLAYER_SLOTS);
/**
 * 1 for the players an in-play state puts on the pitch on a yellow card (their next yellow is their
 * second), per range; all 0 for a pre-match run.
 */
const bookedBefore = offHeapInt32(2 * PLAYER_SLOTS);
/**
 * An in-play side with a known XI (LINEUP_MODE_STATE) starts every draw of a range with the same players
 * and weights: listStatePlayers writes them here once per range, and each draw copies them
 * (putStatePlayersOn) where putting the players on one by one was a fifth of an in-play draw. Their
 * starts and minutes, the same every draw, are added once at the range's end (flushAppearances).
 */
const statePitch = offHeapInt32(2 * XI_SIZE);
const statePitchCount = offHeapInt32(2);
const statePitchWeight = offHeapInt32(2 * WEIGHT_KINDS * XI_SIZE);
const stateTotals = offHeapInt32(2 * WEIGHT_KINDS);
/**
 * Appearance counters summed over the range in dense per-player arrays, written into the counters once
 * at its end (flushAppearances): a draw touches two or three of these words per player who appears
 * instead of three scattered counters. Minutes: a starter's 90 are added at the flush from starts; a
 * substitute adds 90 - the minute he comes on, a player taken off takes away 90 - the minute he leaves.
 */
const starts = offHeapInt32(2 * PLAYER_SLOTS);
const substituteAppearances = offHeapInt32(2 * PLAYER_SLOTS);
const minutesFromStarts = offHeapInt32(2 * PLAYER_SLOTS);
const score = offHeapInt32(2);
const sentOff = offHeapInt32(2);
const subsUsed = offHeapInt32(2);
/**
 * The substitutes of a starting XI, in the order they come on (nextSubstitute), listed once per range and
 * XI instead of scanning the bench order past the starters at every substitution (a predicted XI's bench
 * order is the squad by start probability, starters first: about 0.25 us a draw, measured). An XI is
 * named by its "choice" (see setUpDraw): entry = side * XI_CHOICES^2 + choice. `benchRange` says in which
 * range (rangeNumber) an entry was listed; a list holds at most MAX_SUBSTITUTES players.
 */
const MAX_SUBSTITUTES = 5; // the model parameters' substitutions.max_per_side is at most 5
const XI_CHOICES = PLAYER_SLOTS + 1;
const BENCH_ENTRIES = 2 * XI_CHOICES * XI_CHOICES;
const benchRange = offHeapInt32(BENCH_ENTRIES);
const benchLength = offHeapInt32(BENCH_ENTRIES);
const benchSlots = offHeapInt32(BENCH_ENTRIES * MAX_SUBSTITUTES);
/** The current draw's entry of each side. */
const drawBench = offHeapInt32(2);
/**
 * The starting XIs of a range, kept by entry (as the substitute lists are) once a draw has put one on the
 * pitch: its pitch list, its players' weights of every kind in pitch-list order, the side's totals and
 * strength bucket. A later draw with the same entry copies them in one pass where putting eleven starters
 * on one by one (their weights, totals and counters) was a tenth of a pre-match draw (issue 64); its
 * starts are counted per entry (xiDraws) and added to its players' at the range's end (flushAppearances).
 * A range keeps at most XI_CACHE_SLOTS of them (a squad's predicted XI has some tens of choices); an entry
 * beyond them is put on player by player every draw, as before.
 */
const XI_CACHE_SLOTS = 192;
const XI_WEIGHT_WORDS = WEIGHT_KINDS * XI_SIZE;
const xiRange = offHeapInt32(BENCH_ENTRIES);
/** The entry's slot (valid when xiRange[entry] is the range's number), or -1: not kept. */
const xiSlotOf = offHeapInt32(BENCH_ENTRIES);
const xiPitch = offHeapInt32(XI_CACHE_SLOTS * XI_SIZE);
const xiPitchCount = offHeapInt32(XI_CACHE_SLOTS);
const xiWeight = offHeapInt32(XI_CACHE_SLOTS * XI_WEIGHT_WORDS);
const xiTotals = offHeapInt32(XI_CACHE_SLOTS * WEIGHT_KINDS);
const xiBucket = offHeapInt32(XI_CACHE_SLOTS);
const xiSide = offHeapInt32(XI_CACHE_SLOTS);
/** Draws of the range that copied the slot's XI (the draw that listed it put its players on itself). */
const xiDraws = offHeapInt32(XI_CACHE_SLOTS);
let xiSlotsUsed = 0;
/**
 * A sampled side's breakpoints per range: the offsets at which systematic sampling's picks move on (see
 * setUpDraw), for the goalkeeper (its candidates' cumulative ticks below SAMPLING_UNIT) and for the
 * outfield picks (each candidate's cumulative ticks less the multiple of SAMPLING_UNIT below them). The
 * number of a list's breakpoints at or below a draw's offset is that pick's part of the XI's choice,
 * counted without putting anybody on the pitch.
 */
const keeperBreaks = offHeapInt32(2 * PLAYER_SLOTS);
const keeperBreakCount = offHeapInt32(2);
const outfieldBreaks = offHeapInt32(2 * PLAYER_SLOTS);
const outfieldBreakCount = offHeapInt32(2);
/**
 * Per side, the outfield candidates' indices a predicted XI's offset 0 picks, summed: the sum of the
 * picked indices less this is the number of breakpoints at or below the offset (see setUpDraw).
 */
const outfieldIndexBase = offHeapInt32(2);
/** Numbers the ranges, so a range never reads another's bench lists (a worker runs many fixtures). */
let rangeNumber = 0;
/** Each side's strength bucket. */
const strengthBucket = offHeapInt32(2);
/** Each side's (strength bucket, score/red cell) row of the event tables (layout.ts "Event tables"). */
const cellRow = offHeapInt32(2);
/**
 * The event sampler's pending event of each side: its step (NO_EVENT_STEP: none left), its kind
 * (EVENT_GOAL..EVENT_SUBSTITUTION, decided when it is found: see findNext) and words.
 */
const pendingStep = offHeapInt32(2);
const pendingKind = offHeapInt32(2);
const pendingPick = offHeapInt32(2);
const pendingOrder = offHeapInt32(2);
/** Searches made by each side in the draw (its stream index) and the first step it has not played. */
const searches = offHeapInt32(2);
/** The words of each side's next search (side * 4 + word), drawn one search ahead (see findNext). */
const nextWords = offHeapInt32(8);
const quietFrom = offHeapInt32(2);
/**
 * Expected shots (layout.ts "Shot tables"), per side: the first step whose shots are not yet added; the
 * open segment's shots and saved shots (units of 2^-SHOT_FRACTION_BITS); the draw's totals; the running
 * shares R (u32 values kept in int32 words, wrapping). Per player (side * PLAYER_SLOTS + slot): R when he
 * came on.
 */
const shotFrom = offHeapInt32(2);
const segmentShots = offHeapInt32(2);
const segmentSaved = offHeapInt32(2);
const teamShots = offHeapInt32(2);
const teamSaved = offHeapInt32(2);
const shotShare = offHeapInt32(2);
const savedShare = offHeapInt32(2);
const shotShareOnEntry = offHeapInt32(2 * PLAYER_SLOTS);
const savedShareOnEntry = offHeapInt32(2 * PLAYER_SLOTS);
/**
 * pcg4d's first stage of the key words and of the draw, as the searches read them: the same numbers as
 * DrawState's seedC, seedD and drawA, kept in an Int32Array because int32 values beyond V8's small
 * integers would otherwise be boxed numbers in object fields.
 */
const drawKey = offHeapInt32(6);
const KEY_C = 0;
const KEY_D = 1;
const KEY_DRAW_A = 2;
/** The draw's half ends: the first step after each half's added time. */
const KEY_FIRST_END = 3;
const KEY_SECOND_END = 4;
/** The draw's shot dither (STREAM_SETUP_ADDED_TIME word 2; layout.ts "Shot tables"). */
const KEY_DITHER = 5;

/** A range's inputs and the draw's scalar state (exported as a type for the per-step reference in test/). */
export interface DrawState {
  /**
   * The fixture table. Its counts, slots and small weights are read as `fx[i]! | 0`: a Uint32Array word
   * need not fit an int32, so V8 would otherwise compare and index with doubles.
   */
  fx: Uint32Array;
  counters: Uint32Array;
  seedLo: number;
  seedHi: number;
  /** pcg4d's first stage of the key words and of the current draw (inlined generator calls). */
  seedC: number;
  seedD: number;
  drawA: number;
  /** 0 home leading, 1 level, 2 away leading. */
  state: number;
  /** The side that scored first, or -1. */
  firstGoal: number;
  /** Trailing flags: bit 0 home, bit 1 away. */
  trailed: number;
  /** The draw's number within the range, from 1 (see startedIn). */
  stamp: number;
  /** The run starts from an in-play state (layout.ts "In-play state block") at step startStep. */
  inPlay: boolean;
  startStep: number;
  /** A run from the second half: its half-time score (home | away << 8); -1 otherwise (see playEvents). */
  halfTimeAtStart: number;
  /** Some side samples its XI (a predicted lineup): the draw's lineup words are read. */
  samplesLineups: boolean;
  /** Entries of `recorded` in use. */
  recordedCount: number;
  path: SamplePath | null;
}

/** Packs each slot's five weights into neighbouring words (one cache line) for players coming on. */
function fillSlotWeights(fx: Uint32Array): void {
  for (let side = 0; side < 2; side++) {
    const base = sideBase(side);
    for (let slot = 0; slot < PLAYER_SLOTS; slot++) {
      const to = (side * PLAYER_SLOTS + slot) * SLOT_WEIGHT_STRIDE;
      slotWeight[to + W_GOAL] = fx[base + S_GOAL_WEIGHT + slot]!;
      slotWeight[to + W_ASSIST] = fx[base + S_ASSIST_WEIGHT + slot]!;
      slotWeight[to + W_SHOT] = fx[base + S_SHOT_WEIGHT + slot]!;
      slotWeight[to + W_CARD] = fx[base + S_CARD_WEIGHT + slot]!;
      slotWeight[to + W_OFF] = fx[base + S_SUB_OFF_WEIGHT + slot]!;
    }
  }
}

function newDrawState(compiled: CompiledFixture, seed: EngineSeed, counters: Uint32Array): DrawState {
  // The substitute lists hold MAX_SUBSTITUTES players: a table allowing more would stop short silently.
  if ((compiled.fixture[FX_MAX_SUBSTITUTIONS]! | 0) > MAX_SUBSTITUTES) {
    throw new RangeError(`at most ${MAX_SUBSTITUTES} substitutions per side`);
  }
  const key = runKey(seed);
  fillSlotWeights(compiled.fixture);
  // Players' records are cleared by each draw's tally; a range that threw part-way leaves them dirty.
  record.fill(0);
  startedIn.fill(0);
  starts.fill(0);
  substituteAppearances.fill(0);
  minutesFromStarts.fill(0);
  // Only the players who came on in a draw have a share on entry other than 0 (finishDraw clears theirs).
  shotShareOnEntry.fill(0);
  savedShareOnEntry.fill(0);
  rangeNumber = (rangeNumber + 1) | 0;
  if (rangeNumber === 0) {
    benchRange.fill(0);
    xiRange.fill(0);
  }
  xiSlotsUsed = 0;
  for (let side = 0; side < 2; side++) {
    outfieldIndexBase[side] = outfieldIndexBaseOf(compiled.fixture, side);
    listBreakpoints(compiled.fixture, side);
  }
  fillBookedBefore(compiled.fixture);
  let samplesLineups = false;
  for (let side = 0; side < 2; side++) {
    const mode = compiled.fixture[sideBase(side) + S_LINEUP_MODE]! | 0;
    if (mode === LINEUP_MODE_STATE) listStatePlayers(compiled.fixture, side);
    else statePitchCount[side] = 0;
    if (mode !== LINEUP_MODE_STATE && mode !== LINEUP_MODE_FIXED) samplesLineups = true;
  }
  return {
    fx: compiled.fixture,
    counters,
    seedLo: key.lo | 0,
    seedHi: key.hi | 0,
    seedC: (Math.imul(key.lo, LCG_MULTIPLIER) + LCG_INCREMENT) | 0,
    seedD: (Math.imul(key.hi, LCG_MULTIPLIER) + LCG_INCREMENT) | 0,
    drawA: 0,
    state: STATE_LEVEL,
    firstGoal: -1,
    trailed: 0,
    stamp: 0,
    inPlay: compiled.fixture[FX_STATE_IN_PLAY] !== 0,
    startStep: compiled.fixture[FX_STATE_STEP]! | 0,
    halfTimeAtStart:
      compiled.fixture[FX_STATE_IN_PLAY] !== 0 && (compiled.fixture[FX_STATE_STEP]! | 0) >= SECOND_HALF_START
        ? compiled.fixture[FX_STATE_HALF_TIME_HOME]! |
          0 |
          ((compiled.fixture[FX_STATE_HALF_TIME_AWAY]! | 0) << 8)
        : -1,
    samplesLineups,
    recordedCount: 0,
    path: null,
  };
}

/** bookedBefore from the state block's pitch lists (their words' STATE_PITCH_BOOKED). */
function fillBookedBefore(fx: Uint32Array): void {
  bookedBefore.fill(0);
  for (let side = 0; side < 2; side++) {
    if ((fx[sideBase(side) + S_LINEUP_MODE]! | 0) !== LINEUP_MODE_STATE) continue;
    const at = stateBase(side);
    for (let i = 0; i < (fx[at + ST_PITCH_COUNT]! | 0); i++) {
      const entry = fx[at + ST_PITCH + i]! | 0;
      if ((entry & STATE_PITCH_BOOKED) !== 0)
        bookedBefore[side * PLAYER_SLOTS + (entry & STATE_PITCH_SLOT)] = 1;
    }
  }
}

/**
 * Adds the range's appearance counts (see `starts`) into the counters (u32, wrapping), with the starts of
 * an in-play state's players in each of the range's `draws` (the regular minutes of the state's step
 * already played, which their minutes from now leave out).
 */
function flushAppearances(fx: Uint32Array, counters: Uint32Array, draws: number): void {
  const played = fx[FX_STATE_MINUTES_PLAYED]! | 0;
  for (let slot = 0; slot < xiSlotsUsed; slot++) {
    const copies = xiDraws[slot]!;
    const side = xiSide[slot]!;
    for (let i = 0; i < xiPitchCount[slot]!; i++) {
      const p = side * PLAYER_SLOTS + xiPitch[slot * XI_SIZE + i]!;
      starts[p] = starts[p]! + copies;
    }
  }
  for (let side = 0; side < 2; side++) {
    for (let i = 0; i < statePitchCount[side]!; i++) {
      const p = side * PLAYER_SLOTS + statePitch[side * XI_SIZE + i]!;
      starts[p] = starts[p]! + draws;
      minutesFromStarts[p] = minutesFromStarts[p]! - Math.imul(played, draws);
    }
  }
  for (let p = 0; p < 2 * PLAYER_SLOTS; p++) {
    const pb = C_PLAYERS + p * PLAYER_COUNTERS;
    const started = starts[p]!;
    counters[pb + P_STARTS] = counters[pb + P_STARTS]! + started;
    counters[pb + P_APPEARANCES] = counters[pb + P_APPEARANCES]! + started + substituteAppearances[p]!;
    counters[pb + P_MINUTES] = counters[pb + P_MINUTES]! + 90 * started + minutesFromStarts[p]!;
  }
}

/** Adds to a player's record of the draw (RECORD_GOAL etc.), listing the player for the tally. */
function addRecord(st: DrawState, p: number, amount: number): void {
  if (record[p] === 0) recorded[st.recordedCount++] = p;
  record[p]! += amount;
}

/**
 * Plays one set-up draw (its XIs are on the pitch) from kick-off to the final whistle, the half ends
 * being first-half and second-half end steps; returns the half-time score (home | away << 8). Exported
 * for the per-step reference in test/, which runs its own play function through simulateDraws.
 */
export type PlayDraw = (st: DrawState, draw: number, firstEnd: number, secondEnd: number) => number;

/**
 * Simulates draws [firstDraw, endDraw) with the event-driven sampler and adds their counts into
 * `counters` (COUNTER_WORDS words, difference-encoded score states: see finalizeCounters). With
 * `samples`, also records every draw's event path there (used for the document's 20 sample paths; keep
 * that range small).
 *
 * Each side draws the step of its next event from the cumulative hazards of its current cell (one pcg4d
 * call per search, see STREAM_EVENT_BASE), the earlier side's event is played, and a side whose cell the
 * event changed searches again from that step. The per-step model (one random word per step, kept as a
 * slow reference in test/engine/per-step-reference.ts) gives the same distribution with different random
 * words (test/engine/event-sampler.test.ts).
 */
export function simulateRange(
  compiled: CompiledFixture,
  seed: EngineSeed,
  firstDraw: number,
  endDraw: number,
  counters: Uint32Array,
  samples?: SamplePath[],
): void {
  const tables = eventTablesOf(compiled.thresholds);
  const st = startRange(compiled, seed, counters);
  // The loop calls playEvents directly rather than through simulateDraws' `play`: a new closure per
  // range would make V8 throw away the loop's optimised code on every range (a worker runs many).
  for (let draw = firstDraw; draw < endDraw; draw++) {
    const added = beginDraw(st, draw, samples);
    const firstEnd = FIRST_HALF_ADDED_START + (added & 0xff);
    const secondEnd = SECOND_HALF_ADDED_START + (added >>> 8);
    finishDraw(st, playEvents(st, tables, firstEnd, secondEnd), samples);
  }
  flushAppearances(st.fx, counters, endDraw - firstDraw);
}

/**
 * The range loop around a play function: set-up, play, tally of each draw, then the range's appearance
 * counts. For the per-step reference in test/; the engine has its own copy of this loop (simulateRange).
 */
export function simulateDraws(
  compiled: CompiledFixture,
  seed: EngineSeed,
  firstDraw: number,
  endDraw: number,
  counters: Uint32Array,
  samples: SamplePath[] | undefined,
  play: PlayDraw,
): void {
  const st = startRange(compiled, seed, counters);
  for (let draw = firstDraw; draw < endDraw; draw++) {
    const added = beginDraw(st, draw, samples);
    const firstEnd = FIRST_HALF_ADDED_START + (added & 0xff);
    const secondEnd = SECOND_HALF_ADDED_START + (added >>> 8);
    finishDraw(st, play(st, draw, firstEnd, secondEnd), samples);
  }
  flushAppearances(st.fx, counters, endDraw - firstDraw);
}

function startRange(compiled: CompiledFixture, seed: EngineSeed, counters: Uint32Array): DrawState {
  if (counters.length < COUNTER_WORDS) throw new RangeError('counter array too small');
  const st = newDrawState(compiled, seed, counters);
  drawKey[KEY_C] = st.seedC;
  drawKey[KEY_D] = st.seedD;
  return st;
}

/** Sets up the draw (and its path when recording); returns its added minutes (first | second << 8). */
function beginDraw(st: DrawState, draw: number, samples: SamplePath[] | undefined): number {
  const added = setUpDraw(st, draw);
  st.path = samples === undefined ? null : emptyPath(draw, added);
  const drawA = (Math.imul(draw, LCG_MULTIPLIER) + LCG_INCREMENT) | 0;
  st.drawA = drawA;
  drawKey[KEY_DRAW_A] = drawA;
  return added;
}

/** Tallies the played draw (half-time score home | away << 8) and keeps its path when recording. */
function finishDraw(st: DrawState, halfTime: number, samples: SamplePath[] | undefined): void {
  tallyDraw(st, halfTime & 0xff, halfTime >>> 8);
  // The players who came on leave their shares on entry at 0 again, so that a kept XI's starters (copyXiOn)
  // need none written: they are the substitute list's first entries (an in-play state's earlier ones too,
  // whose shares are 0).
  for (let side = 0; side < 2; side++) {
    const entry = drawBench[side]!;
    const made = Math.min(subsUsed[side]!, benchLength[entry]!);
    for (let i = 0; i < made; i++) {
      const p = side * PLAYER_SLOTS + benchSlots[entry * MAX_SUBSTITUTES + i]!;
      shotShareOnEntry[p] = 0;
      savedShareOnEntry[p] = 0;
    }
  }
  if (samples !== undefined && st.path !== null) samples.push(st.path);
}

/** The side's current (strength bucket, score/red cell) row (layout.ts "Event tables"); for the per-step reference in test/. */
export function cellRowOf(side: number): number {
  return cellRow[side]!;
}

/** The side's goals so far in the draw; for the per-step reference in test/. */
export function goalsOf(side: number): number {
  return score[side]!;
}

function emptyPath(draw: number, added: number): SamplePath {
  return {
    draw,
    score: [0, 0],
    halfTime: [0, 0],
    addedMinutes: [added & 0xff, added >>> 8],
    starters: [startersOf(HOME), startersOf(AWAY)],
    events: [],
  };
}

/**
 * The slots of the side's starting XI, a plain loop: Array.from of a subarray made a view and walked it
 * through the iterator, some 5% of a small job's draws with its 20 sample paths.
 */
function startersOf(side: number): number[] {
  const slots = new Array<number>(XI_SIZE);
  for (let i = 0; i < XI_SIZE; i++) slots[i] = pitch[side * XI_SIZE + i]!;
  return slots;
}

/** Plays a draw's events in step order; returns the half-time score (home | away << 8). */
function playEvents(st: DrawState, tables: Uint32Array, firstEnd: number, secondEnd: number): number {
  drawKey[KEY_FIRST_END] = firstEnd;
  drawKey[KEY_SECOND_END] = secondEnd;
  searches[HOME] = 0;
  searches[AWAY] = 0;
  drawSearchWords(HOME, 0);
  drawSearchWords(AWAY, 0);
  // 0 before a match; an in-play run's first step (setUpDraw started its shots there too).
  const start = st.startStep;
  quietFrom[HOME] = start;
  quietFrom[AWAY] = start;
  findNext(tables, HOME, start);
  findNext(tables, AWAY, start);
  let halfTime = st.halfTimeAtStart;
  for (;;) {
    const home = pendingStep[HOME]!;
    const away = pendingStep[AWAY]!;
    let side = HOME;
    if (away < home) side = AWAY;
    else if (away === home) {
      if (home === NO_EVENT_STEP) break;
      side = pendingOrder[HOME]! >>> 31;
    }
    const step = pendingStep[side]!;
    if (halfTime < 0 && step >= SECOND_HALF_START) halfTime = score[HOME]! | (score[AWAY]! << 8);
    const other = 1 - side;
    const otherRow = cellRow[other]!;
    const order = pendingOrder[side]! >>> 31;
    // The side's expected shots up to and including this step, in the cell it played the step in.
    addExpectedShots(tables, side, cellRow[side]!, step + 1);
    // A goal's assist words are its search's (ENGINE_STREAM 2, rng.ts STREAM_EVENT_BASE): the order
    // word's bits 0-30 decide the assist, the pick word's low half picks the provider.
    const pickWord = pendingPick[side]!;
    playEvent(st, side, pendingKind[side]!, pickWord, pendingOrder[side]! << 1, pickWord << 16, step);
    quietFrom[side] = step + 1;
    findNext(tables, side, step + 1);
    // The opponent's pending step was drawn for its old cell: it draws again from the first step it
    // has not played under that cell. Its own event of this step is still to come (a tie) or already
    // played (quietFrom); otherwise bit 31 of this event's order word says whether the opponent's turn
    // in this step came before this event (per-step model: the sides' order within a step is random).
    // Its expected shots before that step are the old cell's.
    if (cellRow[other] !== otherRow) {
      const from = pendingStep[other] === step ? step : Math.max(step + order, quietFrom[other]!);
      addExpectedShots(tables, other, otherRow, from);
      findNext(tables, other, from);
    }
  }
  for (let side = 0; side < 2; side++) finishExpectedShots(st, tables, side);
  return halfTime < 0 ? score[HOME]! | (score[AWAY]! << 8) : halfTime;
}

// ---- Expected shots (layout.ts "Shot tables") -----------------------------------------------------------

/**
 * Adds the side's expected shots over the steps from shotFrom to `to` (not included) in event-table row
 * `row` to its open segment, skipping the first half's unplayed added time.
 */
function addExpectedShots(tables: Uint32Array, side: number, row: number, to: number): void {
  const firstEnd = drawKey[KEY_FIRST_END]!;
  let from = shotFrom[side]!;
  if (from < SECOND_HALF_START && from >= firstEnd) from = SECOND_HALF_START;
  if (to <= from) return;
  const at = EVENT_SHOTS_AT + row * SHOT_ROW_WORDS;
  const saved = at + SHOT_ON_TARGET_OFFSET;
  let shots = (tables[at + to]! | 0) - (tables[at + from]! | 0);
  let savedShots = (tables[saved + to]! | 0) - (tables[saved + from]! | 0);
  if (from < firstEnd && to >= SECOND_HALF_START) {
    shots -= (tables[at + SECOND_HALF_START]! | 0) - (tables[at + firstEnd]! | 0);
    savedShots -= (tables[saved + SECOND_HALF_START]! | 0) - (tables[saved + firstEnd]! | 0);
  }
  segmentShots[side] = segmentShots[side]! + shots;
  segmentSaved[side] = segmentSaved[side]! + savedShots;
  shotFrom[side] = to;
}

/**
 * Closes the side's open segment before its players change: its shots join the side's totals, and each
 * unit of the on-pitch shot weight earns floor(shots * 2^SHOT_SHARE_BITS / total weight) of share.
 */
function closeShotSegment(side: number): void {
  const shots = segmentShots[side]!;
  const saved = segmentSaved[side]!;
  teamShots[side] = teamShots[side]! + shots;
  teamSaved[side] = teamSaved[side]! + saved;
  segmentShots[side] = 0;
  segmentSaved[side] = 0;
  const weight = totals[side * WEIGHT_KINDS + W_SHOT]!;
  if (weight > 0) {
    // Both products are below 2^32 (layout.ts "Shot tables"), exact in doubles; >>> 0 floors.
    shotShare[side] = (shotShare[side]! + (((shots * (1 << SHOT_SHARE_BITS)) / weight) >>> 0)) | 0;
    savedShare[side] = (savedShare[side]! + (((saved * (1 << SHOT_SHARE_BITS)) / weight) >>> 0)) | 0;
  }
}

/** Adds the expected shots of the player at list index `at` since he came on to his counters. */
function addPlayerShots(counters: Uint32Array, side: number, at: number, slot: number): void {
  const p = side * PLAYER_SLOTS + slot;
  const weight = pitchWeight[(side * WEIGHT_KINDS + W_SHOT) * XI_SIZE + at]!;
  const dither = drawKey[KEY_DITHER]! >>> (32 - PLAYER_SHOT_SHIFT);
  const shots = Math.imul(weight, shotShare[side]! - shotShareOnEntry[p]!) >>> 0;
  const saved = Math.imul(weight, savedShare[side]! - savedShareOnEntry[p]!) >>> 0;
  const pb = C_PLAYERS + p * PLAYER_COUNTERS;
  counters[pb + P_SHOTS] = counters[pb + P_SHOTS]! + ((shots + dither) >>> PLAYER_SHOT_SHIFT);
  counters[pb + P_SHOTS_ON_TARGET] =
    counters[pb + P_SHOTS_ON_TARGET]! + ((saved + dither) >>> PLAYER_SHOT_SHIFT);
}

/** At the final whistle: the side's last expected shots, its players' shares and its team counters. */
function finishExpectedShots(st: DrawState, tables: Uint32Array, side: number): void {
  addExpectedShots(tables, side, cellRow[side]!, drawKey[KEY_SECOND_END]!);
  closeShotSegment(side);
  const counters = st.counters;
  // addPlayerShots for each player on the pitch, in one loop: the side's shares and the dither read once,
  // where a call per player was some 8% of a draw's instructions (issue 64).
  const playerDither = drawKey[KEY_DITHER]! >>> (32 - PLAYER_SHOT_SHIFT);
  const sideShots = shotShare[side]!;
  const sideSaved = savedShare[side]!;
  const weights = (side * WEIGHT_KINDS + W_SHOT) * XI_SIZE;
  for (let at = 0; at < pitchCount[side]!; at++) {
    const p = side * PLAYER_SLOTS + pitch[side * XI_SIZE + at]!;
    const weight = pitchWeight[weights + at]!;
    const shots = Math.imul(weight, sideShots - shotShareOnEntry[p]!) >>> 0;
    const saved = Math.imul(weight, sideSaved - savedShareOnEntry[p]!) >>> 0;
    const pb = C_PLAYERS + p * PLAYER_COUNTERS;
    counters[pb + P_SHOTS] = counters[pb + P_SHOTS]! + ((shots + playerDither) >>> PLAYER_SHOT_SHIFT);
    counters[pb + P_SHOTS_ON_TARGET] =
      counters[pb + P_SHOTS_ON_TARGET]! + ((saved + playerDither) >>> PLAYER_SHOT_SHIFT);
  }
  const dither = drawKey[KEY_DITHER]! >>> (32 - TEAM_SHOT_SHIFT);
  const team = C_TEAM + side * TEAM_COUNTERS;
  counters[team + TEAM_SHOTS] =
    counters[team + TEAM_SHOTS]! + ((teamShots[side]! + dither) >>> TEAM_SHOT_SHIFT);
  counters[team + TEAM_SHOTS_ON_TARGET] =
    counters[team + TEAM_SHOTS_ON_TARGET]! + ((teamSaved[side]! + dither) >>> TEAM_SHOT_SHIFT);
}

/**
 * The side's next event at or after step `start` (skipping unplayed added time): one pcg4d call draws a
 * hazard budget E and the first step s with hazards[s + 1] > hazards[from] + E is found by a forward
 * scan (events are a few steps apart). A budget the first half's played steps do not use up carries
 * over to the second half: what is left of an exponential budget past a stretch without an event is
 * again exponential, so the search goes on from SECOND_HALF_START with the rest (the same words) instead
 * of drawing new ones. The half ends are the draw's (drawKey). Hazards stay below 2^30 (110 steps of at
 * most 32 bits, in units of 2^-HAZARD_FRACTION_BITS) and a budget below 2^24, so the sums are exact in
 * int32 arithmetic (`| 0` keeps V8 on int32 compares).
 */
function findNext(tables: Uint32Array, side: number, start: number): void {
  const row = cellRow[side]! * HAZARD_ROW_WORDS;
  const firstEnd = drawKey[KEY_FIRST_END]!;
  const secondEnd = drawKey[KEY_SECOND_END]!;
  // int32 from the start: a tagged `from` made V8 box each found step and convert it back to store it.
  let from = start | 0;
  if (from < SECOND_HALF_START && from >= firstEnd) from = SECOND_HALF_START;
  if (from >= secondEnd) {
    pendingStep[side] = NO_EVENT_STEP;
    return;
  }
  const search = searches[side]!;
  searches[side] = search + 1;
  const words = side * 4;
  const a = nextWords[words]!;
  const b = nextWords[words + 1]!;
  const c = nextWords[words + 2]!;
  const d = nextWords[words + 3]!;
  // The side's next search draws its words now: they depend only on (draw, side, search), and the
  // generator's chain of multiplies, drawn here, overlaps this search and the events before the next
  // one instead of delaying the next search's step (each search's step decides the next event).
  drawSearchWords(side, search + 1);
  let target = ((tables[row + from]! | 0) + exponentialBits(tables, a)) | 0;
  if (from < SECOND_HALF_START && (tables[row + firstEnd]! | 0) <= target) {
    target = (target - (tables[row + firstEnd]! | 0) + (tables[row + SECOND_HALF_START]! | 0)) | 0;
    from = SECOND_HALF_START;
  }
  if ((tables[row + (from < SECOND_HALF_START ? firstEnd : secondEnd)]! | 0) <= target) {
    pendingStep[side] = NO_EVENT_STEP;
    return;
  }
  // The first step s >= from with hazards[s + 1] > target (one exists before the half's end).
  const s = firstStepPast(tables, row, from, target);
  pendingStep[side] = s;
  // The kind now, not when the event is played: the side's cell cannot change before then without a
  // new search, and counting the kind words at or below the word (they are cumulative, so the count
  // is the kind) takes no branch, where comparing them one by one when the event is played put their
  // load in front of a branch that mispredicts often.
  const kinds = EVENT_KINDS_AT + (cellRow[side]! * STEPS + s) * EVENT_KIND_WORDS;
  const u = b >>> 0;
  pendingKind[side] =
    STATE_EVENT_KIND[
      +(u >= tables[kinds + KIND_WORD_GOAL]!) +
        +(u >= tables[kinds + KIND_WORD_YELLOW]!) +
        +(u >= tables[kinds + KIND_WORD_RED]!)
    ]!;
  pendingPick[side] = c;
  pendingOrder[side] = d;
}

/** Steps counted without a branch before firstStepPast scans on. */
const STEP_WINDOW = 8;

/**
 * The first step s >= from with hazards[s + 1] > target, one existing in the row. The hazards never
 * decrease along a row, so s - from is the number of steps past `from` whose hazard is <= target:
 * counted without a branch over the next STEP_WINDOW steps (most events are that close; a scan's exit
 * mispredicts on every search) while they lie in the row, scanned beyond.
 */
function firstStepPast(tables: Uint32Array, row: number, from: number, target: number): number {
  let s = from;
  if (from + STEP_WINDOW <= STEPS) {
    const at = row + from;
    const below =
      +((tables[at + 1]! | 0) <= target) +
      +((tables[at + 2]! | 0) <= target) +
      +((tables[at + 3]! | 0) <= target) +
      +((tables[at + 4]! | 0) <= target) +
      +((tables[at + 5]! | 0) <= target) +
      +((tables[at + 6]! | 0) <= target) +
      +((tables[at + 7]! | 0) <= target) +
      +((tables[at + 8]! | 0) <= target);
    if (below < STEP_WINDOW) return from + below;
    s = from + STEP_WINDOW;
  }
  while ((tables[row + s + 1]! | 0) <= target) s++;
  return s;
}

/**
 * The words of the side's search number `search` into its nextWords: pcg4d(draw, the search's stream,
 * key.lo, key.hi), inlined (src/engine-contract/rng.ts).
 */
function drawSearchWords(side: number, search: number): void {
  const stream = STREAM_EVENT_BASE + side * STREAM_EVENT_SIDE_STRIDE + search;
  const seedC = drawKey[KEY_C]!;
  const seedD = drawKey[KEY_D]!;
  const streamB = (Math.imul(stream, LCG_MULTIPLIER) + LCG_INCREMENT) | 0;
  let a = (drawKey[KEY_DRAW_A]! + Math.imul(streamB, seedD)) | 0;
  let b = (streamB + Math.imul(seedC, a)) | 0;
  let c = (seedC + Math.imul(a, b)) | 0;
  let d = (seedD + Math.imul(b, c)) | 0;
  a ^= a >>> 16;
  b ^= b >>> 16;
  c ^= c >>> 16;
  d ^= d >>> 16;
  a = (a + Math.imul(b, d)) | 0;
  b = (b + Math.imul(c, a)) | 0;
  c = (c + Math.imul(a, b)) | 0;
  d = (d + Math.imul(b, c)) | 0;
  const words = side * 4;
  nextWords[words] = a;
  nextWords[words + 1] = b;
  nextWords[words + 2] = c;
  nextWords[words + 3] = d;
}

/** Re-simulates draws 0..count-1 and returns their event paths (the document's sample matches). */
export function recordSamplePaths(compiled: CompiledFixture, seed: EngineSeed, count: number): SamplePath[] {
  const samples: SamplePath[] = [];
  simulateRange(compiled, seed, 0, count, new Uint32Array(COUNTER_WORDS), samples);
  return samples;
}

// ---- Set-up -------------------------------------------------------------------------------------------

/** Resets the draw, picks both XIs and the added time; returns added minutes (first | second << 8). */
function setUpDraw(st: DrawState, draw: number): number {
  const { fx, counters } = st;
  const total = totals;
  for (let side = 0; side < 2; side++) {
    pitchCount[side] = 0;
    score[side] = 0;
    sentOff[side] = 0;
    subsUsed[side] = 0;
    shotFrom[side] = 0;
    segmentShots[side] = 0;
    segmentSaved[side] = 0;
    teamShots[side] = 0;
    teamSaved[side] = 0;
    shotShare[side] = 0;
    savedShare[side] = 0;
  }
  for (let i = 0; i < 2 * WEIGHT_KINDS; i++) total[i] = 0;
  st.stamp++;
  // The lineup words depend only on (draw, seed): a run whose XIs are all given leaves them unread.
  if (st.samplesLineups) pcg4d(draw, STREAM_SETUP_LINEUPS, st.seedLo, st.seedHi, word);
  for (let side = 0; side < 2; side++) {
    const base = sideBase(side);
    const mode = fx[base + S_LINEUP_MODE]! | 0;
    // The XI's choice: 0 for a fixed XI; for a predicted one, the keeper's candidate index times
    // XI_CHOICES plus the outfield offset's number of breakpoints. Systematic sampling picks the same
    // candidates for every offset between two breakpoints (cum[i] - j * SAMPLING_UNIT in [0,
    // SAMPLING_UNIT)), and pick j's index less the number of cum[i] below j * SAMPLING_UNIT counts pick
    // j's breakpoints at or below the offset, so the picked indices' sum less outfieldIndexBase names it.
    if (mode === LINEUP_MODE_STATE) {
      putStatePlayersOn(st.fx, side);
      continue;
    }
    // The choice from the breakpoints (listBreakpoints): a draw whose XI the range has seen copies it.
    let choice = 0;
    if (mode !== LINEUP_MODE_FIXED) {
      if (mode === LINEUP_MODE_PREDICTED) {
        choice =
          breaksAtOrBelow(keeperBreaks, side, keeperBreakCount[side]!, word[2 * side]! >>> 8) * XI_CHOICES;
      }
      choice += breaksAtOrBelow(outfieldBreaks, side, outfieldBreakCount[side]!, word[2 * side + 1]! >>> 8);
    }
    const entry = side * XI_CHOICES * XI_CHOICES + choice;
    drawBench[side] = entry;
    if (xiRange[entry] === rangeNumber) {
      const slot = xiSlotOf[entry]!;
      if (slot >= 0) {
        copyXiOn(side, slot);
        continue;
      }
    }
    putXiOn(st, side, mode, entry, choice);
  }
  pcg4d(draw, STREAM_SETUP_ADDED_TIME, st.seedLo, st.seedHi, word);
  // The added minutes: the number of each half's cumulative cut-offs at or below its word (the cut-offs
  // never decrease, so the count is the first one above it), counted without a branch whose exit
  // mispredicted on most draws.
  const firstWord = word[0]!;
  const secondWord = word[1]!;
  let first = 0;
  let second = 0;
  for (let k = 0; k < MAX_ADDED; k++) {
    first += +(firstWord >= fx[FX_ADDED_TIME_FIRST + k]!);
    second += +(secondWord >= fx[FX_ADDED_TIME_SECOND + k]!);
  }
  drawKey[KEY_DITHER] = word[2]! | 0;
  counters[C_ADDED_TIME + first]!++;
  counters[C_ADDED_TIME + MAX_ADDED + 1 + second]!++;
  if (st.inPlay) {
    startFromState(st);
    return first | (second << 8);
  }
  updateCells();
  st.state = STATE_LEVEL;
  st.firstGoal = -1;
  st.trailed = 0;
  counters[C_STEP_STATE + STATE_LEVEL * STEPS]!++;
  return first | (second << 8);
}

/**
 * Puts the XI of the side's entry on the pitch player by player, the first time a range's draw has it (or
 * every time, past the kept slots): its starters, substitutes and strength bucket, then keeps it.
 */
function putXiOn(st: DrawState, side: number, mode: number, entry: number, choice: number): void {
  const fx = st.fx;
  const base = sideBase(side);
  const total = totals;
  let sampled = 0;
  if (mode === LINEUP_MODE_FIXED) {
    for (let i = 0; i < XI_SIZE; i++) putStarterOn(st, side, fx[base + S_XI + i]! | 0);
  } else {
    // Words 0 and 1 pick the home goalkeeper and outfield players, words 2 and 3 the away ones.
    if (mode === LINEUP_MODE_PREDICTED) {
      const keeper = sampleStarters(st, side, base + S_KEEPER_ORDER, base + S_KEEPER_CUM, 1, word[2 * side]!);
      sampled = keeper * XI_CHOICES;
    }
    const picks = fx[base + S_OUTFIELD_PICKS]! | 0;
    const picked = sampleStarters(
      st,
      side,
      base + S_OUTFIELD_ORDER,
      base + S_OUTFIELD_CUM,
      picks,
      word[2 * side + 1]!,
    );
    sampled += picked - outfieldIndexBase[side]!;
  }
  // The breakpoints name the XI that sampling picks (setUpDraw's comment on the choice): a difference is a bug.
  if (sampled !== choice) throw new Error(`lineup choice ${choice} from the breakpoints, ${sampled} sampled`);
  if (benchRange[entry] !== rangeNumber) listSubstitutes(st, side, entry);
  // Lineup strength: the XI's goal weight against the squad's expectation.
  const strength = total[side * WEIGHT_KINDS + W_GOAL]!;
  let bucket = 0;
  while (bucket < STRENGTH_BUCKETS - 1 && (fx[base + S_STRENGTH_EDGES + bucket]! | 0) <= strength) bucket++;
  strengthBucket[side] = bucket;
  if (xiRange[entry] !== rangeNumber) keepXi(side, entry);
}

/**
 * An in-play run's side with a known XI (LINEUP_MODE_STATE), once per range: the state's players on the
 * pitch in its list order with their weights (statePitch...), those on a yellow card with their booked
 * card weight and those who came on with no weight to be taken off again (as substitute gives them); its
 * substitutes still to come. Their expected shots count from the state's step (nobody a draw brings on
 * is on the state's pitch: its bench lists those who came on first, and a substitution indexes past them).
 */
function listStatePlayers(fx: Uint32Array, side: number): void {
  const at = stateBase(side);
  const count = fx[at + ST_PITCH_COUNT]! | 0;
  statePitchCount[side] = count;
  for (let kind = 0; kind < WEIGHT_KINDS; kind++) stateTotals[side * WEIGHT_KINDS + kind] = 0;
  for (let i = 0; i < count; i++) {
    const entry = fx[at + ST_PITCH + i]! | 0;
    const slot = entry & STATE_PITCH_SLOT;
    statePitch[side * XI_SIZE + i] = slot;
    const p = side * PLAYER_SLOTS + slot;
    shotShareOnEntry[p] = 0;
    savedShareOnEntry[p] = 0;
    for (let kind = 0; kind < WEIGHT_KINDS; kind++) {
      let weight = slotWeight[p * SLOT_WEIGHT_STRIDE + kind]!;
      if (kind === W_CARD && (entry & STATE_PITCH_BOOKED) !== 0) {
        weight = fx[sideBase(side) + S_BOOKED_CARD_WEIGHT + slot]! | 0;
      }
      if (kind === W_OFF && (entry & STATE_PITCH_CAME_ON) !== 0) weight = 0;
      statePitchWeight[(side * WEIGHT_KINDS + kind) * XI_SIZE + i] = weight;
      stateTotals[side * WEIGHT_KINDS + kind] = stateTotals[side * WEIGHT_KINDS + kind]! + weight;
    }
  }
  // Choice 0 of the side: the same list every draw of the range.
  const entry = side * XI_CHOICES * XI_CHOICES;
  const length = fx[at + ST_BENCH_LENGTH]! | 0;
  for (let i = 0; i < length; i++) benchSlots[entry * MAX_SUBSTITUTES + i] = fx[at + ST_BENCH + i]! | 0;
  benchLength[entry] = length;
  benchRange[entry] = rangeNumber;
}

/**
 * Each draw of an in-play run, a side with a known XI: the range's list of the state's players
 * (listStatePlayers) on the pitch, its substitutes and its starting XI's strength bucket.
 */
function putStatePlayersOn(fx: Uint32Array, side: number): void {
  const count = statePitchCount[side]!;
  pitchCount[side] = count;
  for (let i = side * XI_SIZE; i < side * XI_SIZE + count; i++) pitch[i] = statePitch[i]!;
  for (let i = side * WEIGHT_KINDS * XI_SIZE; i < (side + 1) * WEIGHT_KINDS * XI_SIZE; i++) {
    pitchWeight[i] = statePitchWeight[i]!;
  }
  for (let i = side * WEIGHT_KINDS; i < (side + 1) * WEIGHT_KINDS; i++) totals[i] = stateTotals[i]!;
  drawBench[side] = side * XI_CHOICES * XI_CHOICES;
  strengthBucket[side] = fx[stateBase(side) + ST_STRENGTH]! | 0;
}

/**
 * The rest of an in-play run's set-up: the state's score, red cards and substitutions made, the cells
 * they give, its score state counted from its step, the shots counted from there. The first goal from
 * here is the next goal; a side trailing now has trailed.
 */
function startFromState(st: DrawState): void {
  const fx = st.fx;
  for (let side = 0; side < 2; side++) {
    const at = stateBase(side);
    score[side] = fx[at + ST_GOALS]! | 0;
    sentOff[side] = fx[at + ST_SENT_OFF]! | 0;
    subsUsed[side] = fx[at + ST_SUBSTITUTIONS]! | 0;
    shotFrom[side] = st.startStep;
  }
  updateCells();
  const home = score[HOME]!;
  const away = score[AWAY]!;
  const state = home > away ? STATE_HOME_LEADING : home === away ? STATE_LEVEL : STATE_AWAY_LEADING;
  st.state = state;
  st.firstGoal = -1;
  st.trailed = (home < away ? 1 : 0) | (away < home ? 2 : 0);
  if (state !== STATE_AWAY_LEADING) st.counters[C_STEP_STATE + state * STEPS + st.startStep]!++;
}

/**
 * Madow systematic sampling: the candidates whose tick interval holds offset + j * SAMPLING_UNIT; returns
 * the sum of the picked candidates' indices (the XI's choice, see setUpDraw).
 */
function sampleStarters(
  st: DrawState,
  side: number,
  orderAt: number,
  cumAt: number,
  picks: number,
  u: number,
): number {
  const fx = st.fx;
  const offset = u >>> 8;
  let i = 0;
  let indices = 0;
  for (let j = 0; j < picks; j++) {
    const point = offset + j * SAMPLING_UNIT;
    while ((fx[cumAt + i]! | 0) <= point) i++;
    putStarterOn(st, side, fx[orderAt + i]! | 0);
    indices += i;
  }
  return indices;
}

/**
 * The sum over a side's outfield picks j of the number of candidates whose cumulative ticks lie below
 * j * SAMPLING_UNIT: what sampleStarters' index sum is at offset 0. 0 for a fixed XI.
 */
function outfieldIndexBaseOf(fx: Uint32Array, side: number): number {
  const base = sideBase(side);
  if ((fx[base + S_LINEUP_MODE]! | 0) === LINEUP_MODE_FIXED) return 0;
  const count = fx[base + S_OUTFIELD_COUNT]! | 0;
  const picks = fx[base + S_OUTFIELD_PICKS]! | 0;
  let sum = 0;
  for (let j = 0; j < picks; j++) {
    for (let i = 0; i < count; i++) if ((fx[base + S_OUTFIELD_CUM + i]! | 0) < j * SAMPLING_UNIT) sum++;
  }
  return sum;
}

/** keeperBreaks and outfieldBreaks of a side (see their comment), once per range; none for a fixed XI. */
function listBreakpoints(fx: Uint32Array, side: number): void {
  const base = sideBase(side);
  keeperBreakCount[side] = 0;
  outfieldBreakCount[side] = 0;
  const mode = fx[base + S_LINEUP_MODE]! | 0;
  if (mode === LINEUP_MODE_FIXED || mode === LINEUP_MODE_STATE) return;
  let keepers = 0;
  if (mode === LINEUP_MODE_PREDICTED) {
    const count = fx[base + S_KEEPER_COUNT]! | 0;
    for (let i = 0; i < count; i++) {
      const cum = fx[base + S_KEEPER_CUM + i]! | 0;
      if (cum < SAMPLING_UNIT) keeperBreaks[side * PLAYER_SLOTS + keepers++] = cum;
    }
  }
  keeperBreakCount[side] = keepers;
  const count = fx[base + S_OUTFIELD_COUNT]! | 0;
  const picks = fx[base + S_OUTFIELD_PICKS]! | 0;
  let breaks = 0;
  for (let i = 0; i < count; i++) {
    const cum = fx[base + S_OUTFIELD_CUM + i]! | 0;
    // The pick whose tick interval holds cum: cum less its multiple of SAMPLING_UNIT (none past the last).
    const j = Math.floor(cum / SAMPLING_UNIT);
    if (cum >= 0 && j < picks) outfieldBreaks[side * PLAYER_SLOTS + breaks++] = cum - j * SAMPLING_UNIT;
  }
  outfieldBreakCount[side] = breaks;
}

/** The number of the side's breakpoints in `breaks` at or below `offset` (both below 2^24), without a branch. */
function breaksAtOrBelow(breaks: Int32Array, side: number, count: number, offset: number): number {
  let below = 0;
  const from = side * PLAYER_SLOTS;
  for (let i = from; i < from + count; i++) below += ((offset - breaks[i]!) >>> 31) ^ 1;
  return below;
}

/** Keeps the XI the side's draw has just put on the pitch as `entry`'s (see xiRange), while slots last. */
function keepXi(side: number, entry: number): void {
  xiRange[entry] = rangeNumber;
  if (xiSlotsUsed === XI_CACHE_SLOTS) {
    xiSlotOf[entry] = -1;
    return;
  }
  const slot = xiSlotsUsed++;
  xiSlotOf[entry] = slot;
  xiSide[slot] = side;
  xiDraws[slot] = 0;
  xiBucket[slot] = strengthBucket[side]!;
  const count = pitchCount[side]!;
  xiPitchCount[slot] = count;
  for (let i = 0; i < count; i++) xiPitch[slot * XI_SIZE + i] = pitch[side * XI_SIZE + i]!;
  for (let i = 0; i < XI_WEIGHT_WORDS; i++)
    xiWeight[slot * XI_WEIGHT_WORDS + i] = pitchWeight[side * XI_WEIGHT_WORDS + i]!;
  for (let i = 0; i < WEIGHT_KINDS; i++) xiTotals[slot * WEIGHT_KINDS + i] = totals[side * WEIGHT_KINDS + i]!;
}

/** Puts a kept XI (keepXi) on the side's pitch: its list, weights, totals and strength bucket. */
function copyXiOn(side: number, slot: number): void {
  xiDraws[slot]!++;
  const count = xiPitchCount[slot]!;
  pitchCount[side] = count;
  for (let i = 0; i < count; i++) pitch[side * XI_SIZE + i] = xiPitch[slot * XI_SIZE + i]!;
  for (let i = 0; i < XI_WEIGHT_WORDS; i++)
    pitchWeight[side * XI_WEIGHT_WORDS + i] = xiWeight[slot * XI_WEIGHT_WORDS + i]!;
  for (let i = 0; i < WEIGHT_KINDS; i++) totals[side * WEIGHT_KINDS + i] = xiTotals[slot * WEIGHT_KINDS + i]!;
  strengthBucket[side] = xiBucket[slot]!;
}

/** Puts a starter on the pitch (appended to the list) and gives them their weights. */
function putStarterOn(st: DrawState, side: number, slot: number): void {
  const at = pitchCount[side]!;
  pitch[side * XI_SIZE + at] = slot;
  pitchCount[side] = at + 1;
  enterWeights(side, at, slot);
  const p = side * PLAYER_SLOTS + slot;
  startedIn[p] = st.stamp;
  starts[p]!++;
  shotShareOnEntry[p] = 0;
  savedShareOnEntry[p] = 0;
}

/** Gives the player at list index `at` the slot's weights of every kind. */
function enterWeights(side: number, at: number, slot: number): void {
  const total = totals;
  const from = (side * PLAYER_SLOTS + slot) * SLOT_WEIGHT_STRIDE;
  const to = side * WEIGHT_KINDS * XI_SIZE + at;
  const sum = side * WEIGHT_KINDS;
  const goal = slotWeight[from + W_GOAL]!;
  const assist = slotWeight[from + W_ASSIST]!;
  const shot = slotWeight[from + W_SHOT]!;
  const card = slotWeight[from + W_CARD]!;
  const off = slotWeight[from + W_OFF]!;
  pitchWeight[to + W_GOAL * XI_SIZE] = goal;
  pitchWeight[to + W_ASSIST * XI_SIZE] = assist;
  pitchWeight[to + W_SHOT * XI_SIZE] = shot;
  pitchWeight[to + W_CARD * XI_SIZE] = card;
  pitchWeight[to + W_OFF * XI_SIZE] = off;
  total[sum + W_GOAL] = total[sum + W_GOAL]! + goal;
  total[sum + W_ASSIST] = total[sum + W_ASSIST]! + assist;
  total[sum + W_SHOT] = total[sum + W_SHOT]! + shot;
  total[sum + W_CARD] = total[sum + W_CARD]! + card;
  total[sum + W_OFF] = total[sum + W_OFF]! + off;
}

/** Takes the weights of the player at list index `at` out of the side's totals. */
function leaveWeights(side: number, at: number): void {
  const total = totals;
  const from = side * WEIGHT_KINDS * XI_SIZE + at;
  const sum = side * WEIGHT_KINDS;
  total[sum + W_GOAL] = total[sum + W_GOAL]! - pitchWeight[from + W_GOAL * XI_SIZE]!;
  total[sum + W_ASSIST] = total[sum + W_ASSIST]! - pitchWeight[from + W_ASSIST * XI_SIZE]!;
  total[sum + W_SHOT] = total[sum + W_SHOT]! - pitchWeight[from + W_SHOT * XI_SIZE]!;
  total[sum + W_CARD] = total[sum + W_CARD]! - pitchWeight[from + W_CARD * XI_SIZE]!;
  total[sum + W_OFF] = total[sum + W_OFF]! - pitchWeight[from + W_OFF * XI_SIZE]!;
}

function updateCells(): void {
  for (let side = 0; side < 2; side++) {
    const other = 1 - side;
    let diff = score[side]! - score[other]!;
    diff = diff < -2 ? -2 : Math.min(diff, 2);
    const own = sentOff[side]!;
    const theirs = sentOff[other]!;
    const red = own > theirs ? 0 : own === theirs ? 1 : 2;
    const cell = (diff + 2) * RED_CARD_BUCKETS + red;
    cellRow[side] = (side * STRENGTH_BUCKETS + strengthBucket[side]!) * CELLS + cell;
  }
}

// ---- Events -------------------------------------------------------------------------------------------

/**
 * A player on the pitch picked by weight: r = ((u >>> 16) * total) >>> 16, the first player whose
 * running weight exceeds r (in pitch-list order); returns the list index, -1 when the total is 0.
 * List index `skip` is left out (assists).
 *
 * Counted without a data-dependent exit: the running weights never decrease, so the first index whose
 * running weight exceeds r is the number of indices whose running weight is <= r (r < total, so one
 * always exceeds it). A skipped index adds no weight and is counted exactly when the answer lies past it.
 */
function pick(side: number, kind: number, u: number, skip: number): number {
  const row = (side * WEIGHT_KINDS + kind) * XI_SIZE;
  let total = totals[side * WEIGHT_KINDS + kind]!;
  if (skip >= 0) total -= pitchWeight[row + skip]!;
  if (total <= 0) return -1;
  // Math.imul: the product is below 2^32, so its low 32 bits are the product (an int32 multiply that
  // V8 would otherwise check for overflow, and deoptimise on).
  const r = Math.imul(u >>> 16, total) >>> 16;
  const n = pitchCount[side]!;
  let running = 0;
  let below = 0;
  if (skip < 0) {
    for (let i = 0; i < n; i++) {
      running += pitchWeight[row + i]!;
      // 1 while running <= r: both below 2^16, so the sign of r - running decides.
      below += ((r - running) >>> 31) ^ 1;
    }
  } else {
    for (let i = 0; i < n; i++) {
      if (i !== skip) running += pitchWeight[row + i]!;
      below += ((r - running) >>> 31) ^ 1;
    }
  }
  return below;
}

/**
 * The side's event of the step; the caller has checked that the side has one. `events[at + kind]` are
 * the cumulative kind thresholds u is compared with, in EVENT_GOAL..EVENT_RED order: the event tables'
 * kind words (layout.ts "Event tables"). For the per-step reference in test/, which passes its own copy
 * of the threshold table's words in the same order; the engine finds the kind in findNext.
 */
export function sideEvent(
  st: DrawState,
  events: Uint32Array,
  at: number,
  side: number,
  u: number,
  pickWord: number,
  step: number,
  draw: number,
): void {
  let kind = EVENT_SUBSTITUTION;
  if (u < events[at + EVENT_GOAL]!) kind = EVENT_GOAL;
  else if (u < events[at + EVENT_SHOT_ON_TARGET]!) kind = EVENT_SHOT_ON_TARGET;
  else if (u < events[at + EVENT_SHOT_OFF_TARGET]!) kind = EVENT_SHOT_OFF_TARGET;
  else if (u < events[at + EVENT_YELLOW]!) kind = EVENT_YELLOW;
  else if (u < events[at + EVENT_RED]!) kind = EVENT_RED;
  if (kind === EVENT_SHOT_ON_TARGET || kind === EVENT_SHOT_OFF_TARGET) {
    countShot(st, side, kind === EVENT_SHOT_ON_TARGET, pickWord);
  } else if (kind === EVENT_GOAL) {
    // The per-step reference's assist words come from their own stream.
    pcg4d(draw, STREAM_ASSIST_BASE + step, st.seedLo, st.seedHi, assistWord);
    playEvent(st, side, kind, pickWord, assistWord[2 * side]!, assistWord[2 * side + 1]!, step);
  } else {
    playEvent(st, side, kind, pickWord, 0, 0, step);
  }
}

/**
 * A sampled shot that is not a goal (the per-step reference's; the engine adds expected shots instead:
 * layout.ts "Shot tables"), in the shot counters' units.
 */
function countShot(st: DrawState, side: number, onTarget: boolean, pickWord: number): void {
  const counters = st.counters;
  const team = C_TEAM + side * TEAM_COUNTERS;
  const shooter = pick(side, W_SHOT, pickWord, -1);
  counters[team + TEAM_SHOTS]! += SHOT_COUNTER_UNIT;
  if (onTarget) counters[team + TEAM_SHOTS_ON_TARGET]! += SHOT_COUNTER_UNIT;
  if (shooter >= 0) {
    const pb = playerCounterBase(side, pitch[side * XI_SIZE + shooter]!);
    counters[pb + P_SHOTS]! += SHOT_COUNTER_UNIT;
    if (onTarget) counters[pb + P_SHOTS_ON_TARGET]! += SHOT_COUNTER_UNIT;
  }
}

/**
 * Plays the side's event of kind `kind` (EVENT_GOAL..EVENT_SUBSTITUTION) at the step. A goal is assisted
 * when `assistWord` (a u32 word, here as an int32) is below FX_ASSIST_THRESHOLD, by the player whom the top
 * 16 bits of `assistPick` pick.
 */
function playEvent(
  st: DrawState,
  side: number,
  kind: number,
  pickWord: number,
  assistWord: number,
  assistPick: number,
  step: number,
): void {
  const counters = st.counters;
  const team = C_TEAM + side * TEAM_COUNTERS;
  if (kind === EVENT_GOAL) {
    scoreGoal(st, side, pickWord, assistWord, assistPick, step);
  } else if (kind <= EVENT_RED) {
    const booked = pick(side, W_CARD, pickWord, -1);
    counters[C_STEP_CARDS + side * STEPS + step]!++;
    if (kind === EVENT_YELLOW) {
      counters[team + TEAM_YELLOWS]!++;
      if (booked >= 0) showYellow(st, side, booked, step);
    } else {
      sendOff(st, side, booked, step);
    }
  } else {
    substitute(st, side, pickWord, step);
  }
}

function scoreGoal(
  st: DrawState,
  side: number,
  pickWord: number,
  assistWord: number,
  assistPick: number,
  step: number,
): void {
  const { counters } = st;
  const team = C_TEAM + side * TEAM_COUNTERS;
  const scorerAt = pick(side, W_GOAL, pickWord, -1);
  const scorer = scorerAt >= 0 ? pitch[side * XI_SIZE + scorerAt]! : -1;
  score[side]!++;
  counters[team + TEAM_GOALS]!++;
  counters[team + TEAM_SHOTS]! += SHOT_COUNTER_UNIT;
  counters[team + TEAM_SHOTS_ON_TARGET]! += SHOT_COUNTER_UNIT;
  counters[C_STEP_GOALS + side * STEPS + step]!++;
  if (st.firstGoal < 0) {
    st.firstGoal = side;
    counters[C_FIRST_GOAL + side]!++;
    counters[C_FIRST_GOAL_BAND + STEP_BANDS[step]!]!++;
    if (scorer >= 0) counters[playerCounterBase(side, scorer) + P_FIRST_SCORER]!++;
  }
  if (scorer >= 0) {
    const pb = playerCounterBase(side, scorer);
    counters[pb + P_GOALS]!++;
    counters[pb + P_SHOTS]! += SHOT_COUNTER_UNIT;
    counters[pb + P_SHOTS_ON_TARGET]! += SHOT_COUNTER_UNIT;
    addRecord(st, side * PLAYER_SLOTS + scorer, RECORD_GOAL);
  }
  let assister = -1;
  if (assistWord >>> 0 < st.fx[FX_ASSIST_THRESHOLD]!) {
    const assisterAt = pick(side, W_ASSIST, assistPick, scorerAt);
    if (assisterAt >= 0) {
      assister = pitch[side * XI_SIZE + assisterAt]!;
      counters[playerCounterBase(side, assister) + P_ASSISTS]!++;
      addRecord(st, side * PLAYER_SLOTS + assister, RECORD_ASSIST);
    }
  }
  const home = score[HOME]!;
  const away = score[AWAY]!;
  if (home < away) st.trailed |= 1;
  if (away < home) st.trailed |= 2;
  const next = home > away ? STATE_HOME_LEADING : home === away ? STATE_LEVEL : STATE_AWAY_LEADING;
  const previous = st.state;
  if (next !== previous) {
    if (previous !== STATE_AWAY_LEADING) counters[C_STEP_STATE + previous * STEPS + step]!--;
    if (next !== STATE_AWAY_LEADING) counters[C_STEP_STATE + next * STEPS + step]!++;
    st.state = next;
  }
  updateCells();
  if (st.path !== null) {
    st.path.events.push({
      step,
      side,
      type: 'goal',
      slot: scorer,
      ...(assister >= 0 ? { assistSlot: assister } : {}),
    });
  }
}

/** A yellow card for the player at list index `at`. */
function showYellow(st: DrawState, side: number, at: number, step: number): void {
  const booked = pitch[side * XI_SIZE + at]!;
  const p = side * PLAYER_SLOTS + booked;
  addRecord(st, p, RECORD_YELLOW);
  const yellows = ((record[p]! >>> 16) & 0xff) + bookedBefore[p]!;
  st.counters[playerCounterBase(side, booked) + P_YELLOWS]!++;
  if (st.path !== null) st.path.events.push({ step, side, type: 'yellow_card', slot: booked });
  if (yellows === 1) {
    // A booked player plays with care: their card weight drops for the rest of the draw.
    const w = (side * WEIGHT_KINDS + W_CARD) * XI_SIZE + at;
    const careful = st.fx[sideBase(side) + S_BOOKED_CARD_WEIGHT + booked]! | 0;
    totals[side * WEIGHT_KINDS + W_CARD]! += careful - pitchWeight[w]!;
    pitchWeight[w] = careful;
  } else if (yellows === 2) {
    // A second yellow is a red card.
    st.counters[C_STEP_CARDS + side * STEPS + step]!++;
    sendOff(st, side, at, step);
  }
}

/** A red card for the player at list index `at` (-1: no player could be credited). */
function sendOff(st: DrawState, side: number, at: number, step: number): void {
  sentOff[side]!++;
  st.counters[C_TEAM + side * TEAM_COUNTERS + TEAM_REDS]!++;
  if (at >= 0) {
    const slot = pitch[side * XI_SIZE + at]!;
    addRecord(st, side * PLAYER_SLOTS + slot, RECORD_RED);
    st.counters[playerCounterBase(side, slot) + P_REDS]!++;
    takeOff(st, side, at, slot, step);
    // The last player on the list fills the hole (the GPU kernel removes players the same way).
    const n = pitchCount[side]! - 1;
    pitch[side * XI_SIZE + at] = pitch[side * XI_SIZE + n]!;
    for (let kind = 0; kind < WEIGHT_KINDS; kind++) {
      const row = (side * WEIGHT_KINDS + kind) * XI_SIZE;
      pitchWeight[row + at] = pitchWeight[row + n]!;
    }
    pitchCount[side] = n;
    if (st.path !== null) st.path.events.push({ step, side, type: 'red_card', slot });
  }
  updateCells();
}

/**
 * The player at list index `at` leaves the pitch: his minutes, and his expected shots once the side's
 * segment with him on the pitch is closed (the engine added the side's expected shots up to this step).
 */
function takeOff(st: DrawState, side: number, at: number, slot: number, step: number): void {
  const p = side * PLAYER_SLOTS + slot;
  minutesFromStarts[p]! -= 90 - STEP_MINUTE[step]!;
  closeShotSegment(side);
  addPlayerShots(st.counters, side, at, slot);
  leaveWeights(side, at);
}

function substitute(st: DrawState, side: number, pickWord: number, step: number): void {
  if (subsUsed[side]! >= (st.fx[FX_MAX_SUBSTITUTIONS]! | 0)) return;
  const offAt = pick(side, W_OFF, pickWord, -1);
  if (offAt < 0) return;
  const on = nextSubstitute(side);
  if (on < 0) return;
  subsUsed[side]!++;
  st.counters[C_TEAM + side * TEAM_COUNTERS + TEAM_SUBSTITUTIONS]!++;
  const off = pitch[side * XI_SIZE + offAt]!;
  takeOff(st, side, offAt, off, step);
  // The substitute takes the replaced player's place in the list.
  pitch[side * XI_SIZE + offAt] = on;
  enterWeights(side, offAt, on);
  // Substitutes are not substituted again.
  const w = (side * WEIGHT_KINDS + W_OFF) * XI_SIZE + offAt;
  totals[side * WEIGHT_KINDS + W_OFF]! -= pitchWeight[w]!;
  pitchWeight[w] = 0;
  const p = side * PLAYER_SLOTS + on;
  shotShareOnEntry[p] = shotShare[side]!;
  savedShareOnEntry[p] = savedShare[side]!;
  substituteAppearances[p]!++;
  minutesFromStarts[p]! += 90 - STEP_MINUTE[step]!;
  if (st.path !== null) st.path.events.push({ step, side, type: 'substitution', slot: on, offSlot: off });
}

/**
 * The next bench player eligible to come on, or -1 (bench exhausted or only goalkeepers left): the side's
 * substitutions so far index its XI's list (called only while substitutions are left, and each call that
 * finds one is a substitution made).
 */
function nextSubstitute(side: number): number {
  const entry = drawBench[side]!;
  const made = subsUsed[side]!;
  return made < benchLength[entry]! ? benchSlots[entry * MAX_SUBSTITUTES + made]! : -1;
}

/**
 * Lists the substitutes of the side's XI on the pitch (its starters are this draw's: startedIn) as entry
 * `entry`: the first S_BENCH_LIMIT non-starters of S_BENCH_ORDER, goalkeepers left out, at most
 * MAX_SUBSTITUTES.
 */
function listSubstitutes(st: DrawState, side: number, entry: number): void {
  const fx = st.fx;
  const base = sideBase(side);
  const count = fx[base + S_BENCH_COUNT]! | 0;
  const limit = fx[base + S_BENCH_LIMIT]! | 0;
  let length = 0;
  let seen = 0;
  for (let next = 0; next < count && seen < limit && length < MAX_SUBSTITUTES; next++) {
    const slot = fx[base + S_BENCH_ORDER + next]! | 0;
    if (startedIn[side * PLAYER_SLOTS + slot] === st.stamp) continue;
    seen++;
    if ((fx[base + S_IS_KEEPER + slot]! | 0) === 1) continue;
    benchSlots[entry * MAX_SUBSTITUTES + length++] = slot;
  }
  benchLength[entry] = length;
  benchRange[entry] = rangeNumber;
}

// ---- Tallies ------------------------------------------------------------------------------------------

function tallyDraw(st: DrawState, halfTimeHome: number, halfTimeAway: number): void {
  const counters = st.counters;
  const home = score[HOME]!;
  const away = score[AWAY]!;
  const last = GRID_SIZE - 1;
  counters[C_FT_GRID + Math.min(home, last) * GRID_SIZE + Math.min(away, last)]!++;
  counters[C_HT_GRID + Math.min(halfTimeHome, last) * GRID_SIZE + Math.min(halfTimeAway, last)]!++;
  const ftResult = home > away ? 0 : home === away ? 1 : 2;
  const htResult = halfTimeHome > halfTimeAway ? 0 : halfTimeHome === halfTimeAway ? 1 : 2;
  counters[C_HT_FT + htResult * 3 + ftResult]!++;
  if (st.firstGoal < 0) counters[C_FIRST_GOAL + 2]!++;
  const trailed = st.trailed;
  if (ftResult === 0 && (trailed & 1) !== 0) counters[C_COMEBACK]!++;
  if (ftResult === 2 && (trailed & 2) !== 0) counters[C_COMEBACK + 1]!++;
  if (ftResult === 1 && trailed !== 0) counters[C_COMEBACK + 2]!++;
  const squareHome = Math.min(home, GOAL_SQUARE_CAP);
  const squareAway = Math.min(away, GOAL_SQUARE_CAP);
  counters[C_GOAL_SQUARES]! += squareHome * squareHome;
  counters[C_GOAL_SQUARES + 1]! += squareAway * squareAway;
  // Appearances and minutes are summed per range (flushAppearances); only players with a record
  // (goals, assists, cards) have per-draw counters left.
  const count = st.recordedCount;
  for (let i = 0; i < count; i++) {
    const p = recorded[i]!;
    const pb = C_PLAYERS + p * PLAYER_COUNTERS;
    const rec = record[p]!;
    const g = rec & 0xff;
    const a = (rec >>> 8) & 0xff;
    if (g + a > 0) {
      if (g >= 1) counters[pb + P_GOALS_1]!++;
      if (g >= 2) counters[pb + P_GOALS_2]!++;
      if (g >= 3) counters[pb + P_GOALS_3]!++;
      if (a >= 1) counters[pb + P_ASSIST_1]!++;
      counters[pb + P_GOAL_OR_ASSIST_1]!++;
    }
    if ((rec & 0xff0000) !== 0) counters[pb + P_YELLOW_1]!++;
    if ((rec & 0xff000000) !== 0) counters[pb + P_RED_1]!++;
    record[p] = 0;
  }
  st.recordedCount = 0;
  if (st.path !== null) {
    st.path.score = [home, away];
    st.path.halfTime = [halfTimeHome, halfTimeAway];
  }
}
