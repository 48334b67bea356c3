// POST /v1/simulations/path and its quote (docs/api.md §4.14): a match's win-probability path, the
// home/draw/away chances at the start of every minute from kick-off, each an in-play run from the state
// the events before it make (src/engine/compile-path.ts pathStates). The path is a batch of those runs,
// one item a minute named by it (custom_id), priced by its total draws and read as a batch is. Before
// anything is held its events are checked against the fixture in their own terms, and the state after
// each as a run's.
import type { Caller } from '../accounts/caller.js';
import { priceOfDrawsMilli, type QuoteTerms, quoteTerms } from '../billing/amounts.js';
import { type PathEvent, pathEventIssue, pathEventSteps, pathStates } from '../engine/compile-path.js';
import { stepOfMinute } from '../engine/compile-state.js';
import { SECOND_HALF_ADDED_START, STEPS } from '../engine-contract/layout.js';
import type { FromState } from '../engine-contract/match-inputs.js';
import { defaultModelParams } from '../engine-contract/model-params.js';
import { ApiError } from '../errors.js';
import type { CallContext } from '../jobs/call-context.js';
import type { Metadata } from '../jobs/types.js';
import { type PreparedRun, prepareRun } from './prepare-run.js';
import { fromStateIssues } from './state-request.js';
import { submitBatch } from './submit-batch.js';
import { DEFAULT_DRAWS, type FixtureSelector, type SimulationDeps } from './types.js';

export interface PathRequest extends Omit<FixtureSelector, 'from_state' | 'offered_odds'> {
  events: PathEvent[];
  /** The last minute of the path (default: 90, or the minute after the last event when later). */
  through?: string | undefined;
  /** Draws of each minute's run. */
  draws?: number | undefined;
  metadata?: Metadata | undefined;
}

/** A path read from its request: each event's step, the path's last step, and its states. */
interface PathPlan {
  steps: number[];
  lastStep: number;
  /** One a minute, from "1" to the last step. */
  states: FromState[];
}

const parameterInvalid = (issue: { path: string; message: string }) =>
  new ApiError('parameter_invalid', { param: issue.path, message: `\`${issue.path}\`: ${issue.message}.` });

/** 400 naming the event (`events.3`) and saying, in its terms, why it cannot have happened. */
function eventInvalid(events: readonly PathEvent[], index: number, why: string): ApiError {
  const { type, minute } = events[index]!;
  return new ApiError('parameter_invalid', {
    param: `events.${index}`,
    message: `\`events.${index}\` (${type} at ${minute}): ${why}.`,
  });
}

/** The path's minutes and states, or a 400 naming the field (an event's minute, `through`). */
function pathPlanOf(request: PathRequest): PathPlan {
  const steps = pathEventSteps(request.events);
  if (!Array.isArray(steps)) throw parameterInvalid(steps);
  let lastStep = Math.max(SECOND_HALF_ADDED_START - 1, ...steps.map((step) => Math.min(step + 1, STEPS - 1)));
  if (request.through !== undefined) {
    const through = stepOfMinute(request.through);
    if (through === null) {
      throw parameterInvalid({
        path: 'through',
        message:
          'a minute of the match as the timeline labels it ("1" to "90", "45+1" to "45+10", "90+1" to "90+10")',
      });
    }
    lastStep = through;
  }
  return { steps, lastStep, states: pathStates(request.events, steps, lastStep) };
}

/**
 * Checks the path against its fixture before anything is held, and prepares its first minute's run (for
 * the price: the fixture, the draws the caller's key runs, the data version). The fixture, lineups and any
 * market fit are the same for every minute, so they are prepared once (a market fit costs some 4 ms; a
 * quote that prepared each event's state as a run of its own cost 30 plain quotes with 60 events); then
 * the events, in the order of the match and in their own terms (compile-path.ts pathEventIssue), and the
 * state after each event as a run's from_state is checked (state-request.ts), naming the event.
 */
async function checkPath(
  deps: SimulationDeps,
  caller: Caller,
  request: PathRequest,
  plan: PathPlan,
): Promise<PreparedRun> {
  const { events: _events, through: _through, draws, metadata: _metadata, ...selector } = request;
  const run = await prepareRun(
    deps,
    caller,
    { ...selector, from_state: plan.states[0]! },
    draws ?? DEFAULT_DRAWS,
    '',
  );
  const { match } = run.payload;
  const final = run.fixture.state === 'finished' ? run.fixture.score : null;
  const { steps, lastStep, states } = plan;
  const maxSubstitutions = defaultModelParams.substitutions.max_per_side;
  const issue = pathEventIssue(request.events, steps, lastStep, match, maxSubstitutions, final);
  if (issue) throw eventInvalid(request.events, issue.index, issue.message);
  // What the state's own check still finds (a minute in added time the model never plays) is the
  // event's, the first in the order of the match: the state after an event is the one at the start of
  // the next minute.
  const checked = new Set<number>();
  const byStep = [...request.events.keys()].sort((a, b) => steps[a]! - steps[b]!);
  for (const index of byStep) {
    const at = Math.min(steps[index]! + 1, states.length - 1);
    if (checked.has(at)) continue;
    checked.add(at);
    const stateIssue = fromStateIssues(
      { ...match, from_state: states[at]! },
      run.fixture,
      defaultModelParams,
    )[0];
    if (stateIssue) {
      throw eventInvalid(request.events, index, `the match cannot go on from it: ${stateIssue.message}`);
    }
  }
  return run;
}

export interface PathQuote extends QuoteTerms {
  fixtureId: number;
  /** Runs of the path, one a minute. */
  steps: number;
  drawsPerStep: number;
}

export async function quotePath(
  deps: SimulationDeps,
  caller: Caller,
  request: PathRequest,
): Promise<PathQuote> {
  const plan = pathPlanOf(request);
  const first = await checkPath(deps, caller, request, plan);
  const draws = first.draws * plan.states.length;
  return {
    fixtureId: first.fixture.fixtureId,
    steps: plan.states.length,
    drawsPerStep: first.draws,
    ...quoteTerms(caller.livemode, priceOfDrawsMilli(draws), first.fixture.dataVersion),
  };
}

/** The path as a batch: one item a minute, `custom_id` its minute label. */
export async function submitPath(deps: SimulationDeps, ctx: CallContext, request: PathRequest) {
  const plan = pathPlanOf(request);
  if (!ctx.idempotency?.batchId) await checkPath(deps, ctx.caller, request, plan);
  const { events: _events, through: _through, draws, metadata, ...selector } = request;
  return submitBatch(deps, ctx, {
    fixtures: plan.states.map((from_state) => ({ ...selector, from_state, custom_id: from_state.minute })),
    draws: draws ?? DEFAULT_DRAWS,
    ...(metadata ? { metadata } : {}),
  });
}
