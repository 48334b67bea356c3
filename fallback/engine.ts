// The per-draw loop: the CPU reference that the GPU kernel (shaders/) reproduces bit for bit. Only u32
// integer work happens here; the tables come from compile.ts. A draw's numbers depend only on
// (seed, draw, stream), so any split of a draw range gives the same counters.
import {
  AWAY,
  C_ADDED_TIME,
  C_COMEBACK,
  C_FIRST_GOAL,
  C_FIRST_GOAL_BAND,
  C_FT_GRID,
  C_GOAL_SQUARES,
  C_HT_FT,
  C_HT_GRID,
  C_STEP_CARDS,
  C_STEP_GOALS,
  C_STEP_STATE,
  C_TEAM,
  COUNTER_WORDS,
  type CompiledFixture,
  type EngineSeed,
  EVENT_GOAL,
  EVENT_KINDS,
  EVENT_RED,
  EVENT_SHOT_OFF_TARGET,
  EVENT_SHOT_ON_TARGET,
  EVENT_SUBSTITUTION,
  EVENT_YELLOW,
  FIRST_HALF_ADDED_START,
  FX_ADDED_TIME_FIRST,
  FX_ADDED_TIME_SECOND,
  FX_ASSIST_THRESHOLD,
  FX_MAX_SUBSTITUTIONS,
  GOAL_SQUARE_CAP,
  GRID_SIZE,
  HOME,
  LINEUP_MODE_FIXED,
  LINEUP_MODE_PREDICTED,
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
  S_KEEPER_CUM,
  S_KEEPER_ORDER,
  S_LINEUP_MODE,
  S_OUTFIELD_CUM,
  S_OUTFIELD_ORDER,
  S_OUTFIELD_PICKS,
  S_SHOT_WEIGHT,
  S_STRENGTH_EDGES,
  S_SUB_OFF_WEIGHT,
  S_XI,
  SAMPLING_UNIT,
  SECOND_HALF_ADDED_START,
  SECOND_HALF_START,
  STATE_HOME_LEADING,
  STATE_LEVEL,
  STEP_BAND,
  STEP_REGULAR_MINUTE,
  STEPS,
  STRENGTH_BUCKETS,
  sideBase,
  TEAM_COUNTERS,
  TEAM_GOALS,
  TEAM_REDS,
  TEAM_SHOTS,
  TEAM_SHOTS_ON_TARGET,
  TEAM_SUBSTITUTIONS,
  TEAM_YELLOWS,
  THRESHOLD_SIDE_STRIDE,
  THRESHOLD_STEP_STRIDE,
  THRESHOLD_STRENGTH_STRIDE,
  XI_SIZE,
} from './contract.js';
import { pcg4d, runKey, STREAM_ASSIST_BASE, STREAM_SETUP_ADDED_TIME, STREAM_SETUP_LINEUPS } from './rng.js';

export type SampleEventType = 'goal' | 'yellow_card' | 'red_card' | 'substitution';

/** One event of a recorded draw, in player slots (the document maps slots to player ids). */
export interface SampleEvent {
  step: number;
  side: number;
  type: SampleEventType;
  /** Scorer, booked player, or the player coming on; -1 when no player could be credited. */
  slot: number;
  assistSlot?: number;
  offSlot?: number;
}

export interface SamplePath {
  draw: number;
  score: [number, number];
  halfTime: [number, number];
  addedMinutes: [number, number];
  /** Slots of each side's starting XI. */
  starters: [number[], number[]];
  events: SampleEvent[];
}

const PLAYERS = 2 * PLAYER_SLOTS;
const MAX_APPEARANCES = XI_SIZE + 5;
/** Weight kinds of the per-draw weight table (index kind * PLAYERS + side * PLAYER_SLOTS + slot). */
const W_GOAL = 0;
const W_ASSIST = 1;
const W_SHOT = 2;
const W_CARD = 3;
const W_OFF = 4;
const WEIGHT_KINDS = 5;
const WEIGHT_OFFSETS = [S_GOAL_WEIGHT, S_ASSIST_WEIGHT, S_SHOT_WEIGHT, S_CARD_WEIGHT, S_SUB_OFF_WEIGHT];
const STATE_AWAY_LEADING = 2;
// pcg4d's first stage (x * 1664525 + 1013904223), inlined in the step loop: see fallback/rng.ts.
const LCG_MULTIPLIER = 1664525;
const LCG_INCREMENT = 1013904223;

/** Everything one draw mutates, allocated once per simulateRange call. */
interface DrawState {
  fx: Uint32Array;
  counters: Uint32Array;
  seedLo: number;
  seedHi: number;
  word: Uint32Array;
  /** On-pitch slots per side, index side * XI_SIZE + i. Removal moves the last entry into the hole. */
  pitch: Int32Array;
  pitchCount: Int32Array;
  /** Current weight of each player for each kind (read only while on the pitch) and each side's on-pitch total. */
  weight: Uint16Array;
  total: Int32Array;
  goals: Uint8Array;
  assists: Uint8Array;
  yellows: Uint8Array;
  reds: Uint8Array;
  started: Uint8Array;
  minuteOn: Uint8Array;
  minutes: Uint8Array;
  appeared: Int32Array;
  appearedCount: Int32Array;
  score: Int32Array;
  sentOff: Int32Array;
  subsUsed: Int32Array;
  benchNext: Int32Array;
  benchSeen: Int32Array;
  /** Threshold-table offset of each side's strength bucket, and of its current score/red cell. */
  strengthBase: Int32Array;
  cell: Int32Array;
  /** 0 home leading, 1 level, 2 away leading; first goal side or -1; trailing flags (bit 0 home, bit 1 away). */
  flags: Int32Array;
  path: SamplePath | null;
}
const F_STATE = 0;
const F_FIRST_GOAL = 1;
const F_TRAILED = 2;

function newDrawState(compiled: CompiledFixture, seed: EngineSeed, counters: Uint32Array): DrawState {
  return {
    fx: compiled.fixture,
    counters,
    seedLo: runKey(seed).lo | 0,
    seedHi: runKey(seed).hi | 0,
    word: new Uint32Array(4),
    pitch: new Int32Array(2 * XI_SIZE),
    pitchCount: new Int32Array(2),
    weight: new Uint16Array(WEIGHT_KINDS * PLAYERS),
    total: new Int32Array(WEIGHT_KINDS * 2),
    goals: new Uint8Array(PLAYERS),
    assists: new Uint8Array(PLAYERS),
    yellows: new Uint8Array(PLAYERS),
    reds: new Uint8Array(PLAYERS),
    started: new Uint8Array(PLAYERS),
    minuteOn: new Uint8Array(PLAYERS),
    minutes: new Uint8Array(PLAYERS),
    appeared: new Int32Array(2 * MAX_APPEARANCES),
    appearedCount: new Int32Array(2),
    score: new Int32Array(2),
    sentOff: new Int32Array(2),
    subsUsed: new Int32Array(2),
    benchNext: new Int32Array(2),
    benchSeen: new Int32Array(2),
    strengthBase: new Int32Array(2),
    cell: new Int32Array(2),
    flags: new Int32Array(3),
    path: null,
  };
}

/**
 * Simulates draws [firstDraw, endDraw) and adds their counts into `counters` (COUNTER_WORDS words,
 * difference-encoded score states: see finalizeCounters). With `samples`, also records every draw's
 * event path there (used for the document's 20 sample paths; keep that range small).
 */
export function simulateRange(
  compiled: CompiledFixture,
  seed: EngineSeed,
  firstDraw: number,
  endDraw: number,
  counters: Uint32Array,
  samples?: SamplePath[],
): void {
  if (counters.length < COUNTER_WORDS) throw new RangeError('counter array too small');
  const st = newDrawState(compiled, seed, counters);
  const th = compiled.thresholds;
  const word = st.word;
  const seedC = (Math.imul(st.seedLo, LCG_MULTIPLIER) + LCG_INCREMENT) | 0;
  const seedD = (Math.imul(st.seedHi, LCG_MULTIPLIER) + LCG_INCREMENT) | 0;
  for (let draw = firstDraw; draw < endDraw; draw++) {
    const added = setUpDraw(st, draw);
    if (samples !== undefined) {
      st.path = {
        draw,
        score: [0, 0],
        halfTime: [0, 0],
        addedMinutes: [added & 0xff, added >>> 8],
        starters: [Array.from(st.pitch.subarray(0, XI_SIZE)), Array.from(st.pitch.subarray(XI_SIZE))],
        events: [],
      };
    }
    const drawA = (Math.imul(draw, LCG_MULTIPLIER) + LCG_INCREMENT) | 0;
    let halfTime = 0;
    for (let half = 0; half < 2; half++) {
      const from = half === 0 ? 0 : SECOND_HALF_START;
      const to =
        half === 0 ? FIRST_HALF_ADDED_START + (added & 0xff) : SECOND_HALF_ADDED_START + (added >>> 8);
      let homeRow = st.strengthBase[HOME]! + st.cell[HOME]! + EVENT_SUBSTITUTION;
      let awayRow = st.strengthBase[AWAY]! + st.cell[AWAY]! + EVENT_SUBSTITUTION;
      for (let step = from; step < to; step++) {
        // pcg4d(draw, step, key.lo, key.hi) inlined (fallback/rng.ts): the one hash of the hot loop.
        let a = drawA;
        let b = (Math.imul(step, LCG_MULTIPLIER) + LCG_INCREMENT) | 0;
        let c = seedC;
        let d = seedD;
        a = (a + Math.imul(b, d)) | 0;
        b = (b + Math.imul(c, a)) | 0;
        c = (c + Math.imul(a, b)) | 0;
        d = (d + Math.imul(b, c)) | 0;
        a ^= a >>> 16;
        b ^= b >>> 16;
        c ^= c >>> 16;
        d ^= d >>> 16;
        a = (a + Math.imul(b, d)) | 0;
        b = (b + Math.imul(c, a)) | 0;
        c = (c + Math.imul(a, b)) | 0;
        d = (d + Math.imul(b, c)) | 0;
        const at = step * THRESHOLD_STEP_STRIDE;
        if (a >>> 0 < th[homeRow + at]! || b >>> 0 < th[awayRow + at]!) {
          word[0] = a;
          word[1] = b;
          word[2] = c;
          word[3] = d;
          // Bit 15 of word 3 orders the sides within the step (it matters only when both have events).
          // Each side's cell is re-read at its turn: the first side's goal or red card changes the second's.
          const first = (d & 0x8000) === 0 ? HOME : AWAY;
          const second = 1 - first;
          if (word[first]! < th[st.strengthBase[first]! + st.cell[first]! + EVENT_SUBSTITUTION + at]!) {
            sideEvent(st, th, first, word[first]!, word[first + 2]!, step, draw);
          }
          if (word[second]! < th[st.strengthBase[second]! + st.cell[second]! + EVENT_SUBSTITUTION + at]!) {
            sideEvent(st, th, second, word[second]!, word[second + 2]!, step, draw);
          }
          homeRow = st.strengthBase[HOME]! + st.cell[HOME]! + EVENT_SUBSTITUTION;
          awayRow = st.strengthBase[AWAY]! + st.cell[AWAY]! + EVENT_SUBSTITUTION;
        }
      }
      if (half === 0) halfTime = st.score[HOME]! | (st.score[AWAY]! << 8);
    }
    tallyDraw(st, halfTime & 0xff, halfTime >>> 8);
    if (samples !== undefined && st.path !== null) samples.push(st.path);
  }
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
  const { fx, word, counters } = st;
  for (let side = 0; side < 2; side++) {
    st.pitchCount[side] = 0;
    st.appearedCount[side] = 0;
    st.score[side] = 0;
    st.sentOff[side] = 0;
    st.subsUsed[side] = 0;
    st.benchNext[side] = 0;
    st.benchSeen[side] = 0;
  }
  for (let i = 0; i < WEIGHT_KINDS * 2; i++) st.total[i] = 0;
  pcg4d(draw, STREAM_SETUP_LINEUPS, st.seedLo, st.seedHi, word);
  for (let side = 0; side < 2; side++) {
    const base = sideBase(side);
    const mode = fx[base + S_LINEUP_MODE]!;
    if (mode === LINEUP_MODE_FIXED) {
      for (let i = 0; i < XI_SIZE; i++) bringOn(st, side, fx[base + S_XI + i]!, 0, 1);
    } else {
      // Words 0 and 1 pick the home goalkeeper and outfield players, words 2 and 3 the away ones.
      if (mode === LINEUP_MODE_PREDICTED) {
        sampleStarters(st, side, base + S_KEEPER_ORDER, base + S_KEEPER_CUM, 1, word[2 * side]!);
      }
      const picks = fx[base + S_OUTFIELD_PICKS]!;
      sampleStarters(st, side, base + S_OUTFIELD_ORDER, base + S_OUTFIELD_CUM, picks, word[2 * side + 1]!);
    }
    // Lineup strength: the XI's goal weight against the squad's expectation.
    const strength = st.total[W_GOAL * 2 + side]!;
    let bucket = 0;
    while (bucket < STRENGTH_BUCKETS - 1 && fx[base + S_STRENGTH_EDGES + bucket]! <= strength) bucket++;
    st.strengthBase[side] = side * THRESHOLD_SIDE_STRIDE + bucket * THRESHOLD_STRENGTH_STRIDE;
  }
  pcg4d(draw, STREAM_SETUP_ADDED_TIME, st.seedLo, st.seedHi, word);
  let first = 0;
  while (first < MAX_ADDED && word[0]! >= fx[FX_ADDED_TIME_FIRST + first]!) first++;
  let second = 0;
  while (second < MAX_ADDED && word[1]! >= fx[FX_ADDED_TIME_SECOND + second]!) second++;
  counters[C_ADDED_TIME + first]!++;
  counters[C_ADDED_TIME + MAX_ADDED + 1 + second]!++;
  updateCells(st);
  st.flags[F_STATE] = STATE_LEVEL;
  st.flags[F_FIRST_GOAL] = -1;
  st.flags[F_TRAILED] = 0;
  counters[C_STEP_STATE + STATE_LEVEL * STEPS]!++;
  return first | (second << 8);
}

const MAX_ADDED = 10;

/** Madow systematic sampling: the candidates whose tick interval holds offset + j * SAMPLING_UNIT. */
function sampleStarters(
  st: DrawState,
  side: number,
  orderAt: number,
  cumAt: number,
  picks: number,
  u: number,
): void {
  const fx = st.fx;
  const offset = u >>> 8;
  let i = 0;
  for (let j = 0; j < picks; j++) {
    const point = offset + j * SAMPLING_UNIT;
    while (fx[cumAt + i]! <= point) i++;
    bringOn(st, side, fx[orderAt + i]!, 0, 1);
  }
}

/** Puts a player on the pitch (appended to the list) and gives them their weights. */
function bringOn(st: DrawState, side: number, slot: number, minute: number, starter: number): void {
  st.pitch[side * XI_SIZE + st.pitchCount[side]!] = slot;
  st.pitchCount[side]!++;
  enterWeights(st, side, slot);
  const p = side * PLAYER_SLOTS + slot;
  st.started[p] = starter;
  st.minuteOn[p] = minute;
  st.appeared[side * MAX_APPEARANCES + st.appearedCount[side]!] = slot;
  st.appearedCount[side]!++;
}

function enterWeights(st: DrawState, side: number, slot: number): void {
  const base = sideBase(side);
  const p = side * PLAYER_SLOTS + slot;
  for (let kind = 0; kind < WEIGHT_KINDS; kind++) {
    const w = st.fx[base + WEIGHT_OFFSETS[kind]! + slot]!;
    st.weight[kind * PLAYERS + p] = w;
    st.total[kind * 2 + side]! += w;
  }
}

function leaveWeights(st: DrawState, side: number, slot: number): void {
  const p = side * PLAYER_SLOTS + slot;
  for (let kind = 0; kind < WEIGHT_KINDS; kind++) {
    st.total[kind * 2 + side]! -= st.weight[kind * PLAYERS + p]!;
    st.weight[kind * PLAYERS + p] = 0;
  }
}

function updateCells(st: DrawState): void {
  for (let side = 0; side < 2; side++) {
    const other = 1 - side;
    let diff = st.score[side]! - st.score[other]!;
    diff = diff < -2 ? -2 : Math.min(diff, 2);
    const own = st.sentOff[side]!;
    const theirs = st.sentOff[other]!;
    const red = own > theirs ? 0 : own === theirs ? 1 : 2;
    st.cell[side] = ((diff + 2) * RED_CARD_BUCKETS + red) * EVENT_KINDS;
  }
}

// ---- Events -------------------------------------------------------------------------------------------

/**
 * A player on the pitch picked by weight: r = ((u >>> 16) * total) >>> 16, the first player whose
 * running weight exceeds r (in pitch-list order); -1 when the total is 0. `skip` is left out (assists).
 */
function pick(st: DrawState, side: number, kind: number, u: number, skip: number): number {
  const row = kind * PLAYERS + side * PLAYER_SLOTS;
  let total = st.total[kind * 2 + side]!;
  if (skip >= 0) total -= st.weight[row + skip]!;
  if (total <= 0) return -1;
  const r = ((u >>> 16) * total) >>> 16;
  const n = st.pitchCount[side]!;
  let running = 0;
  for (let i = 0; i < n; i++) {
    const slot = st.pitch[side * XI_SIZE + i]!;
    if (slot === skip) continue;
    running += st.weight[row + slot]!;
    if (r < running) return slot;
  }
  return -1;
}

/** The side's event of the step; the caller has checked u < the side's no-event threshold. */
function sideEvent(
  st: DrawState,
  th: Uint32Array,
  side: number,
  u: number,
  pickWord: number,
  step: number,
  draw: number,
): void {
  const at = st.strengthBase[side]! + step * THRESHOLD_STEP_STRIDE + st.cell[side]!;
  const counters = st.counters;
  const team = C_TEAM + side * TEAM_COUNTERS;
  if (u < th[at + EVENT_GOAL]!) {
    scoreGoal(st, side, pickWord, step, draw);
  } else if (u < th[at + EVENT_SHOT_OFF_TARGET]!) {
    const shooter = pick(st, side, W_SHOT, pickWord, -1);
    const onTarget = u < th[at + EVENT_SHOT_ON_TARGET]!;
    counters[team + TEAM_SHOTS]!++;
    if (onTarget) counters[team + TEAM_SHOTS_ON_TARGET]!++;
    if (shooter >= 0) {
      const pb = playerCounterBase(side, shooter);
      counters[pb + P_SHOTS]!++;
      if (onTarget) counters[pb + P_SHOTS_ON_TARGET]!++;
    }
  } else if (u < th[at + EVENT_RED]!) {
    const booked = pick(st, side, W_CARD, pickWord, -1);
    counters[C_STEP_CARDS + side * STEPS + step]!++;
    if (u < th[at + EVENT_YELLOW]!) {
      counters[team + TEAM_YELLOWS]!++;
      if (booked >= 0) showYellow(st, side, booked, step);
    } else {
      sendOff(st, side, booked, step);
    }
  } else {
    substitute(st, side, pickWord, step);
  }
}

function scoreGoal(st: DrawState, side: number, pickWord: number, step: number, draw: number): void {
  const { counters, score, flags, word } = st;
  const team = C_TEAM + side * TEAM_COUNTERS;
  const scorer = pick(st, side, W_GOAL, pickWord, -1);
  score[side]!++;
  counters[team + TEAM_GOALS]!++;
  counters[team + TEAM_SHOTS]!++;
  counters[team + TEAM_SHOTS_ON_TARGET]!++;
  counters[C_STEP_GOALS + side * STEPS + step]!++;
  if (flags[F_FIRST_GOAL]! < 0) {
    flags[F_FIRST_GOAL] = side;
    counters[C_FIRST_GOAL + side]!++;
    counters[C_FIRST_GOAL_BAND + STEP_BAND[step]!]!++;
    if (scorer >= 0) counters[playerCounterBase(side, scorer) + P_FIRST_SCORER]!++;
  }
  if (scorer >= 0) {
    const pb = playerCounterBase(side, scorer);
    counters[pb + P_GOALS]!++;
    counters[pb + P_SHOTS]!++;
    counters[pb + P_SHOTS_ON_TARGET]!++;
    st.goals[side * PLAYER_SLOTS + scorer]!++;
  }
  // The assist words come from their own stream; word[] is re-read by the caller only after this.
  const stepWord0 = word[0]!;
  const stepWord1 = word[1]!;
  const stepWord2 = word[2]!;
  const stepWord3 = word[3]!;
  pcg4d(draw, STREAM_ASSIST_BASE + step, st.seedLo, st.seedHi, word);
  let assister = -1;
  if (word[2 * side]! < st.fx[FX_ASSIST_THRESHOLD]!) {
    assister = pick(st, side, W_ASSIST, word[2 * side + 1]!, scorer);
    if (assister >= 0) {
      counters[playerCounterBase(side, assister) + P_ASSISTS]!++;
      st.assists[side * PLAYER_SLOTS + assister]!++;
    }
  }
  word[0] = stepWord0;
  word[1] = stepWord1;
  word[2] = stepWord2;
  word[3] = stepWord3;
  if (score[HOME]! < score[AWAY]!) flags[F_TRAILED]! |= 1;
  if (score[AWAY]! < score[HOME]!) flags[F_TRAILED]! |= 2;
  const next =
    score[HOME]! > score[AWAY]!
      ? STATE_HOME_LEADING
      : score[HOME] === score[AWAY]
        ? STATE_LEVEL
        : STATE_AWAY_LEADING;
  const previous = flags[F_STATE]!;
  if (next !== previous) {
    if (previous !== STATE_AWAY_LEADING) counters[C_STEP_STATE + previous * STEPS + step]!--;
    if (next !== STATE_AWAY_LEADING) counters[C_STEP_STATE + next * STEPS + step]!++;
    flags[F_STATE] = next;
  }
  updateCells(st);
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

function showYellow(st: DrawState, side: number, booked: number, step: number): void {
  const p = side * PLAYER_SLOTS + booked;
  st.yellows[p]!++;
  st.counters[playerCounterBase(side, booked) + P_YELLOWS]!++;
  if (st.path !== null) st.path.events.push({ step, side, type: 'yellow_card', slot: booked });
  if (st.yellows[p] === 1) {
    // A booked player plays with care: their card weight drops for the rest of the draw.
    const at = W_CARD * PLAYERS + p;
    const careful = st.fx[sideBase(side) + S_BOOKED_CARD_WEIGHT + booked]!;
    st.total[W_CARD * 2 + side]! += careful - st.weight[at]!;
    st.weight[at] = careful;
  } else if (st.yellows[p] === 2) {
    // A second yellow is a red card.
    st.counters[C_STEP_CARDS + side * STEPS + step]!++;
    sendOff(st, side, booked, step);
  }
}

function sendOff(st: DrawState, side: number, slot: number, step: number): void {
  st.sentOff[side]!++;
  st.counters[C_TEAM + side * TEAM_COUNTERS + TEAM_REDS]!++;
  if (slot >= 0) {
    st.reds[side * PLAYER_SLOTS + slot]!++;
    st.counters[playerCounterBase(side, slot) + P_REDS]!++;
    takeOff(st, side, slot, step);
    // The last player on the list fills the hole (the GPU kernel removes players the same way).
    const n = st.pitchCount[side]! - 1;
    for (let i = 0; i <= n; i++) {
      if (st.pitch[side * XI_SIZE + i] === slot) {
        st.pitch[side * XI_SIZE + i] = st.pitch[side * XI_SIZE + n]!;
        break;
      }
    }
    st.pitchCount[side] = n;
    if (st.path !== null) st.path.events.push({ step, side, type: 'red_card', slot });
  }
  updateCells(st);
}

function takeOff(st: DrawState, side: number, slot: number, step: number): void {
  const p = side * PLAYER_SLOTS + slot;
  st.minutes[p] = st.minutes[p]! + STEP_REGULAR_MINUTE[step]! - st.minuteOn[p]!;
  leaveWeights(st, side, slot);
}

function substitute(st: DrawState, side: number, pickWord: number, step: number): void {
  if (st.subsUsed[side]! >= st.fx[FX_MAX_SUBSTITUTIONS]!) return;
  const off = pick(st, side, W_OFF, pickWord, -1);
  if (off < 0) return;
  const on = nextSubstitute(st, side);
  if (on < 0) return;
  st.subsUsed[side]!++;
  st.counters[C_TEAM + side * TEAM_COUNTERS + TEAM_SUBSTITUTIONS]!++;
  takeOff(st, side, off, step);
  // The substitute takes the replaced player's place in the list.
  for (let i = 0; i < st.pitchCount[side]!; i++) {
    if (st.pitch[side * XI_SIZE + i] === off) {
      st.pitch[side * XI_SIZE + i] = on;
      break;
    }
  }
  enterWeights(st, side, on);
  // Substitutes are not substituted again.
  const p = side * PLAYER_SLOTS + on;
  st.total[W_OFF * 2 + side]! -= st.weight[W_OFF * PLAYERS + p]!;
  st.weight[W_OFF * PLAYERS + p] = 0;
  st.started[p] = 0;
  st.minuteOn[p] = STEP_REGULAR_MINUTE[step]!;
  st.appeared[side * MAX_APPEARANCES + st.appearedCount[side]!] = on;
  st.appearedCount[side]!++;
  if (st.path !== null) st.path.events.push({ step, side, type: 'substitution', slot: on, offSlot: off });
}

/** The next bench player eligible to come on, or -1 (bench exhausted or only goalkeepers left). */
function nextSubstitute(st: DrawState, side: number): number {
  const fx = st.fx;
  const base = sideBase(side);
  const count = fx[base + S_BENCH_COUNT]!;
  const limit = fx[base + S_BENCH_LIMIT]!;
  while (st.benchNext[side]! < count && st.benchSeen[side]! < limit) {
    const slot = fx[base + S_BENCH_ORDER + st.benchNext[side]!]!;
    st.benchNext[side]!++;
    if (st.started[side * PLAYER_SLOTS + slot] === 1) continue;
    st.benchSeen[side]!++;
    if (fx[base + S_IS_KEEPER + slot] === 1) continue;
    return slot;
  }
  return -1;
}

// ---- Tallies ------------------------------------------------------------------------------------------

function tallyDraw(st: DrawState, halfTimeHome: number, halfTimeAway: number): void {
  const counters = st.counters;
  const home = st.score[HOME]!;
  const away = st.score[AWAY]!;
  const last = GRID_SIZE - 1;
  counters[C_FT_GRID + Math.min(home, last) * GRID_SIZE + Math.min(away, last)]!++;
  counters[C_HT_GRID + Math.min(halfTimeHome, last) * GRID_SIZE + Math.min(halfTimeAway, last)]!++;
  const ftResult = home > away ? 0 : home === away ? 1 : 2;
  const htResult = halfTimeHome > halfTimeAway ? 0 : halfTimeHome === halfTimeAway ? 1 : 2;
  counters[C_HT_FT + htResult * 3 + ftResult]!++;
  if (st.flags[F_FIRST_GOAL]! < 0) counters[C_FIRST_GOAL + 2]!++;
  const trailed = st.flags[F_TRAILED]!;
  if (ftResult === 0 && (trailed & 1) !== 0) counters[C_COMEBACK]!++;
  if (ftResult === 2 && (trailed & 2) !== 0) counters[C_COMEBACK + 1]!++;
  if (ftResult === 1 && trailed !== 0) counters[C_COMEBACK + 2]!++;
  const squareHome = Math.min(home, GOAL_SQUARE_CAP);
  const squareAway = Math.min(away, GOAL_SQUARE_CAP);
  counters[C_GOAL_SQUARES]! += squareHome * squareHome;
  counters[C_GOAL_SQUARES + 1]! += squareAway * squareAway;
  for (let side = 0; side < 2; side++) {
    // Players still on at the final whistle play to minute 90.
    for (let i = 0; i < st.pitchCount[side]!; i++) {
      const p = side * PLAYER_SLOTS + st.pitch[side * XI_SIZE + i]!;
      st.minutes[p] = st.minutes[p]! + 90 - st.minuteOn[p]!;
    }
    for (let i = 0; i < st.appearedCount[side]!; i++) {
      const slot = st.appeared[side * MAX_APPEARANCES + i]!;
      const p = side * PLAYER_SLOTS + slot;
      const pb = playerCounterBase(side, slot);
      counters[pb + P_STARTS]! += st.started[p]!;
      counters[pb + P_APPEARANCES]!++;
      counters[pb + P_MINUTES]! += st.minutes[p]!;
      const g = st.goals[p]!;
      const a = st.assists[p]!;
      if (g + a > 0) {
        if (g >= 1) counters[pb + P_GOALS_1]!++;
        if (g >= 2) counters[pb + P_GOALS_2]!++;
        if (g >= 3) counters[pb + P_GOALS_3]!++;
        if (a >= 1) counters[pb + P_ASSIST_1]!++;
        counters[pb + P_GOAL_OR_ASSIST_1]!++;
        st.goals[p] = 0;
        st.assists[p] = 0;
      }
      if (st.yellows[p]! > 0) {
        counters[pb + P_YELLOW_1]!++;
        st.yellows[p] = 0;
      }
      if (st.reds[p]! > 0) {
        counters[pb + P_RED_1]!++;
        st.reds[p] = 0;
      }
      // Weights need no reset: only players on the pitch list are ever read, and coming on sets them.
      st.started[p] = 0;
      st.minutes[p] = 0;
    }
  }
  if (st.path !== null) {
    st.path.score = [home, away];
    st.path.halfTime = [halfTimeHome, halfTimeAway];
  }
}
