// POST /v1/simulations/quote (docs/api.md §4.4): the exact price of a run, its scope and its
// normalised lineups; nothing is reserved.
import type { Caller } from '../accounts/caller.js';
import { priceOfDrawsMilli } from '../billing/amounts.js';
import type { ResolvedLineups } from '../fixtures/lineups.js';
import { prepareRun } from './prepare-run.js';
import { DEFAULT_DRAWS, RATE_CARD, type SimulationDeps, type SimulationRequest } from './types.js';

export interface Quote {
  fixtureId: number;
  draws: number;
  /** Zero for test keys. */
  priceMilli: number;
  rateCard: string;
  livemode: boolean;
  scope: ResolvedLineups['scope'];
  inputs: ResolvedLineups['inputs'];
  warnings: ResolvedLineups['warnings'];
  dataVersion: string;
}

export async function quote(
  deps: SimulationDeps,
  caller: Caller,
  request: SimulationRequest,
): Promise<Quote> {
  const draws = request.draws ?? DEFAULT_DRAWS;
  const run = await prepareRun(deps, caller, request, draws, '');
  return {
    fixtureId: run.fixture.fixtureId,
    draws,
    priceMilli: caller.livemode ? priceOfDrawsMilli(draws) : 0,
    rateCard: RATE_CARD,
    livemode: caller.livemode,
    scope: run.resolved.scope,
    inputs: run.resolved.inputs,
    warnings: run.resolved.warnings,
    dataVersion: run.fixture.dataVersion,
  };
}
