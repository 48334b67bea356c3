// POST /v1/simulations/quote (docs/api.md §4.4): the exact price of a run, its scope and its
// normalised lineups; nothing is reserved.
import type { Caller } from '../accounts/caller.js';
import { priceOfDrawsMilli, type QuoteTerms, quoteTerms } from '../billing/amounts.js';
import type { ResolvedLineups } from '../fixtures/lineups.js';
import { prepareRun, type RunWarning } from './prepare-run.js';
import { DEFAULT_DRAWS, type SimulationDeps, type SimulationRequest } from './types.js';

export interface Quote extends QuoteTerms {
  fixtureId: number;
  draws: number;
  scope: ResolvedLineups['scope'];
  inputs: ResolvedLineups['inputs'];
  warnings: RunWarning[];
}

export async function quote(
  deps: SimulationDeps,
  caller: Caller,
  request: SimulationRequest,
): Promise<Quote> {
  const run = await prepareRun(deps, caller, request, request.draws ?? DEFAULT_DRAWS, '');
  return {
    fixtureId: run.fixture.fixtureId,
    draws: run.draws,
    scope: run.resolved.scope,
    inputs: run.resolved.inputs,
    warnings: run.warnings,
    ...quoteTerms(caller.livemode, priceOfDrawsMilli(run.draws), run.fixture.dataVersion),
  };
}
