// A simulation for operators (`matchsim simulate`, `POST /admin/v1/simulations`): one fixture's current
// inputs with automatic lineups, optionally fitted to bookmaker odds or run from an in-play state, both read
// and checked as a request's are (docs/api.md §4.3), then run whole on a thread of its own
// (src/engine/operator-run.ts) with a fixed seed: no job, hold or charge, the same document either way.
import type { Sql } from '../db/connection.js';
import { marketFitOfInputs } from '../engine/compile.js';
import type { SimulationDocument } from '../engine/document-schema.js';
import { runOperatorSimulation } from '../engine/operator-run.js';
import type { FromState } from '../engine-contract/match-inputs.js';
import { defaultModelParams } from '../engine-contract/model-params.js';
import { ApiError } from '../errors.js';
import { hasInputs, loadFixtures } from '../fixtures/fixture-record.js';
import { resolveLineups } from '../fixtures/lineups.js';
import { buildMatchInputs } from '../fixtures/match-inputs.js';
import { checkMarketReachable, type MarketRequest, marketInputs } from '../simulations/market-request.js';
import { checkFromState } from '../simulations/state-request.js';

export interface SimulateArguments {
  fixtureId: number;
  draws: number;
  market?: MarketRequest;
  /** The in-play state to run from. */
  fromState?: FromState;
}

/** The draws of an operator's run when none are given. */
export const OPERATOR_DRAWS = 10_000;

/** The seed of every operator's run: the same inputs give the same document. */
const OPERATOR_SEED = '0000000000000053';

export async function operatorSimulation(sql: Sql, args: SimulateArguments): Promise<SimulationDocument> {
  const fixture = (await loadFixtures(sql, [args.fixtureId])).get(args.fixtureId);
  if (!fixture || !hasInputs(fixture)) {
    throw new ApiError('fixture_not_found', {
      param: 'fixture_id',
      message: `fixture ${args.fixtureId} has no inputs on this database`,
    });
  }
  const match = buildMatchInputs(fixture, resolveLineups(fixture, undefined).lineups);
  if (args.market) {
    const market = marketInputs(args.market, '');
    match.market = market;
    const fitted = { ...match, market };
    checkMarketReachable(fitted, marketFitOfInputs(fitted, defaultModelParams), '');
  }
  if (args.fromState) {
    match.from_state = args.fromState;
    checkFromState(match, fixture, defaultModelParams, '');
  }
  return runOperatorSimulation({
    match,
    params: defaultModelParams,
    draws: args.draws,
    seed: OPERATOR_SEED,
    basis: { as_of: fixture.inputsAsOf.toISOString(), data_version: fixture.dataVersion },
  });
}
