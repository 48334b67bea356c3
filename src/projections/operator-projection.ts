// A season projection for operators (`matchsim projection`, `POST /admin/v1/projections`): the API's
// projection of a competition (docs/api.md §4.12) run at once, without a caller, a hold or a charge, with
// the API's seed (docs/decisions.md §12), so the same inputs give the API's table.
import type { Sql } from '../db/connection.js';
import { readCompetitionSeason } from '../fixtures/competition-season.js';
import { buildProjectionContent, type ProjectionContent, samplerInput } from './projection-document.js';
import { projectionIdentity } from './projection-identity.js';
import { toStoredSeason } from './projection-store.js';
import { runSeasonsOnThread } from './season-runner.js';

/** The table as operators get it (`POST /admin/v1/projections`, `matchsim projection --json`). */
export type OperatorProjection = { object: 'projection_table' } & ProjectionContent;

export async function projectCompetition(
  sql: Sql,
  competitionId: number,
  seasons: number,
  now = new Date(),
): Promise<OperatorProjection> {
  const season = await readCompetitionSeason(sql, competitionId, now);
  const { seed } = projectionIdentity(toStoredSeason(season), seasons);
  const tally = await runSeasonsOnThread(samplerInput(season), seasons, seed);
  return { object: 'projection_table', ...buildProjectionContent(season, tally) };
}
