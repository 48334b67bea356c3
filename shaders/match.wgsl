// The match kernel: one draw (a whole simulated match) per invocation, a port of fallback/engine.ts
// that must stay bit-identical to it: the event-driven sampler (simulateRange: one pcg4d call per search
// for a side's next state event, binding 3 holds the event tables of src/engine-contract/event-tables.ts)
// and the expected shots that stand in for sampled shots that are not goals (src/engine-contract/layout.ts
// "Shot tables"). Same pcg4d words keyed by (draw, stream, key), where the host passes key = runKey(seed)
// as the run's seed words, same u32 tables, integer picks and integer shot shares, so the summed counters
// equal the CPU engine's exactly. Preceded by the contract prelude (gpu/contract-constants.ts) and
// common.wgsl.
//
// A dispatch packs many runs (fixtures of a batch, jobs of several organisations): each run owns whole
// workgroups, so a workgroup's counters all belong to one run. Counts go to a workgroup-private
// histogram and are flushed once per workgroup with atomicAdd into the run's global counters.
// Overflow: a draw adds at most MAX_COUNTER_INCREMENT_PER_DRAW to a counter and a run has at most
// MAX_DRAWS_PER_RUN draws (the host refuses more), so neither the histogram nor the counters wrap,
// except the score-state rows, which are difference-encoded by design and wrap the same way on the CPU.

@group(0) @binding(0) var<uniform> params: DispatchParams;
@group(0) @binding(1) var<storage, read> runs: array<PackedRun>;
@group(0) @binding(2) var<storage, read> fixtures: array<u32>;
// The event tables of every run (PackedRun.event_table_offset points at the run's block).
@group(0) @binding(3) var<storage, read> event_tables: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;

var<workgroup> histogram: array<atomic<u32>, COUNTER_WORDS>;

const NO_SLOT: i32 = -1;
/** A side's starters plus at most five substitutes (fallback/engine.ts MAX_APPEARANCES). */
const MAX_APPEARANCES: u32 = 16u;
/**
 * Expected shots to counter units (2^-SHOT_COUNTER_BITS shots; fallback/engine.ts TEAM_SHOT_SHIFT and
 * PLAYER_SHOT_SHIFT): a side's sum is in units of 2^-SHOT_FRACTION_BITS shots, a player's share in units
 * of 2^-(SHOT_FRACTION_BITS + SHOT_SHARE_BITS).
 */
const TEAM_SHOT_SHIFT: u32 = SHOT_FRACTION_BITS - SHOT_COUNTER_BITS;
const PLAYER_SHOT_SHIFT: u32 = SHOT_FRACTION_BITS + SHOT_SHARE_BITS - SHOT_COUNTER_BITS;

// ---- The current draw's state (one invocation = one draw) ----------------------------------------
var<private> fixture_base: u32;
var<private> event_table_base: u32;
var<private> seed: vec2<u32>;
/**
 * Players on the pitch, [side * XI_SIZE + i]: slot | PITCH_BOOKED | PITCH_SUBSTITUTE; a removed player's
 * place is filled by the last one. The flags give a player's current weights without a lookup.
 */
var<private> pitch: array<u32, 22>;
var<private> pitch_count: array<u32, 2>;
/** Players who appeared, [side * MAX_APPEARANCES + i]; starters first (the first `starters` entries). */
var<private> appearance_slot: array<u32, 32>;
/** goals | assists << 8 | yellows << 16 | reds << 24 (each below 256: at most one event per step). */
var<private> appearance_tally: array<u32, 32>;
/** Regular minute the player came on | minutes played << 8. */
var<private> appearance_time: array<u32, 32>;
/** The side's running shot shares (shot_share, saved_share) when the player came on (starters: 0). */
var<private> appearance_shot_entry: array<u32, 32>;
var<private> appearance_saved_entry: array<u32, 32>;
var<private> appearance_count: array<u32, 2>;
/**
 * Where each slot is in the appearance list: a byte a slot (its index + 1, 0 while it has not appeared),
 * four slots a word, SLOT_INDEX_WORDS words a side: appearance_of reads one word instead of searching
 * the list (on an H200, 13.4 -> 12.9 ms a million draws; docs/gpu.md "Tuning on the H200").
 */
const SLOT_INDEX_WORDS: u32 = (PLAYER_SLOTS + 3u) / 4u;
var<private> appearance_index: array<u32, 2u * SLOT_INDEX_WORDS>;
var<private> starters: array<u32, 2>;
var<private> score: array<i32, 2>;
var<private> sent_off: array<u32, 2>;
var<private> subs_used: array<u32, 2>;
var<private> bench_next: array<u32, 2>;
var<private> bench_seen: array<u32, 2>;
/**
 * The side's substitutes in the order they come on, a byte each, four words a side, and how many there
 * are: found once at set-up (set_up_draw), where every lane of a warp searches the bench at the same
 * time, instead of in a substitution event, which the warp's other lanes wait through.
 */
var<private> sub_slots: array<u32, 8>;
var<private> sub_found: array<u32, 2>;
var<private> strength_bucket: array<u32, 2>;
/** Each side's row of the event tables: (side * STRENGTH_BUCKETS + strength) * EVENT_CELLS + cell. */
var<private> cell_row: array<u32, 2>;
/** The event sampler's pending event of each side: its step (NO_EVENT_STEP: none left) and words. */
var<private> pending_step: array<u32, 2>;
var<private> pending_kind: array<u32, 2>;
var<private> pending_pick: array<u32, 2>;
var<private> pending_order: array<u32, 2>;
/** Searches made by each side in the draw (its stream index) and the first step it has not played. */
var<private> searches: array<u32, 2>;
var<private> quiet_from: array<u32, 2>;
/**
 * Expected shots (layout.ts "Shot tables"), per side: the first step whose shots are not yet added; the
 * open segment's shots and saved shots (units of 2^-SHOT_FRACTION_BITS shots); the draw's totals; the
 * running shares R (wrapping u32). shot_dither: word 2 of the draw's STREAM_SETUP_ADDED_TIME call.
 */
var<private> shot_from: array<u32, 2>;
var<private> segment_shots: array<u32, 2>;
var<private> segment_saved: array<u32, 2>;
var<private> team_shots: array<u32, 2>;
var<private> team_saved: array<u32, 2>;
var<private> shot_share: array<u32, 2>;
var<private> saved_share: array<u32, 2>;
var<private> shot_dither: u32;
/**
 * The side's shot weight on the pitch (S_SHOT_WEIGHT of its players), kept up to date as players come and
 * go, as the CPU keeps its running total: u32 sums wrap alike in any order, so the value is the same.
 */
var<private> shot_weight: array<u32, 2>;
var<private> state_code: u32;
var<private> first_goal_side: i32;
var<private> home_trailed: bool;
var<private> away_trailed: bool;

const PITCH_SLOT: u32 = 0xFFu;
// The flags of an in-play state's pitch words (layout.ts "In-play state block"), so set-up copies them.
const PITCH_BOOKED: u32 = STATE_PITCH_BOOKED;
const PITCH_SUBSTITUTE: u32 = STATE_PITCH_CAME_ON;

const TALLY_GOAL: u32 = 1u;
const TALLY_ASSIST: u32 = 1u << 8u;
const TALLY_YELLOW: u32 = 1u << 16u;
const TALLY_RED: u32 = 1u << 24u;

fn fx(index: u32) -> u32 {
  return fixtures[fixture_base + index];
}

/** A word of the run's event tables. */
fn event_table(index: u32) -> u32 {
  return event_tables[event_table_base + index];
}

fn count(index: u32) {
  atomicAdd(&histogram[index], 1u);
}

/** Adds `value` to a counter (skipping 0, which changes nothing). */
fn count_by(index: u32, value: u32) {
  if (value != 0u) {
    atomicAdd(&histogram[index], value);
  }
}

fn side_base(side: u32) -> u32 {
  return FX_SIDE_BASE + side * SIDE_WORDS;
}

fn player_base(side: u32, slot: u32) -> u32 {
  return C_PLAYERS + (side * PLAYER_SLOTS + slot) * PLAYER_COUNTERS;
}

/**
 * Index of a player who has appeared in this draw (pickers only return players on the pitch): one read
 * of appearance_index. A slot that has not appeared (only a malformed table gets here) gives the last
 * entry, where the linear search of the list this replaces ended.
 */
fn appearance_of(side: u32, slot: u32) -> u32 {
  if (slot < PLAYER_SLOTS) {
    let word = appearance_index[side * SLOT_INDEX_WORDS + (slot >> 2u)];
    let found = (word >> ((slot & 3u) * 8u)) & 0xFFu;
    if (found != 0u && found <= MAX_APPEARANCES) {
      return side * MAX_APPEARANCES + found - 1u;
    }
  }
  return side * MAX_APPEARANCES + max(min(appearance_count[side], MAX_APPEARANCES), 1u) - 1u;
}

fn is_starter(side: u32, slot: u32) -> bool {
  let n = min(starters[side], MAX_APPEARANCES);
  for (var i = 0u; i < n; i++) {
    if (appearance_slot[side * MAX_APPEARANCES + i] == slot) {
      return true;
    }
  }
  return false;
}

/**
 * A player comes on: starters at set-up (the shares are 0 then), substitutes once the side's segment
 * before them is closed (fallback/engine.ts putStarterOn and substitute).
 */
fn add_appearance(side: u32, slot: u32, minute_on: u32) {
  let at = side * MAX_APPEARANCES + appearance_count[side];
  if (slot < PLAYER_SLOTS) {
    let word = side * SLOT_INDEX_WORDS + (slot >> 2u);
    let shift = (slot & 3u) * 8u;
    // A slot keeps its first appearance, as the search of the list found the first.
    if (((appearance_index[word] >> shift) & 0xFFu) == 0u) {
      appearance_index[word] |= (appearance_count[side] + 1u) << shift;
    }
  }
  appearance_slot[at] = slot;
  appearance_tally[at] = 0u;
  appearance_time[at] = minute_on;
  appearance_shot_entry[at] = shot_share[side];
  appearance_saved_entry[at] = saved_share[side];
  appearance_count[side] += 1u;
}

fn add_starter(side: u32, slot: u32) {
  pitch[side * XI_SIZE + pitch_count[side]] = slot;
  pitch_count[side] += 1u;
  add_appearance(side, slot, 0u);
  starters[side] += 1u;
}

/**
 * Madow systematic sampling (contract: SAMPLING_UNIT), as sampleStarters in fallback/engine.ts. Both
 * loops are bounded by the table sizes (an XI, PLAYER_SLOTS cumulative weights), which a valid table
 * never reaches: a malformed one ends the draw instead of looping on (docs/gpu.md "Bounded loops").
 */
fn sample_starters(side: u32, order_at: u32, cum_at: u32, picks: u32, u: u32) {
  let offset = u >> 8u;
  var i = 0u;
  for (var j = 0u; j < picks && pitch_count[side] < XI_SIZE; j++) {
    let point = offset + j * SAMPLING_UNIT;
    while (i + 1u < PLAYER_SLOTS && fx(cum_at + i) <= point) {
      i++;
    }
    add_starter(side, fx(order_at + i));
  }
}

/**
 * The current weight of a pitch entry: the fixture's weight of that kind, except that a booked player
 * is picked for a card by S_BOOKED_CARD_WEIGHT and a substitute is never taken off again. The CPU keeps
 * these weights and their totals up to date as the match changes; summing them here gives the same
 * totals and the same first index whose running sum exceeds r.
 */
fn weight(side: u32, weights: u32, entry: u32) -> u32 {
  let slot = entry & PITCH_SLOT;
  let base = side_base(side);
  if (weights == S_CARD_WEIGHT && (entry & PITCH_BOOKED) != 0u) {
    return fx(base + S_BOOKED_CARD_WEIGHT + slot);
  }
  if (weights == S_SUB_OFF_WEIGHT && (entry & PITCH_SUBSTITUTE) != 0u) {
    return 0u;
  }
  return fx(base + weights + slot);
}

/**
 * The pitch-list index of a player picked by the weights at `weights` (a side-block offset), or NO_SLOT
 * when all are 0. The index, not the slot: a card or a substitution then changes that entry directly.
 */
fn pick(side: u32, weights: u32, u: u32) -> i32 {
  let n = pitch_count[side];
  if (n == 0u) {
    return NO_SLOT;
  }
  var total = 0u;
  for (var i = 0u; i < n; i++) {
    total += weight(side, weights, pitch[side * XI_SIZE + i]);
  }
  if (total == 0u) {
    return NO_SLOT;
  }
  let r = scale_to_range(u, total);
  var running = 0u;
  var i = 0u;
  loop {
    running += weight(side, weights, pitch[side * XI_SIZE + i]);
    // r < total, so a valid sum passes r by the last entry; the bound only guards that promise.
    if (running > r || i + 1u >= n) {
      break;
    }
    i++;
  }
  return i32(i);
}

/** The slot at a pitch-list index from pick, or NO_SLOT. */
fn slot_at(side: u32, index: i32) -> i32 {
  if (index < 0) {
    return NO_SLOT;
  }
  return i32(pitch[side * XI_SIZE + u32(index)] & PITCH_SLOT);
}

/** The assist provider among the scorer's team-mates on the pitch, or NO_SLOT. */
fn pick_assist(side: u32, scorer: i32, u: u32) -> i32 {
  let n = pitch_count[side];
  if (n == 0u) {
    return NO_SLOT;
  }
  let base = side_base(side) + S_ASSIST_WEIGHT;
  var total = 0u;
  for (var i = 0u; i < n; i++) {
    total += fx(base + (pitch[side * XI_SIZE + i] & PITCH_SLOT));
  }
  if (scorer >= 0) {
    total -= fx(base + u32(scorer));
  }
  if (total == 0u) {
    return NO_SLOT;
  }
  let r = scale_to_range(u, total);
  var running = 0u;
  for (var i = 0u; i < n; i++) {
    let slot = pitch[side * XI_SIZE + i] & PITCH_SLOT;
    if (i32(slot) == scorer) {
      continue;
    }
    running += fx(base + slot);
    if (r < running) {
      return i32(slot);
    }
  }
  return NO_SLOT;
}

fn update_cells() {
  for (var side = 0u; side < 2u; side++) {
    let other = 1u - side;
    let diff = clamp(score[side] - score[other], -2, 2);
    var red = 1u;
    if (sent_off[side] > sent_off[other]) {
      red = 0u;
    } else if (sent_off[side] < sent_off[other]) {
      red = 2u;
    }
    let cell_index = u32(diff + 2) * RED_CARD_BUCKETS + red;
    cell_row[side] = (side * STRENGTH_BUCKETS + strength_bucket[side]) * EVENT_CELLS + cell_index;
  }
}

/** The player's minutes up to the step (players taken off, and at the final whistle those still on). */
fn take_off(side: u32, slot: u32, step: u32) {
  let at = appearance_of(side, slot);
  let time = appearance_time[at];
  let minute_on = time & 0xFFu;
  let minutes = ((time >> 8u) + STEP_REGULAR_MINUTE[step] - minute_on) & 0xFFu;
  appearance_time[at] = minute_on | (minutes << 8u);
}

// ---- Expected shots (layout.ts "Shot tables"; addExpectedShots and after in fallback/engine.ts) -------

/**
 * Adds the side's expected shots over the steps from shot_from to `to` (not included) in event-table row
 * `row` to its open segment, skipping the first half's unplayed added time [first_end,
 * SECOND_HALF_START) (addExpectedShots). The series are cumulative u32 sums, so the differences are exact.
 */
fn add_expected_shots(side: u32, row: u32, to: u32, first_end: u32) {
  var from_step = shot_from[side];
  if (from_step < SECOND_HALF_START && from_step >= first_end) {
    from_step = SECOND_HALF_START;
  }
  if (to <= from_step) {
    return;
  }
  let at = EVENT_SHOTS_AT + row * SHOT_ROW_WORDS;
  let saved = at + SHOT_ON_TARGET_OFFSET;
  var shots = event_table(at + to) - event_table(at + from_step);
  var saved_shots = event_table(saved + to) - event_table(saved + from_step);
  if (from_step < first_end && to >= SECOND_HALF_START) {
    shots -= event_table(at + SECOND_HALF_START) - event_table(at + first_end);
    saved_shots -= event_table(saved + SECOND_HALF_START) - event_table(saved + first_end);
  }
  segment_shots[side] += shots;
  segment_saved[side] += saved_shots;
  shot_from[side] = to;
}

/** The side's shot weight on the pitch, summed (at set-up; shot_weight keeps it after). */
fn summed_shot_weight(side: u32) -> u32 {
  let base = side_base(side) + S_SHOT_WEIGHT;
  var total = 0u;
  for (var i = 0u; i < pitch_count[side]; i++) {
    total += fx(base + (pitch[side * XI_SIZE + i] & PITCH_SLOT));
  }
  return total;
}

/**
 * Closes the side's open segment before its players change (closeShotSegment): its shots join the
 * side's totals, and each unit of the on-pitch shot weight (a leaving player's still counted) earns
 * floor(shots * 2^SHOT_SHARE_BITS / total weight) of share. A segment's shots are below 2^19 (layout.ts
 * "Shot tables"), so the shift does not wrap.
 */
fn close_shot_segment(side: u32) {
  let shots = segment_shots[side];
  let saved = segment_saved[side];
  team_shots[side] += shots;
  team_saved[side] += saved;
  segment_shots[side] = 0u;
  segment_saved[side] = 0u;
  let total = shot_weight[side];
  if (total > 0u) {
    shot_share[side] += (shots << SHOT_SHARE_BITS) / total;
    saved_share[side] += (saved << SHOT_SHARE_BITS) / total;
  }
}

/**
 * Adds the expected shots of a player on the pitch since he came on to his counters (addPlayerShots):
 * weight * (R - R on entry), rounded to counter units with the draw's dither.
 */
fn add_player_shots(side: u32, slot: u32) {
  let at = appearance_of(side, slot);
  let weight = fx(side_base(side) + S_SHOT_WEIGHT + slot);
  let dither = shot_dither >> (32u - PLAYER_SHOT_SHIFT);
  let shots = weight * (shot_share[side] - appearance_shot_entry[at]);
  let saved = weight * (saved_share[side] - appearance_saved_entry[at]);
  let pb = player_base(side, slot);
  count_by(pb + P_SHOTS, (shots + dither) >> PLAYER_SHOT_SHIFT);
  count_by(pb + P_SHOTS_ON_TARGET, (saved + dither) >> PLAYER_SHOT_SHIFT);
}

/**
 * A player on the pitch leaves it (takeOff: substituted off or sent off): the side's segment with him
 * on the pitch is closed (play_events added its expected shots up to this step) and his shots are
 * counted, while he is still on the list; then his minutes. The caller takes him off the list.
 */
fn leave_pitch(side: u32, slot: u32, step: u32) {
  close_shot_segment(side);
  add_player_shots(side, slot);
  take_off(side, slot, step);
}

/**
 * At the final whistle (finishExpectedShots): the side's last expected shots, its players' shares and its
 * team counters.
 */
fn finish_expected_shots(side: u32, first_end: u32, second_end: u32) {
  add_expected_shots(side, cell_row[side], second_end, first_end);
  close_shot_segment(side);
  for (var i = 0u; i < pitch_count[side]; i++) {
    add_player_shots(side, pitch[side * XI_SIZE + i] & PITCH_SLOT);
  }
  let dither = shot_dither >> (32u - TEAM_SHOT_SHIFT);
  let team = C_TEAM + side * TEAM_COUNTERS;
  count_by(team + TEAM_SHOTS, (team_shots[side] + dither) >> TEAM_SHOT_SHIFT);
  count_by(team + TEAM_SHOTS_ON_TARGET, (team_saved[side] + dither) >> TEAM_SHOT_SHIFT);
}

/** The next bench player eligible to come on, or NO_SLOT (bench exhausted or only goalkeepers left). */
fn next_substitute(side: u32) -> i32 {
  let base = side_base(side);
  // The order has PLAYER_SLOTS entries: a larger count in a malformed table would loop 2^32 times.
  let bench_count = min(fx(base + S_BENCH_COUNT), PLAYER_SLOTS);
  let bench_limit = fx(base + S_BENCH_LIMIT);
  while (bench_next[side] < bench_count && bench_seen[side] < bench_limit) {
    let slot = fx(base + S_BENCH_ORDER + bench_next[side]);
    bench_next[side] += 1u;
    if (is_starter(side, slot)) {
      continue;
    }
    bench_seen[side] += 1u;
    if (fx(base + S_IS_KEEPER + slot) == 1u) {
      continue;
    }
    return i32(slot);
  }
  return NO_SLOT;
}

fn change_state(step: u32) {
  var next = STATE_AWAY_LEADING;
  if (score[HOME] > score[AWAY]) {
    next = STATE_HOME_LEADING;
  } else if (score[HOME] == score[AWAY]) {
    next = STATE_LEVEL;
  }
  if (next == state_code) {
    return;
  }
  if (state_code < 2u) {
    atomicSub(&histogram[C_STEP_STATE + state_code * STEPS + step], 1u);
  }
  if (next < 2u) {
    count(C_STEP_STATE + next * STEPS + step);
  }
  state_code = next;
}

/** The player at pitch-list `index` (slot `slot`, NO_SLOT when none was picked) is sent off. */
fn send_off(side: u32, slot: i32, index: i32, step: u32) {
  sent_off[side] += 1u;
  count(C_TEAM + side * TEAM_COUNTERS + TEAM_REDS);
  if (slot < 0) {
    return;
  }
  let player = u32(slot);
  appearance_tally[appearance_of(side, player)] += TALLY_RED;
  count(player_base(side, player) + P_REDS);
  leave_pitch(side, player, step);
  shot_weight[side] -= fx(side_base(side) + S_SHOT_WEIGHT + player);
  // The last player on the list fills the hole, as on the CPU. A picked player is on the list, so
  // the count is at least 1; max() keeps an empty list from wrapping to 2^32 - 1 all the same, and
  // min() a malformed index inside the side's list.
  let n = max(pitch_count[side], 1u) - 1u;
  pitch[side * XI_SIZE + min(u32(index), n)] = pitch[side * XI_SIZE + n];
  pitch_count[side] = n;
}

/**
 * The side's state event (playEvent in fallback/engine.ts): event_table(at + KIND_WORD_*) are the step's
 * cumulative kind words (layout.ts "Event tables"), and the number of them at or below u is the kind, as
 * findNext counts it: 0 a goal, 1 a yellow card, 2 a straight red card, 3 a substitution.
 */
fn play_event(side: u32, u: u32, at: u32, pick_word: u32, order_word: u32, step: u32) {
  let team = C_TEAM + side * TEAM_COUNTERS;
  let kind =
    u32(u >= event_table(at + KIND_WORD_GOAL)) +
    u32(u >= event_table(at + KIND_WORD_YELLOW)) +
    u32(u >= event_table(at + KIND_WORD_RED));
  // One pick per event, by the kind's weights, before the kinds part ways: a warp whose lanes play
  // different kinds runs the pick once instead of once per kind. pick changes nothing, so picking a
  // player for a substitution that then does not happen changes no counter.
  let weights = select(select(S_SUB_OFF_WEIGHT, S_CARD_WEIGHT, kind <= 2u), S_GOAL_WEIGHT, kind == 0u);
  let picked_index = pick(side, weights, pick_word);
  let picked = slot_at(side, picked_index);
  if (kind == 0u) {
    let scorer = picked;
    score[side] += 1;
    count(team + TEAM_GOALS);
    // A goal is a shot on target: SHOT_COUNTER_UNIT in the shot counters' units.
    count_by(team + TEAM_SHOTS, SHOT_COUNTER_UNIT);
    count_by(team + TEAM_SHOTS_ON_TARGET, SHOT_COUNTER_UNIT);
    count(C_STEP_GOALS + side * STEPS + step);
    if (first_goal_side < 0) {
      first_goal_side = i32(side);
      count(C_FIRST_GOAL + side);
      count(C_FIRST_GOAL_BAND + STEP_BAND[step]);
      if (scorer >= 0) {
        count(player_base(side, u32(scorer)) + P_FIRST_SCORER);
      }
    }
    if (scorer >= 0) {
      let pb = player_base(side, u32(scorer));
      count(pb + P_GOALS);
      count_by(pb + P_SHOTS, SHOT_COUNTER_UNIT);
      count_by(pb + P_SHOTS_ON_TARGET, SHOT_COUNTER_UNIT);
      appearance_tally[appearance_of(side, u32(scorer))] += TALLY_GOAL;
    }
    // The assist words are the goal's search's (ENGINE_STREAM 2): the order word's bits 0-30 decide
    // the assist, the pick word's low half picks the provider (playEvent in fallback/engine.ts).
    if ((order_word << 1u) < fx(FX_ASSIST_THRESHOLD)) {
      let assister = pick_assist(side, scorer, pick_word << 16u);
      if (assister >= 0) {
        count(player_base(side, u32(assister)) + P_ASSISTS);
        appearance_tally[appearance_of(side, u32(assister))] += TALLY_ASSIST;
      }
    }
    if (score[HOME] < score[AWAY]) {
      home_trailed = true;
    }
    if (score[AWAY] < score[HOME]) {
      away_trailed = true;
    }
    change_state(step);
    update_cells();
  } else if (kind <= 2u) {
    let booked_index = picked_index;
    let booked = picked;
    count(C_STEP_CARDS + side * STEPS + step);
    if (kind == 1u) {
      count(team + TEAM_YELLOWS);
      if (booked < 0) {
        return;
      }
      let at_player = appearance_of(side, u32(booked));
      appearance_tally[at_player] += TALLY_YELLOW;
      count(player_base(side, u32(booked)) + P_YELLOWS);
      // Booked before: by an earlier yellow of the draw or in an in-play state (the CPU's record of the
      // draw's yellows plus bookedBefore).
      let was_booked = (pitch[side * XI_SIZE + u32(booked_index)] & PITCH_BOOKED) != 0u;
      if (!was_booked) {
        // A booked player plays with care: their card weight drops for the rest of the draw.
        pitch[side * XI_SIZE + u32(booked_index)] |= PITCH_BOOKED;
      } else {
        // A second yellow is a red card.
        count(C_STEP_CARDS + side * STEPS + step);
        send_off(side, booked, booked_index, step);
        update_cells();
      }
    } else {
      send_off(side, booked, booked_index, step);
      update_cells();
    }
  } else {
    // MAX_APPEARANCES holds an XI and five substitutes: a table allowing more cannot overrun the lists.
    if (subs_used[side] >= fx(FX_MAX_SUBSTITUTIONS) || appearance_count[side] >= MAX_APPEARANCES) {
      return;
    }
    let off_index = picked_index;
    let off = picked;
    if (off < 0) {
      return;
    }
    // The next substitute found at set-up (next_substitute's answer now: the starters have not changed).
    var on = NO_SLOT;
    if (subs_used[side] < sub_found[side]) {
      on = i32((sub_slots[side * 4u + (subs_used[side] >> 2u)] >> ((subs_used[side] & 3u) * 8u)) & 0xFFu);
    }
    if (on < 0) {
      return;
    }
    subs_used[side] += 1u;
    count(team + TEAM_SUBSTITUTIONS);
    // The replaced player leaves with the segment closed; the substitute's share starts after it.
    leave_pitch(side, u32(off), step);
    let shot_base = side_base(side) + S_SHOT_WEIGHT;
    shot_weight[side] += fx(shot_base + u32(on)) - fx(shot_base + u32(off));
    add_appearance(side, u32(on), STEP_REGULAR_MINUTE[step]);
    // The substitute takes the replaced player's place in the list.
    pitch[side * XI_SIZE + u32(off_index)] = u32(on) | PITCH_SUBSTITUTE;
  }
}

/** Resets the draw, picks both XIs and the added time (setUpDraw); returns the added minutes per half. */
fn set_up_draw(draw: u32) -> vec2<u32> {
  for (var i = 0u; i < 2u * SLOT_INDEX_WORDS; i++) {
    appearance_index[i] = 0u;
  }
  for (var side = 0u; side < 2u; side++) {
    pitch_count[side] = 0u;
    appearance_count[side] = 0u;
    starters[side] = 0u;
    score[side] = 0;
    sent_off[side] = 0u;
    subs_used[side] = 0u;
    bench_next[side] = 0u;
    bench_seen[side] = 0u;
    shot_from[side] = 0u;
    segment_shots[side] = 0u;
    segment_saved[side] = 0u;
    team_shots[side] = 0u;
    team_saved[side] = 0u;
    shot_share[side] = 0u;
    saved_share[side] = 0u;
  }

  // ---- Set-up: starting XIs, added time, lineup strength.
  let lineup_word = pcg4d(vec4<u32>(draw, STREAM_SETUP_LINEUPS, seed.x, seed.y));
  for (var side = 0u; side < 2u; side++) {
    let base = side_base(side);
    let mode = fx(base + S_LINEUP_MODE);
    if (mode == LINEUP_MODE_STATE) {
      put_state_players_on(side);
      continue;
    }
    if (mode == LINEUP_MODE_FIXED) {
      for (var i = 0u; i < XI_SIZE; i++) {
        add_starter(side, fx(base + S_XI + i));
      }
    } else {
      if (mode == LINEUP_MODE_PREDICTED) {
        sample_starters(side, base + S_KEEPER_ORDER, base + S_KEEPER_CUM, 1u, lineup_word[2u * side]);
      }
      sample_starters(
        side,
        base + S_OUTFIELD_ORDER,
        base + S_OUTFIELD_CUM,
        fx(base + S_OUTFIELD_PICKS),
        lineup_word[2u * side + 1u],
      );
    }
    // Lineup strength: the XI's goal weight against the squad's expectation.
    var strength = 0u;
    for (var i = 0u; i < pitch_count[side]; i++) {
      strength += fx(base + S_GOAL_WEIGHT + (pitch[side * XI_SIZE + i] & PITCH_SLOT));
    }
    var bucket = 0u;
    while (bucket < STRENGTH_BUCKETS - 1u && fx(base + S_STRENGTH_EDGES + bucket) <= strength) {
      bucket++;
    }
    strength_bucket[side] = bucket;
    shot_weight[side] = summed_shot_weight(side);
  }
  // The substitutes each side can bring on (sub_slots): the starters are fixed now, so next_substitute
  // gives the same sequence here as it would at each substitution, which takes the next one; a side
  // needs at most min(its limit, room left in the appearance list) of them.
  for (var side = 0u; side < 2u; side++) {
    let room = MAX_APPEARANCES - min(appearance_count[side], MAX_APPEARANCES);
    let wanted = min(min(fx(FX_MAX_SUBSTITUTIONS), room), 16u);
    sub_slots[side * 4u] = 0u;
    sub_slots[side * 4u + 1u] = 0u;
    sub_slots[side * 4u + 2u] = 0u;
    sub_slots[side * 4u + 3u] = 0u;
    if (fx(side_base(side) + S_LINEUP_MODE) == LINEUP_MODE_STATE) {
      // The state's list: the players who came on, then those still to come (indexed by subs_used).
      let at = FX_STATE_SIDE_BASE + side * STATE_SIDE_WORDS;
      let length = min(fx(at + ST_BENCH_LENGTH), STATE_BENCH_SLOTS);
      for (var i = 0u; i < length; i++) {
        sub_slots[side * 4u + (i >> 2u)] |= (fx(at + ST_BENCH + i) & 0xFFu) << ((i & 3u) * 8u);
      }
      sub_found[side] = length;
      continue;
    }
    var found = 0u;
    for (; found < wanted; found++) {
      let slot = next_substitute(side);
      if (slot < 0) {
        break;
      }
      sub_slots[side * 4u + (found >> 2u)] |= (u32(slot) & 0xFFu) << ((found & 3u) * 8u);
    }
    sub_found[side] = found;
  }
  let added_word = pcg4d(vec4<u32>(draw, STREAM_SETUP_ADDED_TIME, seed.x, seed.y));
  var added_first = 0u;
  while (added_first < MAX_ADDED_MINUTES && added_word.x >= fx(FX_ADDED_TIME_FIRST + added_first)) {
    added_first++;
  }
  var added_second = 0u;
  while (added_second < MAX_ADDED_MINUTES && added_word.y >= fx(FX_ADDED_TIME_SECOND + added_second)) {
    added_second++;
  }
  shot_dither = added_word.z;
  count(C_ADDED_TIME + added_first);
  count(C_ADDED_TIME + MAX_ADDED_MINUTES + 1u + added_second);
  if (fx(FX_STATE_IN_PLAY) != 0u) {
    start_from_state();
    return vec2<u32>(added_first, added_second);
  }
  update_cells();
  state_code = STATE_LEVEL;
  count(C_STEP_STATE + STATE_LEVEL * STEPS);
  first_goal_side = -1;
  home_trailed = false;
  away_trailed = false;
  return vec2<u32>(added_first, added_second);
}

/**
 * An in-play run's side with a known XI (putStatePlayersOn): the state's pitch words, flags and all, each
 * player on since the minutes the state has played; its starting XI's strength bucket.
 */
fn put_state_players_on(side: u32) {
  let at = FX_STATE_SIDE_BASE + side * STATE_SIDE_WORDS;
  let players = min(fx(at + ST_PITCH_COUNT), XI_SIZE);
  let played = fx(FX_STATE_MINUTES_PLAYED);
  for (var i = 0u; i < players; i++) {
    let entry = fx(at + ST_PITCH + i) & (STATE_PITCH_SLOT | STATE_PITCH_BOOKED | STATE_PITCH_CAME_ON);
    pitch[side * XI_SIZE + pitch_count[side]] = entry;
    pitch_count[side] += 1u;
    add_appearance(side, entry & STATE_PITCH_SLOT, played);
    starters[side] += 1u;
  }
  strength_bucket[side] = min(fx(at + ST_STRENGTH), STRENGTH_BUCKETS - 1u);
  shot_weight[side] = summed_shot_weight(side);
}

/** The rest of an in-play run's set-up (startFromState): score, red cards, substitutions made. */
fn start_from_state() {
  let start = fx(FX_STATE_STEP);
  for (var side = 0u; side < 2u; side++) {
    let at = FX_STATE_SIDE_BASE + side * STATE_SIDE_WORDS;
    score[side] = i32(fx(at + ST_GOALS));
    sent_off[side] = fx(at + ST_SENT_OFF);
    subs_used[side] = fx(at + ST_SUBSTITUTIONS);
    shot_from[side] = start;
  }
  update_cells();
  state_code = STATE_AWAY_LEADING;
  if (score[HOME] > score[AWAY]) {
    state_code = STATE_HOME_LEADING;
  } else if (score[HOME] == score[AWAY]) {
    state_code = STATE_LEVEL;
  }
  if (state_code < 2u) {
    count(C_STEP_STATE + state_code * STEPS + min(start, STEPS - 1u));
  }
  first_goal_side = -1;
  home_trailed = score[HOME] < score[AWAY];
  away_trailed = score[AWAY] < score[HOME];
}

/** Counts the finished draw (tallyDraw). */
fn tally_draw(half_time_home: i32, half_time_away: i32) {
  let home = score[HOME];
  let away = score[AWAY];
  let last_cell = i32(GRID_SIZE) - 1;
  count(C_FT_GRID + u32(min(home, last_cell)) * GRID_SIZE + u32(min(away, last_cell)));
  count(C_HT_GRID + u32(min(half_time_home, last_cell)) * GRID_SIZE + u32(min(half_time_away, last_cell)));
  var ft_result = 2u;
  if (home > away) {
    ft_result = 0u;
  } else if (home == away) {
    ft_result = 1u;
  }
  var ht_result = 2u;
  if (half_time_home > half_time_away) {
    ht_result = 0u;
  } else if (half_time_home == half_time_away) {
    ht_result = 1u;
  }
  count(C_HT_FT + ht_result * 3u + ft_result);
  if (first_goal_side < 0) {
    count(C_FIRST_GOAL + 2u);
  }
  if (ft_result == 0u && home_trailed) {
    count(C_COMEBACK);
  }
  if (ft_result == 2u && away_trailed) {
    count(C_COMEBACK + 1u);
  }
  if (ft_result == 1u && (home_trailed || away_trailed)) {
    count(C_COMEBACK + 2u);
  }
  let square_home = u32(min(home, i32(GOAL_SQUARE_CAP)));
  let square_away = u32(min(away, i32(GOAL_SQUARE_CAP)));
  atomicAdd(&histogram[C_GOAL_SQUARES], square_home * square_home);
  atomicAdd(&histogram[C_GOAL_SQUARES + 1u], square_away * square_away);
  for (var side = 0u; side < 2u; side++) {
    // Players still on at the final whistle.
    for (var i = 0u; i < pitch_count[side]; i++) {
      take_off(side, pitch[side * XI_SIZE + i] & PITCH_SLOT, STEPS - 1u);
    }
    for (var i = 0u; i < appearance_count[side]; i++) {
      let at = side * MAX_APPEARANCES + i;
      let pb = player_base(side, appearance_slot[at]);
      let tally = appearance_tally[at];
      let goals = tally & 0xFFu;
      let assists = (tally >> 8u) & 0xFFu;
      if (i < starters[side]) {
        count(pb + P_STARTS);
      }
      count(pb + P_APPEARANCES);
      atomicAdd(&histogram[pb + P_MINUTES], appearance_time[at] >> 8u);
      if (goals >= 1u) {
        count(pb + P_GOALS_1);
      }
      if (goals >= 2u) {
        count(pb + P_GOALS_2);
      }
      if (goals >= 3u) {
        count(pb + P_GOALS_3);
      }
      if (assists >= 1u) {
        count(pb + P_ASSIST_1);
      }
      if (goals + assists >= 1u) {
        count(pb + P_GOAL_OR_ASSIST_1);
      }
      if (((tally >> 16u) & 0xFFu) >= 1u) {
        count(pb + P_YELLOW_1);
      }
      if ((tally >> 24u) >= 1u) {
        count(pb + P_RED_1);
      }
    }
  }
}

// ---- The event-driven sampler (simulateRange in fallback/engine.ts) ---------------------------------

/**
 * exponentialBits of src/engine-contract/event-tables.ts: -log2(w / 2^32) in units of
 * 2^-HAZARD_FRACTION_BITS, from the leading zeros and the log2 table interpolated linearly.
 */
fn exponential_bits(w: u32) -> u32 {
  if (w == 0u) {
    return 32u << HAZARD_FRACTION_BITS;
  }
  let lz = countLeadingZeros(w);
  let m = w << lz;
  let index = (m >> (31u - LOG2_TABLE_BITS)) & ((1u << LOG2_TABLE_BITS) - 1u);
  let fraction = (m >> (15u - LOG2_TABLE_BITS)) & 0xFFFFu;
  let low = event_table(EVENT_LOG2_AT + index);
  let high = event_table(EVENT_LOG2_AT + index + 1u);
  let log2 = low + (((high - low) * fraction) >> 16u);
  return ((lz + 1u) << HAZARD_FRACTION_BITS) - log2;
}

/**
 * The side's next state event at or after step `start` (findNext): one pcg4d call per search draws a
 * hazard budget, and the first step s with hazards[s + 1] > hazards[from] + budget is found by a
 * branch-free bisection. A budget the first half's played steps leave unused carries over to the second
 * half (the rest of an exponential budget is again exponential): the search goes on from
 * SECOND_HALF_START with the rest and the same words. Hazards stay below 2^32 (a certain step costs 32
 * bits), so the sums do not wrap.
 */
fn find_next(side: u32, start: u32, first_end: u32, second_end: u32, draw: u32) {
  let row = cell_row[side] * HAZARD_ROW_WORDS;
  var from_step = start;
  if (from_step < SECOND_HALF_START && from_step >= first_end) {
    from_step = SECOND_HALF_START;
  }
  if (from_step >= second_end) {
    pending_step[side] = NO_EVENT_STEP;
    return;
  }
  let stream = STREAM_EVENT_BASE + side * STREAM_EVENT_SIDE_STRIDE + searches[side];
  searches[side] += 1u;
  let word = pcg4d(vec4<u32>(draw, stream, seed.x, seed.y));
  var target_hazard = event_table(row + from_step) + exponential_bits(word.x);
  if (from_step < SECOND_HALF_START && event_table(row + first_end) <= target_hazard) {
    target_hazard = target_hazard - event_table(row + first_end) + event_table(row + SECOND_HALF_START);
    from_step = SECOND_HALF_START;
  }
  let end = select(second_end, first_end, from_step < SECOND_HALF_START);
  if (event_table(row + end) <= target_hazard) {
    pending_step[side] = NO_EVENT_STEP;
    return;
  }
  var base = from_step;
  var length = end - from_step;
  while (length > 1u) {
    let half = length >> 1u;
    base = select(base, base + half, event_table(row + base + half) <= target_hazard);
    length -= half;
  }
  pending_step[side] = select(base + 1u, base, event_table(row + base + 1u) > target_hazard);
  pending_kind[side] = word.y;
  pending_pick[side] = word.z;
  pending_order[side] = word.w;
}

/**
 * A draw's events in step order (playEvents): the side whose pending event comes first adds its expected
 * shots up to and including the step, plays the event (bit 31 of the home side's order word breaks a
 * tie) and searches again; the opponent, if the event changed its cell, adds its expected shots under its
 * old cell up to the first step it has not played under that cell and searches again from there (bit 31
 * of this event's order word says whether its turn in this step came first). At the final whistle each
 * side's expected shots are finished. Returns the half-time score.
 */
fn play_events(draw: u32, first_end: u32, second_end: u32) -> vec2<i32> {
  searches[HOME] = 0u;
  searches[AWAY] = 0u;
  // 0 before a match; an in-play run's first step.
  let start = fx(FX_STATE_STEP);
  quiet_from[HOME] = start;
  quiet_from[AWAY] = start;
  find_next(HOME, start, first_end, second_end, draw);
  find_next(AWAY, start, first_end, second_end, draw);
  var half_time = vec2<i32>(-1, -1);
  // A run from the second half: its state's half-time score (halfTimeAtStart).
  if (fx(FX_STATE_IN_PLAY) != 0u && start >= SECOND_HALF_START) {
    half_time = vec2<i32>(i32(fx(FX_STATE_HALF_TIME_HOME)), i32(fx(FX_STATE_HALF_TIME_AWAY)));
  }
  // Each side plays at most one event per step, so a valid draw ends within 2 * STEPS events; the
  // bound makes malformed hazard tables end the draw too.
  for (var events = 0u; events < MAX_EVENTS_PER_DRAW; events++) {
    let home = pending_step[HOME];
    let away = pending_step[AWAY];
    var side = HOME;
    if (away < home) {
      side = AWAY;
    } else if (away == home) {
      if (home == NO_EVENT_STEP) {
        break;
      }
      side = pending_order[HOME] >> 31u;
    }
    let step = pending_step[side];
    if (half_time.x < 0 && step >= SECOND_HALF_START) {
      half_time = vec2<i32>(score[HOME], score[AWAY]);
    }
    let other = 1u - side;
    let other_row = cell_row[other];
    let at = EVENT_KINDS_AT + (cell_row[side] * STEPS + step) * EVENT_KIND_WORDS;
    let order = pending_order[side] >> 31u;
    add_expected_shots(side, cell_row[side], step + 1u, first_end);
    play_event(side, pending_kind[side], at, pending_pick[side], pending_order[side], step);
    quiet_from[side] = step + 1u;
    find_next(side, step + 1u, first_end, second_end, draw);
    if (cell_row[other] != other_row) {
      var from_step = max(step + order, quiet_from[other]);
      if (pending_step[other] == step) {
        from_step = step;
      }
      add_expected_shots(other, other_row, from_step, first_end);
      find_next(other, from_step, first_end, second_end, draw);
    }
  }
  finish_expected_shots(HOME, first_end, second_end);
  finish_expected_shots(AWAY, first_end, second_end);
  if (half_time.x < 0) {
    half_time = vec2<i32>(score[HOME], score[AWAY]);
  }
  return half_time;
}

/** At most one event per side and step (play_events). */
const MAX_EVENTS_PER_DRAW: u32 = 2u * STEPS + 2u;

/** One draw: set-up, its events in step order, tally (simulateDraws with playEvents). */
fn simulate_draw(draw: u32) {
  let added = set_up_draw(draw);
  let half_time = play_events(draw, FIRST_HALF_ADDED_START + added.x, SECOND_HALF_ADDED_START + added.y);
  tally_draw(half_time.x, half_time.y);
}

/** The packed run owning `workgroup`: the last one whose first workgroup is not after it. */
fn run_of(workgroup: u32) -> u32 {
  var low = 0u;
  var high = params.run_count - 1u;
  while (low < high) {
    let middle = (low + high + 1u) / 2u;
    if (runs[middle].first_workgroup <= workgroup) {
      low = middle;
    } else {
      high = middle - 1u;
    }
  }
  return low;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) workgroup_id: vec3<u32>,
  @builtin(num_workgroups) workgroup_grid: vec3<u32>,
  @builtin(local_invocation_index) local_index: u32,
) {
  // A 2-D grid past 65,535 workgroups per dimension; the last row may overhang.
  let workgroup = workgroup_id.y * workgroup_grid.x + workgroup_id.x;
  if (workgroup >= params.workgroup_count) {
    return;
  }
  let packed = runs[run_of(workgroup)];
  let draw_in_run = (workgroup - packed.first_workgroup) * WORKGROUP_SIZE + local_index;
  if (draw_in_run < packed.run.draw_count) {
    fixture_base = packed.fixture_offset;
    event_table_base = packed.event_table_offset;
    seed = vec2<u32>(packed.run.seed_lo, packed.run.seed_hi);
    simulate_draw(packed.run.first_draw + draw_in_run);
  }
  // Workgroup memory starts zeroed (WGSL guarantees it); flush once, skipping counters nobody touched.
  workgroupBarrier();
  for (var i = local_index; i < COUNTER_WORDS; i += WORKGROUP_SIZE) {
    let value = atomicLoad(&histogram[i]);
    if (value != 0u) {
      atomicAdd(&counters[packed.counter_offset + i], value);
    }
  }
}
