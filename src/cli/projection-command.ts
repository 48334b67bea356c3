// `matchsim projection --competition ID [--seasons N]`: a season projection for operators (docs/api.md
// §4.12), run in this process on the configured database, as the API's would be, without a caller or a
// charge, with the API's seed (the same inputs give the same table). The table it prints: each club's
// expected points and its title, zone and place odds.
import type { Database } from '../db/connection.js';
import { readCompetitionSeason } from '../fixtures/competition-season.js';
import {
  buildProjectionContent,
  type ProjectionContent,
  samplerInput,
} from '../projections/projection-document.js';
import { projectionIdentity } from '../projections/projection-identity.js';
import { toStoredSeason } from '../projections/projection-store.js';
import { runSeasonsOnThread } from '../projections/season-runner.js';
import { DEFAULT_SEASONS, MAX_SEASONS, MIN_SEASONS } from '../projections/types.js';

export class ProjectionArgumentError extends Error {}

export function seasonsArgument(value: string | undefined): number {
  if (value === undefined) return DEFAULT_SEASONS;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < MIN_SEASONS || n > MAX_SEASONS) {
    throw new ProjectionArgumentError(
      `--seasons must be a whole number from ${MIN_SEASONS} to ${MAX_SEASONS}`,
    );
  }
  return n;
}

export async function projectCompetition(
  db: Database,
  competitionId: number,
  seasons: number,
): Promise<ProjectionContent> {
  const season = await readCompetitionSeason(db.sql, competitionId, new Date());
  // Seeded as the API's (docs/decisions.md §12): the same inputs give the API's table.
  const inputs = toStoredSeason(season);
  const { seed } = projectionIdentity(inputs, seasons);
  const tally = await runSeasonsOnThread(samplerInput(season), seasons, seed);
  return buildProjectionContent(season, tally);
}

const percent = (p: number) => `${(100 * p).toFixed(1)}%`;

/** One row per club: the columns operators read first. */
export function projectionRows(content: ProjectionContent): Record<string, string | number>[] {
  return content.teams.map((team, index) => ({
    rank: index + 1,
    club: team.team.name,
    played: team.played,
    points: team.points,
    expected_points: team.expected_points.toFixed(1),
    ...Object.fromEntries(Object.entries(team.zones).map(([name, p]) => [name, percent(p)])),
  }));
}
