// THE contract between the host, the CPU engine (fallback/engine.ts) and the GPU kernels (shaders/, gpu/):
// the integer tables a fixture compiles to, their word offsets, and the counter layout the per-draw loop
// fills. Every offset is in 32-bit words. Change a layout here and nowhere else; the GPU tests compare
// these constants with the WGSL structs, and gpu/contract-constants.ts declares every numeric export of
// this file in WGSL.
//
// Invariants the per-draw loop relies on (CPU and GPU alike):
// - only u32 arithmetic: comparisons `u < threshold`, wrapping adds, Math.imul / WGSL `*`;
// - every random word comes from pcg4d(draw, stream, key.lo, key.hi) with key = runKey(seed)
//   (./rng.ts); streams: step index, STREAM_ASSIST_BASE + step, STREAM_SETUP_*;
// - a draw adds at most MAX_COUNTER_INCREMENT_PER_DRAW to any counter, so MAX_DRAWS_PER_RUN draws
//   cannot overflow a u32 counter.

// ---- Match structure -------------------------------------------------------------------------------
/** Minutes 1-45, 45+1..45+10, 46-90, 90+1..90+10. */
export const STEPS = 110;
export const FIRST_HALF_ADDED_START = 45;
export const SECOND_HALF_START = 55;
export const SECOND_HALF_ADDED_START = 100;
export const SIDES = 2;
export const HOME = 0;
export const AWAY = 1;
export const XI_SIZE = 11;
/** Player slots per side; a squad's players occupy slots 0..count-1 in input order. */
export const PLAYER_SLOTS = 40;
/** Added time is sampled per half in whole minutes 0..10 (the grid has 10 added-time steps per half). */
export const MAX_ADDED_MINUTES = 10;
export const MAX_DRAWS_PER_RUN = 1 << 20;
export const MAX_COUNTER_INCREMENT_PER_DRAW = 4095;
/** Goals above this are clamped in the squared-goals sums (standard errors); never reached in practice. */
export const GOAL_SQUARE_CAP = 63;
/** Score grids count 0..10 goals; the last row/column holds 10 or more. */
export const GRID_SIZE = 11;

/** The regular match minute a step belongs to (added time counts as minute 45 or 90), for minutes played. */
export const STEP_REGULAR_MINUTE: readonly number[] = Array.from({ length: STEPS }, (_, step) => {
  if (step < FIRST_HALF_ADDED_START) return step + 1;
  if (step < SECOND_HALF_START) return 45;
  if (step < SECOND_HALF_ADDED_START) return step - SECOND_HALF_START + 46;
  return 90;
});

/** The 15-minute band (0..5) of a step; added time joins the last band of its half. */
export const STEP_BAND: readonly number[] = STEP_REGULAR_MINUTE.map((minute) =>
  Math.min(5, Math.floor((minute - 1) / 15)),
);

export function minuteLabel(step: number): string {
  if (step < FIRST_HALF_ADDED_START) return String(step + 1);
  if (step < SECOND_HALF_START) return `45+${step - FIRST_HALF_ADDED_START + 1}`;
  if (step < SECOND_HALF_ADDED_START) return String(step - SECOND_HALF_START + 46);
  return `90+${step - SECOND_HALF_ADDED_START + 1}`;
}

// ---- Events: one u32 per side and step picks at most one -----------------------------------------
export const EVENT_GOAL = 0;
export const EVENT_SHOT_ON_TARGET = 1; // saved or blocked on target, not a goal
export const EVENT_SHOT_OFF_TARGET = 2;
export const EVENT_YELLOW = 3;
export const EVENT_RED = 4; // straight red; second yellows come from EVENT_YELLOW
export const EVENT_SUBSTITUTION = 5;
export const EVENT_KINDS = 6;

// ---- Threshold table: Uint32Array, cumulative per event kind ----------------------------------------
// index = (((((side * STRENGTH_BUCKETS + strength) * STEPS + step) * SCORE_STATE_BUCKETS + score)
//          * RED_CARD_BUCKETS + red) * EVENT_KINDS + kind)
// The side's event in a step is the first kind with u < table[index]; u >= table[... + 5] is no event.
// score bucket = clamp(own goals - opponent goals, -2, 2) + 2.
// red bucket = 0 when the side has fewer players than its opponent, 1 when equal, 2 when more.
// strength bucket: the side's starting XI's attacking weight against its expectation (S_STRENGTH_EDGES).
export const STRENGTH_BUCKETS = 5;
export const RED_CARD_BUCKETS = 3;
/** Goal-difference buckets from a side's point of view: trailing by 2+, by 1, level, leading by 1, by 2+. */
export const SCORE_STATE_BUCKETS = 5;
export const THRESHOLD_STEP_STRIDE = SCORE_STATE_BUCKETS * RED_CARD_BUCKETS * EVENT_KINDS;
export const THRESHOLD_STRENGTH_STRIDE = STEPS * THRESHOLD_STEP_STRIDE;
export const THRESHOLD_SIDE_STRIDE = STRENGTH_BUCKETS * THRESHOLD_STRENGTH_STRIDE;
export const THRESHOLD_WORDS = SIDES * THRESHOLD_SIDE_STRIDE;

export function thresholdIndex(
  side: number,
  strength: number,
  step: number,
  score: number,
  red: number,
): number {
  return (
    side * THRESHOLD_SIDE_STRIDE +
    strength * THRESHOLD_STRENGTH_STRIDE +
    step * THRESHOLD_STEP_STRIDE +
    (score * RED_CARD_BUCKETS + red) * EVENT_KINDS
  );
}

// ---- Event tables: the threshold table re-expressed for the event-driven sampler ---------------------
// Built once per run on the host from the threshold table (./event-tables.ts buildEventTables), so both
// describe the same per-step model (docs/model.md). Rows: one per (side, strength bucket, score/red cell),
// row = (side * STRENGTH_BUCKETS + strength) * EVENT_CELLS + score * RED_CARD_BUCKETS + red.
// The sampler draws only the events that change a draw's state or need a player's per-draw record
// (goals, cards, substitutions: "state events"); a shot that is not a goal changes nothing and feeds
// only the shot counters, so those counters add its expected number instead (see "Shot tables").
// - hazards: per row HAZARD_ROW_WORDS words, word s = the side's cumulative hazard of a state event over
//   steps 0..s-1, in units of 2^-HAZARD_FRACTION_BITS bits: round(2^F * sum over t < s of -log2(1 - q_t)),
//   with q_t * 2^32 = threshold[t][EVENT_SUBSTITUTION] - (threshold[t][EVENT_SHOT_OFF_TARGET] -
//   threshold[t][EVENT_GOAL]): the step's any-event word less its shots. The next event after `from` is
//   the first step s with hazards[s + 1] > hazards[from] + E, E = -log2(u) in the same units
//   (exponentialBits), so a draw pays one random word per event instead of one per step.
// - kinds: per (row, step) EVENT_KIND_WORDS words, the kind given that a state event happens: word k =
//   min(2^32 - 1, floor(c_k * 2^32 / (q_t * 2^32))) with c_k the step's state-event words up to and
//   including kind k (KIND_WORD_GOAL: goals; KIND_WORD_YELLOW: goals and yellows; KIND_WORD_RED: and
//   straight reds); a word at or above every one of them is a substitution.
// - shots: per row SHOT_ROW_WORDS words, two cumulative series of HAZARD_ROW_WORDS: word s of the first =
//   round(2^SHOT_FRACTION_BITS * sum over t < s of the step's probability of a shot that is not a goal),
//   of the second the same for saved shots (on target, not a goal).
// - log2: LOG2_TABLE_WORDS words, round(2^F * log2(1 + i / 2^LOG2_TABLE_BITS)), interpolated by
//   exponentialBits.
// The four are packed in one array of EVENT_TABLE_WORDS: hazards at 0, kinds at EVENT_KINDS_AT, shots at
// EVENT_SHOTS_AT, log2 at EVENT_LOG2_AT.
export const EVENT_CELLS = SCORE_STATE_BUCKETS * RED_CARD_BUCKETS;
export const HAZARD_FRACTION_BITS = 18;
export const HAZARD_ROW_WORDS = STEPS + 1;
export const EVENT_ROWS = SIDES * STRENGTH_BUCKETS * EVENT_CELLS;
export const KIND_WORD_GOAL = 0;
export const KIND_WORD_YELLOW = 1;
export const KIND_WORD_RED = 2;
export const EVENT_KIND_WORDS = 3;
export const SHOT_FRACTION_BITS = 12;
/** The saved shots' series of a shot row starts this many words after its all-shots series. */
export const SHOT_ON_TARGET_OFFSET = HAZARD_ROW_WORDS;
export const SHOT_ROW_WORDS = 2 * HAZARD_ROW_WORDS;
export const LOG2_TABLE_BITS = 11;
export const LOG2_TABLE_WORDS = (1 << LOG2_TABLE_BITS) + 1;
export const EVENT_KINDS_AT = EVENT_ROWS * HAZARD_ROW_WORDS;
export const EVENT_SHOTS_AT = EVENT_KINDS_AT + EVENT_ROWS * STEPS * EVENT_KIND_WORDS;
export const EVENT_LOG2_AT = EVENT_SHOTS_AT + EVENT_ROWS * SHOT_ROW_WORDS;
export const EVENT_TABLE_WORDS = EVENT_LOG2_AT + LOG2_TABLE_WORDS;

// ---- Shot tables: expected shots instead of sampled ones ----------------------------------------------
// A draw adds, per side, the expected number of its shots that are not goals: the shot tables' sum over
// the steps it played, each under the cell the side played that step in (so the same per-step
// probabilities as a sampled shot, and the same mean; the per-draw spread of shots is not kept, and no
// counter needs it). A player's share is his shot weight over the side's on-pitch total, taken per
// stretch of the draw with the same players on the pitch ("segment"):
// - a segment's expected shots E (units of 2^-SHOT_FRACTION_BITS shots) adds floor(E * 2^SHOT_SHARE_BITS
//   / total weight) to the side's running share R; a player's expected shots are his weight * (R when he
//   leaves - R when he came on), in units of 2^-(SHOT_FRACTION_BITS + SHOT_SHARE_BITS) shots. E is at
//   most 110 * 2^12 < 2^19 and weight <= total, so every product stays below 2^32 (u32 arithmetic).
// - the shot counters (TEAM_SHOTS, TEAM_SHOTS_ON_TARGET, P_SHOTS, P_SHOTS_ON_TARGET) count in units of
//   1 / SHOT_COUNTER_UNIT shots: a goal adds SHOT_COUNTER_UNIT, and a draw's expected shots are rounded
//   to the unit with the draw's dither word (STREAM_SETUP_ADDED_TIME word 2): floor((x + dither) /
//   unit) with the dither's top bits uniform below the unit, which is x / unit on average, so the means
//   carry no rounding bias. A draw's shots are at most 2 * 110 (an expected shot and a goal per step),
//   so 220 * SHOT_COUNTER_UNIT <= MAX_COUNTER_INCREMENT_PER_DRAW.
export const SHOT_SHARE_BITS = 13;
export const SHOT_COUNTER_BITS = 4;
export const SHOT_COUNTER_UNIT = 1 << SHOT_COUNTER_BITS;
/** A side's pending event step when it has none left in the match. */
export const NO_EVENT_STEP = 0xff;

// ---- Fixture table: Uint32Array of FIXTURE_WORDS ------------------------------------------------------
/** Added minutes of a half = number of k in 0..9 with u >= cumulative[k] (cumulative[k] = P(added <= k) * 2^32). */
export const FX_ADDED_TIME_FIRST = 0; // MAX_ADDED_MINUTES words
export const FX_ADDED_TIME_SECOND = FX_ADDED_TIME_FIRST + MAX_ADDED_MINUTES; // MAX_ADDED_MINUTES words
export const FX_MAX_SUBSTITUTIONS = FX_ADDED_TIME_SECOND + MAX_ADDED_MINUTES;
/** A goal is assisted when the assist word < this. */
export const FX_ASSIST_THRESHOLD = FX_MAX_SUBSTITUTIONS + 1;
export const FX_SIDE_BASE = FX_ASSIST_THRESHOLD + 1;

// Side block, at FX_SIDE_BASE + side * SIDE_WORDS:
export const LINEUP_MODE_PREDICTED = 0; // goalkeeper slot (1 pick) + outfield (10 picks), systematic sampling
export const LINEUP_MODE_PREDICTED_UNLABELLED = 1; // no goalkeeper labelled: 11 picks over the whole squad
export const LINEUP_MODE_FIXED = 2; // announced or custom: S_XI holds the 11 slots
/** A run from an in-play state (below): the side's players on the pitch are the state block's. */
export const LINEUP_MODE_STATE = 3;
/**
 * Predicted XIs use systematic (Madow) sampling, which keeps each player's start probability exact:
 * candidates in S_*_ORDER own consecutive tick intervals [cum[i-1], cum[i]) of length
 * p_start * SAMPLING_UNIT (cum is the inclusive prefix sum); a draw picks offset o = u >>> 8 and selects
 * the candidates whose interval holds o + j * SAMPLING_UNIT for j = 0..picks-1.
 */
export const SAMPLING_UNIT = 1 << 24;
export const S_PLAYER_COUNT = 0;
export const S_LINEUP_MODE = 1;
export const S_XI = 2; // XI_SIZE slots (fixed mode)
export const S_KEEPER_COUNT = S_XI + XI_SIZE;
export const S_KEEPER_ORDER = S_KEEPER_COUNT + 1; // PLAYER_SLOTS
export const S_KEEPER_CUM = S_KEEPER_ORDER + PLAYER_SLOTS; // PLAYER_SLOTS
export const S_OUTFIELD_COUNT = S_KEEPER_CUM + PLAYER_SLOTS;
export const S_OUTFIELD_PICKS = S_OUTFIELD_COUNT + 1; // 10, or 11 without a labelled goalkeeper
export const S_OUTFIELD_ORDER = S_OUTFIELD_PICKS + 1; // PLAYER_SLOTS
export const S_OUTFIELD_CUM = S_OUTFIELD_ORDER + PLAYER_SLOTS; // PLAYER_SLOTS
/**
 * Substitutes come on in S_BENCH_ORDER order, skipping starters and goalkeepers; only the first
 * S_BENCH_LIMIT non-starters of the order form the bench (predicted: squad by start probability).
 */
export const S_BENCH_COUNT = S_OUTFIELD_CUM + PLAYER_SLOTS;
export const S_BENCH_LIMIT = S_BENCH_COUNT + 1;
export const S_BENCH_ORDER = S_BENCH_LIMIT + 1; // PLAYER_SLOTS
/** Strength bucket = number of edges <= the XI's summed S_GOAL_WEIGHT. */
export const S_STRENGTH_EDGES = S_BENCH_ORDER + PLAYER_SLOTS; // STRENGTH_BUCKETS - 1 words
/**
 * Per-slot weights (integers 0..4095, so 11 on the pitch sum below 2^16): a player is picked among
 * those on the pitch with r = ((u >>> 16) * total) >>> 16 and the first cumulative weight > r.
 */
export const WEIGHT_MAX = 4095;
export const S_GOAL_WEIGHT = S_STRENGTH_EDGES + STRENGTH_BUCKETS - 1;
export const S_ASSIST_WEIGHT = S_GOAL_WEIGHT + PLAYER_SLOTS;
export const S_SHOT_WEIGHT = S_ASSIST_WEIGHT + PLAYER_SLOTS;
export const S_CARD_WEIGHT = S_SHOT_WEIGHT + PLAYER_SLOTS;
/** Weight of being the player taken off in a substitution (0 for goalkeepers). */
export const S_SUB_OFF_WEIGHT = S_CARD_WEIGHT + PLAYER_SLOTS;
export const S_IS_KEEPER = S_SUB_OFF_WEIGHT + PLAYER_SLOTS; // 1 for a labelled goalkeeper
/** Card weight once booked: a booked player plays with care (replaces S_CARD_WEIGHT after a yellow). */
export const S_BOOKED_CARD_WEIGHT = S_IS_KEEPER + PLAYER_SLOTS;
export const SIDE_WORDS = S_BOOKED_CARD_WEIGHT + PLAYER_SLOTS;

// In-play state block (docs/model.md "In play"), after the side blocks: a run that starts at step
// FX_STATE_STEP with the state's score, red cards, substitutions and bookings. All 0 for a pre-match
// run. The compile writes it (src/engine/compile-state.ts) and conditions FX_ADDED_TIME_* on the step
// being played when it lies in added time.
export const FX_STATE = FX_SIDE_BASE + SIDES * SIDE_WORDS;
/** 1 when the run starts from a state. */
export const FX_STATE_IN_PLAY = FX_STATE;
/** The first step the run plays. */
export const FX_STATE_STEP = FX_STATE + 1;
/** Regular minutes played before it (added time counts none), subtracted from each player's minutes. */
export const FX_STATE_MINUTES_PLAYED = FX_STATE + 2;
/** A state in the second half: the half-time score, the draws' half-time score (0 otherwise). */
export const FX_STATE_HALF_TIME_HOME = FX_STATE + 3;
export const FX_STATE_HALF_TIME_AWAY = FX_STATE + 4;
export const FX_STATE_SIDE_BASE = FX_STATE + 5;
// Per side, at FX_STATE_SIDE_BASE + side * STATE_SIDE_WORDS:
export const ST_GOALS = 0;
/** Red cards so far (the players named among them are off the pitch list). */
export const ST_SENT_OFF = 1;
export const ST_SUBSTITUTIONS = 2;
/** LINEUP_MODE_STATE sides: the strength bucket of the side's starting XI. */
export const ST_STRENGTH = 3;
/** LINEUP_MODE_STATE sides: the players on the pitch, in pitch-list order. */
export const ST_PITCH_COUNT = 4;
/** XI_SIZE words: slot | STATE_PITCH_BOOKED (on a yellow card) | STATE_PITCH_CAME_ON (not taken off again). */
export const ST_PITCH = 5;
export const STATE_PITCH_SLOT = 0xff;
export const STATE_PITCH_BOOKED = 1 << 8;
export const STATE_PITCH_CAME_ON = 1 << 9;
/**
 * LINEUP_MODE_STATE sides: the substitutes in the order they come on, indexed by substitutions made (the
 * first ST_SUBSTITUTIONS entries are the players who came on), ST_BENCH_LENGTH of them.
 */
export const ST_BENCH_LENGTH = ST_PITCH + XI_SIZE;
export const STATE_BENCH_SLOTS = 5;
export const ST_BENCH = ST_BENCH_LENGTH + 1;
export const STATE_SIDE_WORDS = ST_BENCH + STATE_BENCH_SLOTS;
export const FIXTURE_WORDS = FX_STATE_SIDE_BASE + SIDES * STATE_SIDE_WORDS;

export function stateBase(side: number): number {
  return FX_STATE_SIDE_BASE + side * STATE_SIDE_WORDS;
}

export function sideBase(side: number): number {
  return FX_SIDE_BASE + side * SIDE_WORDS;
}

// ---- Run parameters (GPU uniform; the CPU engine takes them as arguments) ---------------------------
/** The generator's key words z and w: runKey(seed) from ./rng.ts, not the raw seed. */
export const RUN_SEED_LO = 0;
export const RUN_SEED_HI = 1;
export const RUN_FIRST_DRAW = 2;
export const RUN_DRAW_COUNT = 3;
export const RUN_WORDS = 4;

// ---- Counters: Uint32Array of COUNTER_WORDS per fixture ----------------------------------------------
// Results: 0 = home win, 1 = draw, 2 = away win.
export const C_FT_GRID = 0; // GRID_SIZE * GRID_SIZE, [min(home,10) * 11 + min(away,10)]
export const C_HT_GRID = C_FT_GRID + GRID_SIZE * GRID_SIZE;
export const C_HT_FT = C_HT_GRID + GRID_SIZE * GRID_SIZE; // 9, [ht result * 3 + ft result]
export const C_FIRST_GOAL = C_HT_FT + 9; // 3: home, away, none
export const C_FIRST_GOAL_BAND = C_FIRST_GOAL + 3; // 6 bands by STEP_BAND
/** 3: home won after trailing, away won after trailing, drawn after a side trailed. */
export const C_COMEBACK = C_FIRST_GOAL_BAND + 6;
export const C_GOAL_SQUARES = C_COMEBACK + 3; // per side: sum of min(goals, GOAL_SQUARE_CAP)^2
export const TEAM_GOALS = 0;
export const TEAM_SHOTS = 1; // goals included; units of 1 / SHOT_COUNTER_UNIT shots ("Shot tables")
export const TEAM_SHOTS_ON_TARGET = 2; // goals included; units of 1 / SHOT_COUNTER_UNIT shots
export const TEAM_YELLOWS = 3;
export const TEAM_REDS = 4; // straight and second yellows
export const TEAM_SUBSTITUTIONS = 5;
export const TEAM_COUNTERS = 6;
export const C_TEAM = C_GOAL_SQUARES + SIDES; // per side, TEAM_COUNTERS
export const C_ADDED_TIME = C_TEAM + SIDES * TEAM_COUNTERS; // per half, MAX_ADDED_MINUTES + 1
export const C_STEP_GOALS = C_ADDED_TIME + 2 * (MAX_ADDED_MINUTES + 1); // per side, STEPS
export const C_STEP_CARDS = C_STEP_GOALS + SIDES * STEPS; // per side, STEPS (yellows + reds)
/**
 * Score state at the end of each step, rows 0 = home leading, 1 = level (away leading = draws minus
 * both). Difference-encoded while the loop runs: a draw adds 1 at (level, step 0) and, when the state
 * changes at step s, subtracts 1 from the old row and adds 1 to the new row at s (wrapping u32).
 * finalizeCounters turns the rows into counts by prefix sums, so steps a draw did not play carry its
 * last state.
 */
export const STATE_HOME_LEADING = 0;
export const STATE_LEVEL = 1;
export const STATE_AWAY_LEADING = 2; // not stored
export const C_STEP_STATE = C_STEP_CARDS + SIDES * STEPS; // 2 rows of STEPS
export const P_STARTS = 0;
export const P_APPEARANCES = 1;
export const P_MINUTES = 2; // regular minutes (added time counts as 45/90)
export const P_GOALS = 3;
export const P_GOALS_1 = 4; // draws with 1+ goals
export const P_GOALS_2 = 5;
export const P_GOALS_3 = 6;
export const P_FIRST_SCORER = 7;
export const P_ASSISTS = 8;
export const P_ASSIST_1 = 9;
export const P_GOAL_OR_ASSIST_1 = 10;
export const P_SHOTS = 11; // goals included; units of 1 / SHOT_COUNTER_UNIT shots ("Shot tables")
export const P_SHOTS_ON_TARGET = 12; // goals included; units of 1 / SHOT_COUNTER_UNIT shots
export const P_YELLOWS = 13;
export const P_YELLOW_1 = 14;
export const P_REDS = 15;
export const P_RED_1 = 16;
export const PLAYER_COUNTERS = 17;
export const C_PLAYERS = C_STEP_STATE + 2 * STEPS; // [side][slot][PLAYER_COUNTERS]
export const COUNTER_WORDS = C_PLAYERS + SIDES * PLAYER_SLOTS * PLAYER_COUNTERS;

export function playerCounterBase(side: number, slot: number): number {
  return C_PLAYERS + (side * PLAYER_SLOTS + slot) * PLAYER_COUNTERS;
}

/**
 * Turns the difference-encoded score-state rows of a summed counter array into counts, in place.
 * Call once per run, after every chunk has been added (wrapping) into one array.
 */
export function finalizeCounters(counters: Uint32Array): void {
  for (let row = 0; row < 2; row++) {
    let running = 0;
    const base = C_STEP_STATE + row * STEPS;
    for (let step = 0; step < STEPS; step++) {
      running = (running + counters[base + step]!) >>> 0;
      counters[base + step] = running;
    }
  }
}

/** Adds `chunk` into `total` with u32 wrap-around (the same arithmetic as the GPU's atomicAdd). */
export function addCounters(total: Uint32Array, chunk: Uint32Array): void {
  for (let i = 0; i < COUNTER_WORDS; i++) total[i] = (total[i]! + chunk[i]!) >>> 0;
}

/** A fixture compiled for the engines: the two integer tables plus the host-side labels. */
export interface CompiledFixture {
  /** FIXTURE_WORDS words, layout above. */
  fixture: Uint32Array;
  /** THRESHOLD_WORDS words, layout above. */
  thresholds: Uint32Array;
  /** player_id of each slot per side (host-side only, for documents and sample paths). */
  playerIds: [number[], number[]];
  /** Expected goals per side from the ratings (before in-match dynamics). */
  ratedGoals: { home: number; away: number };
}

/** The u64 seed of a run as two u32 words. */
export interface EngineSeed {
  lo: number;
  hi: number;
}

/** A seed from 16 hex digits (e.g. the first 8 bytes of a SHA-256 of the run's inputs). */
export function seedFromHex(hex: string): EngineSeed {
  if (!/^[0-9a-f]{16}$/i.test(hex)) throw new RangeError('a seed is 16 hex digits');
  return { hi: Number.parseInt(hex.slice(0, 8), 16) >>> 0, lo: Number.parseInt(hex.slice(8), 16) >>> 0 };
}
