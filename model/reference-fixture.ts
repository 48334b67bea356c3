// The fixture the engine simulates when the backtest or the fit needs the real engine for a pair of
// rated goal figures: neutral ratings scaffolding (intercept and home advantage folded into attack) and
// a fixed 11 with a 7-man bench, so the lineup-strength bucket is neutral and only the ratings, the
// in-match dynamics and the card and shot rates shape the result.
import type {
  CompetitionProfile,
  MatchInputs,
  PlayerProfile,
  SideInputs,
} from '../src/engine-contract/match-inputs.js';

const LINES = [
  { position: 'goalkeeper', starters: 1, bench: 1, goal: 0, assist: 0.01, shot: 0.005, card: 0.3 },
  { position: 'defender', starters: 4, bench: 2, goal: 0.03, assist: 0.05, shot: 0.05, card: 1.2 },
  { position: 'midfielder', starters: 3, bench: 2, goal: 0.08, assist: 0.1, shot: 0.1, card: 1.1 },
  { position: 'attacker', starters: 3, bench: 2, goal: 0.2, assist: 0.09, shot: 0.2, card: 0.7 },
] as const;

function referenceSide(teamId: number, attack: number): SideInputs {
  const players: PlayerProfile[] = [];
  const xi: number[] = [];
  const bench: number[] = [];
  for (const line of LINES) {
    for (let i = 0; i < line.starters + line.bench; i++) {
      const starter = i < line.starters;
      const id = teamId * 100 + players.length + 1;
      players.push({
        player_id: id,
        name: `Reference ${teamId}-${players.length + 1}`,
        position: line.position,
        goal_share: line.goal,
        assist_share: line.assist,
        shot_share: line.shot,
        card_share: line.card,
        start_probability: starter ? 1 : 0,
        typical_minutes: line.position === 'attacker' ? 75 : line.position === 'midfielder' ? 80 : 88,
      });
      (starter ? xi : bench).push(id);
    }
  }
  return {
    team: { team_id: teamId, name: `Reference ${teamId}`, short_name: `R${teamId}`, country: 'XXX' },
    attack,
    defence: 0,
    players,
    lineup: { source: 'announced', xi, bench, formation: '4-3-3' },
  };
}

/** Inputs whose rated goals are exactly `home` and `away`, with a competition's profile if given. */
export function referenceFixture(
  fixtureId: number,
  home: number,
  away: number,
  profile?: CompetitionProfile | undefined,
): MatchInputs {
  return {
    ...(profile ? { profile } : {}),
    fixture_id: fixtureId,
    kickoff: '2026-01-01T15:00:00Z',
    state: 'inputs_final',
    competition: { competition_id: 0, name: 'Backtest', country: 'XXX', season: 'backtest' },
    params: { intercept: 0, home_advantage: 0 },
    home: referenceSide(1, Math.log(home)),
    away: referenceSide(2, Math.log(away)),
  };
}
