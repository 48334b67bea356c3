// `matchsim projection --competition ID [--seasons N]`: its arguments and the table it prints (each club's
// expected points and its title, zone and place odds) of src/projections/operator-projection.ts's
// projection, run on the configured database or through the running service's admin API.
import type { ProjectionContent } from '../projections/projection-document.js';
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
