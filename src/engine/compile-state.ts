// An in-play state (match inputs' `from_state`, docs/model.md "In play") checked against its fixture and
// compiled into the fixture table's state block (src/engine-contract/layout.ts "In-play state block"):
// the step the run starts at, the score and red cards, and for a side with a known XI the players on the
// pitch (who came on, who is booked), its substitutes still to come and its starting XI's strength bucket.
// The domain asks stateIssues before it takes a run (400 naming the field); the compile asks it again and
// refuses a state with issues, so no engine ever starts from an impossible one.
import * as layout from '../engine-contract/layout.js';
import type { FromState, MatchInputs, SideInputs } from '../engine-contract/match-inputs.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import { fixedXiStrength, strengthBucketOf } from './compile-lineups.js';
import { type AddedTimeModel, probabilityThreshold } from './compile-rates.js';

/** A field of the request that makes a state impossible, and why (docs/api.md: 400 naming the field). */
export interface StateIssue {
  path: string;
  message: string;
}

/**
 * Law 3: a match is not continued with fewer than seven players a side, so a side has at most four red
 * cards in a state that is still being played.
 */
export const MAX_RED_CARDS = 4;

const SIDES = ['home', 'away'] as const;
type SideKey = (typeof SIDES)[number];

/**
 * The step a timeline label names ("1".."90", "45+1".."45+10", "90+1".."90+10"), or null. Only the label
 * as the timeline writes it: "45+01" or "07" would name the same step in other words, and a state's minute
 * is part of a run's inputs (its seed and cached result, src/simulations/prepare-run.ts), so one state
 * would have two seeds.
 */
export function stepOfMinute(minute: string): number | null {
  const match = /^([1-9]\d?)(?:\+([1-9]\d?))?$/.exec(minute);
  if (!match) return null;
  const regular = Number(match[1]);
  if (match[2] !== undefined) {
    const added = Number(match[2]);
    if (added < 1 || added > layout.MAX_ADDED_MINUTES) return null;
    if (regular === 45) return layout.FIRST_HALF_ADDED_START + added - 1;
    if (regular === 90) return layout.SECOND_HALF_ADDED_START + added - 1;
    return null;
  }
  if (regular < 1 || regular > 90) return null;
  return regular <= 45 ? regular - 1 : layout.SECOND_HALF_START + regular - 46;
}

/** Regular minutes played before the step (added time adds none). */
export function minutesPlayedBefore(step: number): number {
  if (step < layout.FIRST_HALF_ADDED_START) return step;
  if (step < layout.SECOND_HALF_START) return 45;
  if (step < layout.SECOND_HALF_ADDED_START) return 45 + step - layout.SECOND_HALF_START;
  return 90;
}

/** A side with a known XI in a state: its players on the pitch in pitch-list order, and the facts beside them. */
interface SidePitch {
  pitch: number[];
  cameOn: Set<number>;
  booked: Set<number>;
}

/** The players on the pitch of a side with a known XI, or the issues that make its state impossible. */
function sidePitch(
  key: SideKey,
  side: SideInputs,
  state: FromState,
  maxSubstitutions: number,
  issues: StateIssue[],
): SidePitch {
  const squad = new Set(side.players.map((player) => player.player_id));
  const pitch = [...side.lineup.xi];
  const appeared = new Set(pitch);
  const cameOn = new Set<number>();
  const substitutions = state.substitutions?.[key] ?? [];
  if (substitutions.length > maxSubstitutions) {
    issues.push({
      path: `from_state.substitutions.${key}`,
      message: `at most ${maxSubstitutions} substitutions a side`,
    });
  }
  substitutions.forEach(({ off, on }, i) => {
    const at = pitch.indexOf(off);
    if (at < 0) {
      issues.push({
        path: `from_state.substitutions.${key}.${i}.off`,
        message: `player ${off} is not on the pitch when substitution ${i + 1} is made`,
      });
      return;
    }
    if (!squad.has(on)) {
      issues.push({
        path: `from_state.substitutions.${key}.${i}.on`,
        message: `player ${on} is not in the ${key} squad`,
      });
      return;
    }
    if (appeared.has(on)) {
      issues.push({
        path: `from_state.substitutions.${key}.${i}.on`,
        message: `player ${on} has already played in this match`,
      });
      return;
    }
    pitch[at] = on;
    appeared.add(on);
    cameOn.add(on);
  });
  const sentOff = new Set<number>();
  for (const [i, id] of (state.sent_off?.[key] ?? []).entries()) {
    const at = pitch.indexOf(id);
    if (at < 0) {
      issues.push({
        path: `from_state.sent_off.${key}.${i}`,
        message: sentOff.has(id) ? `player ${id} is already sent off` : `player ${id} is not on the pitch`,
      });
      continue;
    }
    sentOff.add(id);
    // The last player on the list fills the hole, as the engines remove a player sent off.
    pitch[at] = pitch[pitch.length - 1]!;
    pitch.pop();
  }
  const booked = new Set<number>();
  const listed = new Set<number>();
  for (const [i, id] of (state.booked?.[key] ?? []).entries()) {
    if (!appeared.has(id)) {
      issues.push({
        path: `from_state.booked.${key}.${i}`,
        message: `player ${id} has not played in this match`,
      });
    } else if (listed.has(id)) {
      // Two yellow cards are a red one: such a player is in sent_off, not on a yellow card twice.
      issues.push({
        path: `from_state.booked.${key}.${i}`,
        message: `player ${id} is listed twice: a second yellow card is a red card (sent_off)`,
      });
    } else if (pitch.includes(id)) booked.add(id);
    listed.add(id);
  }
  return { pitch, cameOn, booked };
}

/** Red cards of each side: as given, or the players named as sent off. */
function redCardsOf(state: FromState, key: SideKey): number {
  return state.red_cards?.[key] ?? state.sent_off?.[key]?.length ?? 0;
}

/**
 * What makes the inputs' state impossible, each with the request field it lies in (empty: a state the
 * engines can start from). `added` is the fixture's added-time model: a minute in added time needs that
 * much added time to be possible.
 */
export function stateIssues(inputs: MatchInputs, params: ModelParams, added: AddedTimeModel): StateIssue[] {
  const state = inputs.from_state;
  if (!state) return [];
  const issues: StateIssue[] = [];
  const step = stepOfMinute(state.minute);
  if (step === null) {
    issues.push({
      path: 'from_state.minute',
      message:
        'a minute of the match as the timeline labels it: "1" to "90", "45+1" to "45+10", "90+1" to "90+10"',
    });
  } else if (added.stepPlayed[step]! <= 0) {
    issues.push({ path: 'from_state.minute', message: 'the model gives this much added time no chance' });
  }
  if (state.half_time) {
    if (step !== null && step < layout.SECOND_HALF_START) {
      issues.push({
        path: 'from_state.half_time',
        message: 'a half-time score goes with a minute in the second half',
      });
    }
    for (const key of SIDES) {
      if (state.half_time[key] > state.score[key]) {
        issues.push({
          path: `from_state.half_time.${key}`,
          message: 'more goals at half time than in the score',
        });
      }
    }
  }
  for (const key of SIDES) {
    const side = inputs[key];
    const named =
      (state.sent_off?.[key]?.length ?? 0) +
      (state.substitutions?.[key]?.length ?? 0) +
      (state.booked?.[key]?.length ?? 0);
    const reds = redCardsOf(state, key);
    if (reds > MAX_RED_CARDS) {
      issues.push({
        path: `from_state.red_cards.${key}`,
        message: `at most ${MAX_RED_CARDS} red cards a side: below seven players a match is abandoned`,
      });
    }
    if ((state.sent_off?.[key]?.length ?? 0) > reds) {
      issues.push({
        path: `from_state.sent_off.${key}`,
        message: 'more players sent off than red cards',
      });
    }
    if (side.lineup.source === 'predicted') {
      if (named > 0) {
        issues.push({
          path: `from_state.${firstNamedField(state, key)}.${key}`,
          message: "naming players needs the side's XI (an announced or custom lineup)",
        });
      }
      continue;
    }
    sidePitch(key, side, state, params.substitutions.max_per_side, issues);
  }
  return issues;
}

function firstNamedField(state: FromState, key: SideKey): string {
  if (state.sent_off?.[key]?.length) return 'sent_off';
  if (state.substitutions?.[key]?.length) return 'substitutions';
  return 'booked';
}

/**
 * Writes the state block of `inputs.from_state` (checked: stateIssues is empty) into a fixture table whose
 * sides are compiled, and conditions the added time of the state's half on the state's step being played.
 */
export function compileState(
  fixture: Uint32Array,
  inputs: MatchInputs,
  params: ModelParams,
  added: AddedTimeModel,
): void {
  const state = inputs.from_state;
  if (!state) return;
  const issues = stateIssues(inputs, params, added);
  if (issues.length > 0) throw new RangeError(`from_state: ${issues[0]!.path}: ${issues[0]!.message}`);
  const step = stepOfMinute(state.minute)!;
  fixture[layout.FX_STATE_IN_PLAY] = 1;
  fixture[layout.FX_STATE_STEP] = step;
  fixture[layout.FX_STATE_MINUTES_PLAYED] = minutesPlayedBefore(step);
  if (step >= layout.SECOND_HALF_START) {
    const halfTime = state.half_time ?? state.score;
    fixture[layout.FX_STATE_HALF_TIME_HOME] = halfTime.home;
    fixture[layout.FX_STATE_HALF_TIME_AWAY] = halfTime.away;
  }
  if (step >= layout.FIRST_HALF_ADDED_START && step < layout.SECOND_HALF_START) {
    conditionAddedTime(
      fixture,
      layout.FX_ADDED_TIME_FIRST,
      added.firstCumulative,
      step - layout.FIRST_HALF_ADDED_START + 1,
    );
  } else if (step >= layout.SECOND_HALF_ADDED_START) {
    conditionAddedTime(
      fixture,
      layout.FX_ADDED_TIME_SECOND,
      added.secondCumulative,
      step - layout.SECOND_HALF_ADDED_START + 1,
    );
  }
  for (const [index, key] of SIDES.entries()) {
    const at = layout.stateBase(index);
    fixture[at + layout.ST_GOALS] = state.score[key];
    fixture[at + layout.ST_SENT_OFF] = redCardsOf(state, key);
    const side = inputs[key];
    if (side.lineup.source === 'predicted') continue;
    const base = layout.sideBase(index);
    const slotOf = new Map(side.players.map((player, slot) => [player.player_id, slot]));
    const { pitch, cameOn, booked } = sidePitch(key, side, state, params.substitutions.max_per_side, []);
    fixture[base + layout.S_LINEUP_MODE] = layout.LINEUP_MODE_STATE;
    fixture[at + layout.ST_SUBSTITUTIONS] = cameOn.size;
    fixture[at + layout.ST_STRENGTH] = strengthBucketOf(fixture, base, fixedXiStrength(fixture, base));
    fixture[at + layout.ST_PITCH_COUNT] = pitch.length;
    pitch.forEach((id, i) => {
      fixture[at + layout.ST_PITCH + i] =
        slotOf.get(id)! |
        (booked.has(id) ? layout.STATE_PITCH_BOOKED : 0) |
        (cameOn.has(id) ? layout.STATE_PITCH_CAME_ON : 0);
    });
    // The substitutes come on in the bench's order, goalkeepers left out (the engines' listSubstitutes),
    // after the players who already came on, whom the substitutions made index past.
    const bench = [...cameOn].map((id) => slotOf.get(id)!);
    for (let next = 0; next < fixture[base + layout.S_BENCH_COUNT]!; next++) {
      const slot = fixture[base + layout.S_BENCH_ORDER + next]!;
      if (fixture[base + layout.S_IS_KEEPER + slot] === 1 || bench.includes(slot)) continue;
      bench.push(slot);
    }
    const length = Math.min(bench.length, layout.STATE_BENCH_SLOTS);
    fixture[at + layout.ST_BENCH_LENGTH] = length;
    for (let i = 0; i < length; i++) fixture[at + layout.ST_BENCH + i] = bench[i]!;
  }
}

/** The half's added-time thresholds given at least `atLeast` added minutes: P(added <= k | added >= atLeast). */
function conditionAddedTime(
  fixture: Uint32Array,
  at: number,
  cumulative: readonly number[],
  atLeast: number,
): void {
  const below = cumulative[atLeast - 1]!;
  for (let k = 0; k < layout.MAX_ADDED_MINUTES; k++) {
    fixture[at + k] = k < atLeast ? 0 : probabilityThreshold((cumulative[k]! - below) / (1 - below));
  }
}
