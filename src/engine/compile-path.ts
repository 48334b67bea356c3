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
import { type FromState, type MatchInputs, paramsForFixture } from '../engine-contract/match-inputs.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import { compileFixture } from './compile.js';
import { type AddedTimeModel, addedTimeModel } from './compile-rates.js';
import { compileState, stepOfMinute } from './compile-state.js';

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
  added: AddedTimeModel = addedTimeModel(paramsForFixture(params, inputs.profile)),
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
  const added = addedTimeModel(paramsForFixture(params, inputs.profile));
  return states.map((state) =>
    compileStateFrom(preMatch, { ...preMatchInputs, from_state: state }, params, undefined, added),
  );
}
