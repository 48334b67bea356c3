// POST /v1/simulations/quote (docs/api.md §4.4): the exact price of a run, its scope and its
// normalised lineups; nothing is reserved.
import type { Caller } from '../accounts/caller.js';
import { priceOfDrawsMilli, RATE_CARD } from '../billing/amounts.js';
import type { ResolvedLineups } from '../fixtures/lineups.js';
import { prepareRun, type RunWarning } from './prepare-run.js';
import { DEFAULT_DRAWS, type SimulationDeps, type SimulationRequest } from './types.js';

export interface Quote {
  fixtureId: number;
  draws: number;
  /** Zero for test keys. */
  priceMilli: number;
  rateCard: string;
  livemode: boolean;
  scope: ResolvedLineups['scope'];
  inputs: ResolvedLineups['inputs'];
  warnings: RunWarning[];
  dataVersion: string;
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
    priceMilli: caller.livemode ? priceOfDrawsMilli(run.draws) : 0,
    rateCard: RATE_CARD,
    livemode: caller.livemode,
    scope: run.resolved.scope,
    inputs: run.resolved.inputs,
    warnings: run.warnings,
    dataVersion: run.fixture.dataVersion,
  };
}
