// The fitted leagues' rating scales, stored by `matchsim model fit` under `league_profile` in
// model-params.json: what the demo data needs to draw fictional teams that play like real ones.
import { type CompetitionProfile, fittedCompetitionProfile } from '../src/engine-contract/match-inputs.js';
import { defaultModelParams, type ModelParams } from '../src/engine-contract/model-params.js';

export interface LeagueProfile {
  /** Log-scale constants of expected goals: exp(intercept + home_advantage + attack − defence). */
  intercept: number;
  home_advantage: number;
  /** Dixon-Coles low-score correction of the league (informational; the engine has no ρ). */
  rho: number;
  /** Spread of the current teams' ratings (teams of the latest season in the data). */
  attack_mean: number;
  attack_sd: number;
  defence_mean: number;
  defence_sd: number;
  /** Good attacks come with good defences: the correlation of the two ratings across teams. */
  attack_defence_correlation: number;
  teams: number;
  matches: number;
  goals_per_match: number;
  home_goals_per_match: number;
  away_goals_per_match: number;
}

const KEYS: readonly (keyof LeagueProfile)[] = [
  'intercept',
  'home_advantage',
  'rho',
  'attack_mean',
  'attack_sd',
  'defence_mean',
  'defence_sd',
  'attack_defence_correlation',
  'teams',
  'matches',
  'goals_per_match',
  'home_goals_per_match',
  'away_goals_per_match',
];

/** Every fitted league's profile (empty when the parameters carry none). */
function leagueProfiles(params: ModelParams = defaultModelParams): Record<string, LeagueProfile> {
  const out: Record<string, LeagueProfile> = {};
  for (const [league, figures] of Object.entries(params.league_profile ?? {})) {
    if (KEYS.every((key) => typeof figures[key] === 'number'))
      out[league] = figures as unknown as LeagueProfile;
  }
  return out;
}

/** One league's profile, e.g. `premier-league`; null when it was not fitted. */
export function leagueProfile(
  league: string,
  params: ModelParams = defaultModelParams,
): LeagueProfile | null {
  return leagueProfiles(params)[league] ?? null;
}

/**
 * Ratings for `count` fictional teams drawn like the league's: attack and defence from a bivariate
 * normal with the league's means, spreads and correlation. `uniform` is the caller's seeded source.
 */
export function fictionalTeamRatings(
  profile: LeagueProfile,
  count: number,
  uniform: () => number,
): { attack: number; defence: number }[] {
  const normal = () => {
    // Box-Muller; 1 − u keeps the logarithm finite.
    const u = 1 - uniform();
    const v = uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const r = Math.max(-1, Math.min(1, profile.attack_defence_correlation));
  return Array.from({ length: count }, () => {
    const z1 = normal();
    const z2 = r * z1 + Math.sqrt(1 - r * r) * normal();
    return {
      attack: profile.attack_mean + profile.attack_sd * z1,
      defence: profile.defence_mean + profile.defence_sd * z2,
    };
  });
}

/**
 * The engine's profile of a fitted league (MatchInputs.profile): its own card and shot rates, fitted by
 * `matchsim model fit` (model/fit-model.ts, `competitionRates`); undefined when the parameters lack them.
 */
export function competitionProfile(
  league: string,
  params: ModelParams = defaultModelParams,
): CompetitionProfile | undefined {
  return fittedCompetitionProfile(params, league);
}
