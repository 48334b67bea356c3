// The win-probability path of a match (docs/model.md "In play"): from its events so far, the in-play state
// at the start of every step, and one compile for all of them. The rates, threshold and event tables of a
// fixture do not depend on its state, so the path compiles them once and gives each step its own fixture
// table (a copy with that step's state block, src/engine/compile-state.ts), which shares the threshold
// table and so the event tables (eventTablesOf finds them by it). The job threads make an in-play job's
// tables the same way from their cached pre-match compile (compileStateFrom, src/engine/job-work.ts).
import {
  type CompiledFixture,
  FIXTURE_WORDS,
  minuteLabel,
  SECOND_HALF_START,
} from '../engine-contract/layout.js';
import {
  type FromState,
  type MatchInputs,
  paramsForFixture,
  type SideInputs,
} from '../engine-contract/match-inputs.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import { addedTimeOf, compileFixture } from './compile.js';
import type { AddedTimeModel } from './compile-rates.js';
import { compileState, MAX_RED_CARDS, stepOfMinute } from './compile-state.js';

export const PATH_EVENT_TYPES = ['goal', 'red_card', 'yellow_card', 'substitution'] as const;

/** A match event as a path takes it: minute as the timeline labels it; players by player_id. */
export interface PathEvent {
  minute: string;
  type: (typeof PATH_EVENT_TYPES)[number];
  team: 'home' | 'away';
  /** The scorer, the player booked or sent off, the substitute coming on (optional but for substitutions). */
  player_id?: number | undefined;
  /** A substitution's player going off. */
  player_off_id?: number | undefined;
}

/** An event the path cannot place, with its field (`events.3.minute`, ...). */
export interface PathEventIssue {
  path: string;
  message: string;
}

/** The step of each event, or the first issue (an unknown minute, a substitution without its players). */
export function pathEventSteps(events: readonly PathEvent[]): number[] | PathEventIssue {
  const steps: number[] = [];
  for (const [i, event] of events.entries()) {
    const step = stepOfMinute(event.minute);
    if (step === null) return { path: `events.${i}.minute`, message: 'not a minute of the timeline' };
    if (
      event.type === 'substitution' &&
      (event.player_id === undefined || event.player_off_id === undefined)
    ) {
      return { path: `events.${i}`, message: 'a substitution names player_id (on) and player_off_id (off)' };
    }
    steps.push(step);
  }
  return steps;
}

/** A side as the events so far leave it, where its XI is known: who is on the pitch, and how others left. */
interface SideOnPitch {
  squad: Set<number>;
  onPitch: Set<number>;
  appeared: Set<number>;
  /** Players who left the pitch: sent off or substituted, and the index of the event that made them go. */
  left: Map<number, { how: 'sent off' | 'substituted'; event: number }>;
  yellows: Map<number, number>;
  substitutions: number;
}

function sideOnPitch(side: SideInputs): SideOnPitch {
  return {
    squad: new Set(side.players.map((player) => player.player_id)),
    onPitch: new Set(side.lineup.xi),
    appeared: new Set(side.lineup.xi),
    left: new Map(),
    yellows: new Map(),
    substitutions: 0,
  };
}

/** Why `player` cannot play a part in an event now, in the event's words; null when he is on the pitch. */
function offPitchReason(side: SideOnPitch, team: string, player: number, events: readonly PathEvent[]) {
  if (side.onPitch.has(player)) return null;
  if (!side.squad.has(player)) return `player ${player} is not in the ${team} squad`;
  const left = side.left.get(player);
  if (left) return `player ${player} was ${left.how} at ${events[left.event]!.minute} (events.${left.event})`;
  return `player ${player} is on the bench and has not come on`;
}

/**
 * The first event, in the order of the match, that cannot have happened, said in the event's own terms
 * (docs/api.md §4.14): an event after `lastStep`; a goal or card for a player who is not on the pitch (on
 * the bench, substituted, sent off: a third yellow card is a card for a player sent off at his second); a
 * substitution of a player who is not on the pitch, or of one who already played, or one too many; a red
 * card past MAX_RED_CARDS; goals past a finished fixture's `final` score; players named for a side whose
 * XI is not known. The event's index and why; null when every event can have happened. `steps` are
 * pathEventSteps'.
 */
export function pathEventIssue(
  events: readonly PathEvent[],
  steps: readonly number[],
  lastStep: number,
  match: Pick<MatchInputs, 'home' | 'away'>,
  maxSubstitutions: number,
  final: { home: number; away: number } | null,
): { index: number; message: string } | null {
  const order = events.map((_, i) => i).sort((a, b) => steps[a]! - steps[b]!);
  const sides = {
    home: match.home.lineup.source === 'predicted' ? null : sideOnPitch(match.home),
    away: match.away.lineup.source === 'predicted' ? null : sideOnPitch(match.away),
  };
  const goals = { home: 0, away: 0 };
  const redCards = { home: 0, away: 0 };
  for (const i of order) {
    const event = events[i]!;
    const issue = (message: string) => ({ index: i, message });
    if (steps[i]! > lastStep)
      return issue(`after \`through\` (${minuteLabel(lastStep)}), where the path ends`);
    const team = event.team;
    const side = sides[team];
    if (event.type === 'goal' && final && ++goals[team] > final[team]) {
      return issue(
        `the fixture finished ${final.home}-${final.away}: more goals than the ${team} side scored`,
      );
    }
    if (event.type === 'goal' && event.player_id === undefined) continue;
    if (!side) {
      // A predicted XI is drawn per draw: a scorer can be checked against the squad only.
      if (event.type === 'goal') {
        if (match[team].players.some((player) => player.player_id === event.player_id)) continue;
        return issue(`player ${event.player_id} is not in the ${team} squad`);
      }
      if (event.type === 'red_card' && event.player_id === undefined) {
        if (++redCards[team] > MAX_RED_CARDS) return issue(tooManyRedCards);
        continue;
      }
      if (event.player_id === undefined) continue;
      return issue(`naming a player needs the ${team} side's XI (an announced or custom lineup)`);
    }
    const reason = eventOnSide(event, i, side, team, events, maxSubstitutions);
    if (reason) return issue(reason);
    if (
      event.type === 'red_card' ||
      (event.type === 'yellow_card' && side.yellows.get(event.player_id!) === 2)
    ) {
      if (++redCards[team] > MAX_RED_CARDS) return issue(tooManyRedCards);
    }
  }
  return null;
}

const tooManyRedCards = `more than ${MAX_RED_CARDS} red cards for the side: below seven players a match is abandoned`;

/**
 * Why `event` (the `index`th) cannot have happened to a side with a known XI, or null; when it can, the
 * side is moved past it (who is on the pitch, booked, sent off).
 */
function eventOnSide(
  event: PathEvent,
  index: number,
  side: SideOnPitch,
  team: string,
  events: readonly PathEvent[],
  maxSubstitutions: number,
): string | null {
  const player = event.player_id;
  if (event.type === 'substitution') {
    const off = event.player_off_id!;
    const offReason = offPitchReason(side, team, off, events);
    if (offReason) return `${offReason}, so cannot go off`;
    if (!side.squad.has(player!)) return `player ${player} is not in the ${team} squad`;
    if (side.appeared.has(player!)) return `player ${player} has already played in this match`;
    if (++side.substitutions > maxSubstitutions) return `more than ${maxSubstitutions} substitutions a side`;
    side.onPitch.delete(off);
    side.left.set(off, { how: 'substituted', event: index });
    side.onPitch.add(player!);
    side.appeared.add(player!);
    return null;
  }
  if (player === undefined) return null;
  if (event.type === 'yellow_card' && side.yellows.get(player) === 2) {
    const second = side.left.get(player)!.event;
    return `a third yellow card for player ${player}, sent off at his second (events.${second})`;
  }
  const reason = offPitchReason(side, team, player, events);
  if (reason) return reason;
  if (event.type === 'goal') return null;
  const yellows = (side.yellows.get(player) ?? 0) + (event.type === 'yellow_card' ? 1 : 0);
  side.yellows.set(player, yellows);
  if (event.type === 'red_card' || yellows === 2) {
    side.onPitch.delete(player);
    side.left.set(player, { how: 'sent off', event: index });
  }
  return null;
}

/**
 * The state at the start of each step from 0 to `lastStep`: the events of the steps before it (a player's
 * second yellow card is his red card; a red card without a player counts for the side).
 */
export function pathStates(
  events: readonly PathEvent[],
  steps: readonly number[],
  lastStep: number,
): FromState[] {
  const order = events.map((event, i) => ({ event, step: steps[i]! })).sort((a, b) => a.step - b.step);
  const states: FromState[] = [];
  let next = 0;
  let halfTime: { home: number; away: number } | null = null;
  const state = {
    score: { home: 0, away: 0 },
    red_cards: { home: 0, away: 0 },
    sent_off: { home: [] as number[], away: [] as number[] },
    substitutions: { home: [] as { off: number; on: number }[], away: [] as { off: number; on: number }[] },
    booked: { home: [] as number[], away: [] as number[] },
  };
  for (let step = 0; step <= lastStep; step++) {
    while (next < order.length && order[next]!.step < step) {
      const { event } = order[next++]!;
      const side = event.team;
      const player = event.player_id;
      if (event.type === 'goal') state.score[side]++;
      else if (event.type === 'substitution')
        state.substitutions[side].push({ off: event.player_off_id!, on: player! });
      else if (event.type === 'red_card' || state.booked[side].includes(player!)) {
        state.red_cards[side]++;
        if (player !== undefined) {
          state.sent_off[side].push(player);
          state.booked[side] = state.booked[side].filter((id) => id !== player);
        }
      } else if (player !== undefined) state.booked[side].push(player);
    }
    // From the second half on, the goals of the first are the half-time score.
    if (step === SECOND_HALF_START) halfTime = { ...state.score };
    states.push({
      minute: minuteLabel(step),
      score: { ...state.score },
      red_cards: { ...state.red_cards },
      sent_off: { home: [...state.sent_off.home], away: [...state.sent_off.away] },
      substitutions: { home: [...state.substitutions.home], away: [...state.substitutions.away] },
      booked: { home: [...state.booked.home], away: [...state.booked.away] },
      ...(halfTime ? { half_time: { ...halfTime } } : {}),
    });
  }
  return states;
}

/**
 * The compiled fixture of `inputs` (which carry a from_state) made from the compile of the same inputs
 * before the match (`preMatch`): a copy of its fixture table with the state's block written into
 * `fixture`, the threshold and event tables and everything else its own. The same tables as
 * compileFixture of `inputs`: the rates, thresholds, event tables and any market fit of a fixture do
 * not depend on its state (compile.ts writes the state block last). Throws as compileState does on an
 * impossible state. `added`: the fixture's added-time model, when the caller has it.
 */
export function compileStateFrom<T extends CompiledFixture>(
  preMatch: T,
  inputs: MatchInputs,
  params: ModelParams,
  fixture: Uint32Array = new Uint32Array(FIXTURE_WORDS),
  added: AddedTimeModel = addedTimeOf(paramsForFixture(params, inputs.profile)),
): T {
  fixture.set(preMatch.fixture);
  compileState(fixture, inputs, paramsForFixture(params, inputs.profile), added);
  return { ...preMatch, fixture };
}

/**
 * One compile for the states of a path: the fixture compiled once (without a state), then per state
 * compileStateFrom. Throws as compileState does on an impossible state.
 */
export function compilePath(
  inputs: MatchInputs,
  params: ModelParams,
  states: readonly FromState[],
): CompiledFixture[] {
  const { from_state: _ignored, ...preMatchInputs } = inputs;
  const { marketFit: _fit, ...preMatch } = compileFixture(preMatchInputs, params);
  const added = addedTimeOf(paramsForFixture(params, inputs.profile));
  return states.map((state) =>
    compileStateFrom(preMatch, { ...preMatchInputs, from_state: state }, params, undefined, added),
  );
}
