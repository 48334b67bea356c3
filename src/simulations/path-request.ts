// POST /v1/simulations/path and its quote (docs/api.md §4.14): a match's win-probability path, the
// home/draw/away chances at the start of every minute from kick-off, each an in-play run from the state
// the events before it make (src/engine/compile-path.ts pathStates). The path is a batch of those runs,
// one item a minute named by it (custom_id), priced by its total draws and read as a batch is; its
// states are checked as one request's before anything is held: the state after every event.
import type { Caller } from '../accounts/caller.js';
import { priceOfDrawsMilli, type QuoteTerms, quoteTerms } from '../billing/amounts.js';
import { type PathEvent, pathEventSteps, pathStates } from '../engine/compile-path.js';
import { stepOfMinute } from '../engine/compile-state.js';
import { SECOND_HALF_ADDED_START, STEPS } from '../engine-contract/layout.js';
import type { FromState } from '../engine-contract/match-inputs.js';
import { ApiError } from '../errors.js';
import type { CallContext } from '../jobs/call-context.js';
import type { Metadata } from '../jobs/types.js';
import { quote } from './quote.js';
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

/** The path's states, one a minute from "1" to `through`, or a 400 naming the field. */
export function pathStatesOf(request: PathRequest): FromState[] {
  const steps = pathEventSteps(request.events);
  if (!Array.isArray(steps)) {
    throw new ApiError('parameter_invalid', {
      param: steps.path,
      message: `\`${steps.path}\`: ${steps.message}.`,
    });
  }
  let last = Math.max(SECOND_HALF_ADDED_START - 1, ...steps.map((step) => Math.min(step + 1, STEPS - 1)));
  if (request.through !== undefined) {
    const through = stepOfMinute(request.through);
    if (through === null) {
      throw new ApiError('parameter_invalid', {
        param: 'through',
        message:
          '`through`: a minute of the match as the timeline labels it ("1" to "90", "45+1" to "45+10", "90+1" to "90+10").',
      });
    }
    last = through;
  }
  return pathStates(request.events, steps, last);
}

/**
 * Checks every state of the path against the fixture as one run's (prepareRun, through the quote): the
 * state after each event, in minute order, so an impossible event is named (`events.3`).
 */
async function checkPath(
  deps: SimulationDeps,
  caller: Caller,
  request: PathRequest,
  states: readonly FromState[],
): Promise<Awaited<ReturnType<typeof quote>>> {
  const selector = { ...request, events: undefined, through: undefined, metadata: undefined };
  const steps = pathEventSteps(request.events) as number[];
  const byStep = request.events.map((_, index) => index).sort((a, b) => steps[a]! - steps[b]!);
  // The state after an event is the one at the start of the next minute, or the last one.
  const checked = new Set<number>();
  for (const index of byStep) {
    const at = Math.min(steps[index]! + 1, states.length - 1);
    if (checked.has(at) || steps[index]! >= states.length) continue;
    checked.add(at);
    try {
      await quote(deps, caller, { ...selector, draws: request.draws, from_state: states[at]! });
    } catch (error) {
      if (error instanceof ApiError && error.options.param?.startsWith('from_state')) {
        throw new ApiError('parameter_invalid', {
          param: `events.${index}`,
          message: `\`events.${index}\` (${request.events[index]!.type} at ${request.events[index]!.minute}) makes an impossible state: ${error.message}`,
        });
      }
      throw error;
    }
  }
  return quote(deps, caller, { ...selector, draws: request.draws, from_state: states[0]! });
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
  const states = pathStatesOf(request);
  const single = await checkPath(deps, caller, request, states);
  const draws = single.draws * states.length;
  return {
    fixtureId: single.fixtureId,
    steps: states.length,
    drawsPerStep: single.draws,
    ...quoteTerms(caller.livemode, priceOfDrawsMilli(draws), single.dataVersion),
  };
}

/** The path as a batch: one item a minute, `custom_id` its minute label. */
export async function submitPath(deps: SimulationDeps, ctx: CallContext, request: PathRequest) {
  const states = pathStatesOf(request);
  if (!ctx.idempotency?.batchId) await checkPath(deps, ctx.caller, request, states);
  const { events: _events, through: _through, draws, metadata, ...selector } = request;
  return submitBatch(deps, ctx, {
    fixtures: states.map((from_state) => ({ ...selector, from_state, custom_id: from_state.minute })),
    draws: draws ?? DEFAULT_DRAWS,
    ...(metadata ? { metadata } : {}),
  });
}
