// Plausible fictional fixtures for engine tests, benchmarks and `matchsim gpu-check`: squads shaped like
// a top-flight club's (3 goalkeepers, 8 defenders, 8 midfielders, 6 attackers) with ratings spread like
// a European league.
import type { MatchInputs, PlayerProfile, SideInputs } from '../../engine-contract/match-inputs.js';

const LINES = [
  {
    position: 'goalkeeper',
    count: 3,
    start: [0.92, 0.06, 0.02],
    goal: 0,
    assist: 0.002,
    shot: 0.001,
    card: 0.2,
  },
  {
    position: 'defender',
    count: 8,
    start: [0.9, 0.85, 0.8, 0.75, 0.35, 0.2, 0.1, 0.05],
    goal: 0.025,
    assist: 0.04,
    shot: 0.05,
    card: 1.2,
  },
  {
    position: 'midfielder',
    count: 8,
    start: [0.9, 0.85, 0.75, 0.6, 0.4, 0.25, 0.15, 0.1],
    goal: 0.07,
    assist: 0.1,
    shot: 0.1,
    card: 1.1,
  },
  {
    position: 'attacker',
    count: 6,
    start: [0.9, 0.8, 0.6, 0.35, 0.2, 0.15],
    goal: 0.22,
    assist: 0.09,
    shot: 0.2,
    card: 0.6,
  },
] as const;

/** A 25-player squad; player ids are teamId * 100 + 1..25, the first of each line the strongest. */
export function plausibleSquad(teamId: number): PlayerProfile[] {
  const players: PlayerProfile[] = [];
  for (const line of LINES) {
    for (let i = 0; i < line.count; i++) {
      const prominence = 1.3 - i * 0.12; // the regulars score, shoot and assist more
      players.push({
        player_id: teamId * 100 + players.length + 1,
        name: `Player ${teamId}-${players.length + 1}`,
        position: line.position,
        goal_share: line.goal * prominence,
        assist_share: line.assist * prominence,
        shot_share: line.shot * prominence,
        card_share: line.card,
        start_probability: line.start[i]!,
        typical_minutes: line.position === 'attacker' ? 72 : line.position === 'midfielder' ? 80 : 88,
      });
    }
  }
  return players;
}

export function plausibleSide(teamId: number, attack: number, defence: number): SideInputs {
  return {
    team: { team_id: teamId, name: `Team ${teamId}`, short_name: `T${teamId}`, country: 'ENG' },
    attack,
    defence,
    players: plausibleSquad(teamId),
    lineup: { source: 'predicted', xi: [], bench: [], formation: null },
  };
}

/** A home-and-away fixture between two teams of the given ratings (league-average intercept). */
export function plausibleFixture(
  fixtureId: number,
  home: { teamId: number; attack: number; defence: number },
  away: { teamId: number; attack: number; defence: number },
): MatchInputs {
  return {
    fixture_id: fixtureId,
    kickoff: '2026-12-05T15:00:00Z',
    state: 'inputs_final',
    competition: { competition_id: 1, name: 'Test League', country: 'ENG', season: '2026-27' },
    // exp(0.13 + 0.27) = 1.49 home and exp(0.13) = 1.14 away goals between average teams; a league's
    // spread of ratings lifts the season averages to about 1.58 and 1.22.
    params: { intercept: 0.13, home_advantage: 0.27 },
    home: plausibleSide(home.teamId, home.attack, home.defence),
    away: plausibleSide(away.teamId, away.attack, away.defence),
  };
}

/** Fixes a side's lineup to its most likely XI (one goalkeeper, ten outfield) and next nine on the bench. */
export function withAnnouncedLineup(side: SideInputs): SideInputs {
  const byLikelihood = [...side.players].sort((a, b) => b.start_probability - a.start_probability);
  const keeper = byLikelihood.find((p) => p.position === 'goalkeeper')!;
  const outfield = byLikelihood.filter((p) => p.position !== 'goalkeeper').slice(0, 10);
  const xi = [keeper, ...outfield].map((p) => p.player_id);
  const bench = byLikelihood
    .filter((p) => !xi.includes(p.player_id))
    .slice(0, 9)
    .map((p) => p.player_id);
  return { ...side, lineup: { source: 'announced', xi, bench, formation: '4-3-3' } };
}

/** A deterministic stream of uniforms (mulberry32) for drawing fictional leagues. */
export function seededUniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
