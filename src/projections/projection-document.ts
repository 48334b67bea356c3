// A season projection's content (docs/api.md §2.10): what a finished projection job stores, built from
// the sampler's tally and the competition's season as it was read at submission. A delivery adds its own
// facts (id, credits, receipt) around it (src/http/views/projections.ts).
import type { CompetitionSeason } from '../fixtures/competition-season.js';
import { projectionModel } from './projection-model.js';
import { playedTable, type SeasonTally } from './season-sampler.js';

export interface ProjectionTeam {
  team: { team_id: number; name: string };
  played: number;
  points: number;
  goals_for: number;
  goals_against: number;
  goal_difference: number;
  expected_points: number;
  expected_goal_difference: number;
  /** positions[place]: the probability of finishing in that place (0 = first). */
  positions: number[];
  title: number;
  zones: Record<string, number>;
  standard_error: { expected_points: number; title: number };
}

export interface ProjectionContent {
  competition: { competition_id: number; name: string; country: string; season: string };
  as_of: string | null;
  data_version: string;
  seasons: number;
  played_fixtures: number;
  remaining_fixtures: number;
  model: {
    version: string;
    sampler: string;
    strength_sd: number;
    backtest: (typeof projectionModel)['backtest'];
  };
  rules: { points: { win: number; draw: number }; tie_breakers: string[] };
  zones: { name: string; from: number; to: number }[];
  teams: ProjectionTeam[];
}

/** The sampler's input for a season: its clubs, results, remaining fixtures and rules. */
export function samplerInput(season: CompetitionSeason, strengthSd = projectionModel.strength_sd) {
  return {
    clubs: season.clubs.length,
    played: season.played,
    remaining: season.remaining,
    rules: {
      win: season.rules.points.win,
      draw: season.rules.points.draw,
      tieBreakers: season.rules.tieBreakers,
    },
    strengthSd,
  };
}

export function buildProjectionContent(season: CompetitionSeason, tally: SeasonTally): ProjectionContent {
  const n = season.clubs.length;
  const input = samplerInput(season);
  const table = playedTable(input);
  const games = new Array<number>(n).fill(0);
  for (const f of season.played) {
    games[f.home]! += 1;
    games[f.away]! += 1;
  }
  const seasons = tally.seasons;
  const teams = season.clubs.map((club, c): ProjectionTeam => {
    const positions = Array.from({ length: n }, (_, place) => tally.positions[c * n + place]! / seasons);
    const mean = tally.pointsSum[c]! / seasons;
    const variance = Math.max(0, tally.pointsSquares[c]! / seasons - mean * mean);
    const title = positions[0] ?? 0;
    const goalsFor = table.goalsFor[c]!;
    const goalsAgainst = table.goalsAgainst[c]!;
    return {
      team: { team_id: club.teamId, name: club.name },
      played: games[c]!,
      points: table.points[c]!,
      goals_for: goalsFor,
      goals_against: goalsAgainst,
      goal_difference: goalsFor - goalsAgainst,
      expected_points: mean,
      expected_goal_difference: tally.goalDifferenceSum[c]! / seasons,
      positions,
      title,
      zones: Object.fromEntries(
        season.rules.zones.map((zone) => [zone.name, sumPlaces(positions, zone.from, zone.to)]),
      ),
      standard_error: {
        expected_points: Math.sqrt(variance / seasons),
        title: Math.sqrt((title * (1 - title)) / seasons),
      },
    };
  });
  teams.sort((a, b) => b.expected_points - a.expected_points || a.team.team_id - b.team.team_id);
  return {
    competition: {
      competition_id: season.competition.competitionId,
      name: season.competition.name,
      country: season.competition.country,
      season: season.competition.season,
    },
    as_of: season.asOf ? season.asOf.toISOString() : null,
    data_version: season.dataVersion,
    seasons,
    played_fixtures: season.played.length,
    remaining_fixtures: season.remaining.length,
    model: {
      version: projectionModel.version,
      sampler: projectionModel.sampler,
      strength_sd: projectionModel.strength_sd,
      backtest: projectionModel.backtest,
    },
    rules: { points: season.rules.points, tie_breakers: season.rules.tieBreakers },
    zones: season.rules.zones,
    teams,
  };
}

/** The probability of a place from `from` to `to` (counted from 1). */
function sumPlaces(positions: number[], from: number, to: number): number {
  let sum = 0;
  for (let place = from; place <= to; place++) sum += positions[place - 1] ?? 0;
  return sum;
}
