// POST /v1/projections/quote (docs/api.md §4.12): the exact price of a projection; nothing is reserved.
import type { Caller } from '../accounts/caller.js';
import { priceOfProjectionMilli, type QuoteTerms, quoteTerms } from '../billing/amounts.js';
import { databaseRead } from '../db/transactions.js';
import { type CompetitionSeason, readCompetitionSeason } from '../fixtures/competition-season.js';
import {
  DEFAULT_SEASONS,
  type ProjectionDeps,
  type ProjectionRequest,
  TEST_KEY_MAX_SEASONS,
} from './types.js';

export interface ProjectionQuote extends QuoteTerms {
  competitionId: number;
  seasons: number;
  remainingFixtures: number;
}

/** The season to project and its price for this caller. */
export async function preparedProjection(deps: ProjectionDeps, caller: Caller, request: ProjectionRequest) {
  const season: CompetitionSeason = await databaseRead(() =>
    readCompetitionSeason(deps.sql, request.competition_id, deps.clock()),
  );
  const asked = request.seasons ?? DEFAULT_SEASONS;
  const seasons = caller.livemode ? asked : Math.min(asked, TEST_KEY_MAX_SEASONS);
  const priceMilli = caller.livemode ? priceOfProjectionMilli(seasons, season.remaining.length) : 0;
  return { season, seasons, priceMilli };
}

export async function quoteProjection(
  deps: ProjectionDeps,
  caller: Caller,
  request: ProjectionRequest,
): Promise<ProjectionQuote> {
  const { season, seasons, priceMilli } = await preparedProjection(deps, caller, request);
  return {
    competitionId: season.competition.competitionId,
    seasons,
    remainingFixtures: season.remaining.length,
    ...quoteTerms(caller.livemode, priceMilli, season.dataVersion),
  };
}
