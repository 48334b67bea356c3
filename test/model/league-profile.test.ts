import { describe, expect, it } from 'vitest';
import { modelVersionOf, withProfilesBefore } from '../../model/fit-model.js';
import { fictionalTeamRatings, type LeagueProfile, leagueProfile } from '../../model/league-profile.js';
import { type LeagueMatch, loadLeagueMatches } from '../../model/league-results.js';
import { defaultModelParams, type ModelParams } from '../../src/engine-contract/model-params.js';
import { seededUniform } from '../engine/plausible-teams.js';
import { testDataDir } from '../helpers/football-data.js';

const profile: LeagueProfile = {
  intercept: 0.1,
  home_advantage: 0.2,
  rho: -0.03,
  attack_mean: 0.05,
  attack_sd: 0.22,
  defence_mean: 0.04,
  defence_sd: 0.18,
  attack_defence_correlation: 0.7,
  teams: 20,
  matches: 11_000,
  goals_per_match: 2.8,
  home_goals_per_match: 1.6,
  away_goals_per_match: 1.2,
};

describe('league profiles', () => {
  it('are read from the parameters, and only complete ones', () => {
    const params: ModelParams = {
      ...defaultModelParams,
      league_profile: { 'premier-league': { ...profile }, broken: { intercept: 1 } },
    };
    expect(leagueProfile('premier-league', params)).toEqual(profile);
    expect(leagueProfile('broken', params)).toBeNull();
    expect(leagueProfile('nowhere', params)).toBeNull();
  });

  it('draw fictional teams with the league’s means, spreads and correlation', () => {
    const teams = fictionalTeamRatings(profile, 20_000, seededUniform(3));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const attack = teams.map((t) => t.attack);
    const defence = teams.map((t) => t.defence);
    const ma = mean(attack);
    const md = mean(defence);
    const sa = Math.sqrt(mean(attack.map((x) => (x - ma) ** 2)));
    const sd = Math.sqrt(mean(defence.map((x) => (x - md) ** 2)));
    const r = mean(teams.map((t) => (t.attack - ma) * (t.defence - md))) / (sa * sd);
    expect(ma).toBeCloseTo(0.05, 2);
    expect(md).toBeCloseTo(0.04, 2);
    expect(sa).toBeCloseTo(0.22, 2);
    expect(sd).toBeCloseTo(0.18, 2);
    expect(r).toBeCloseTo(0.7, 1);
  });
});

describe('modelVersionOf', () => {
  it('is a function of the constants alone', () => {
    expect(modelVersionOf({ a: 1 })).toBe(modelVersionOf({ a: 1 }));
    expect(modelVersionOf({ a: 1 })).not.toBe(modelVersionOf({ a: 2 }));
    expect(modelVersionOf({ a: 1 })).toMatch(/^minute-[0-9a-f]{10}$/);
  });
});

describe('walk-forward league profiles (withProfilesBefore)', () => {
  const matches = loadLeagueMatches(testDataDir, ['serie-a']);
  const yellows = (ms: readonly LeagueMatch[]) =>
    ms.reduce((s, m) => s + m.stats!.home.yellowCards, 0) / ms.length;

  it("take a season's card and shot rates from the three seasons before it, never from the season itself", () => {
    const profile = withProfilesBefore(defaultModelParams, matches, 2021, 2018).league_profile!['serie-a']!;
    const window = matches.filter((m) => m.season >= 2018 && m.season <= 2020 && m.stats);
    expect(profile.yellow_home).toBeCloseTo(yellows(window), 3);
    // A changed result in the season itself leaves the profile as it was; one in the window moves it.
    const bump = (season: number) =>
      matches.map((m) =>
        m.season === season && m.stats
          ? { ...m, stats: { ...m.stats, home: { ...m.stats.home, yellowCards: 9 } } }
          : m,
      );
    expect(withProfilesBefore(defaultModelParams, bump(2021), 2021, 2018).league_profile!['serie-a']).toEqual(
      profile,
    );
    expect(
      withProfilesBefore(defaultModelParams, bump(2020), 2021, 2018).league_profile!['serie-a']!.yellow_home,
    ).toBeGreaterThan(profile.yellow_home! + 0.5);
  });

  it('follow the drift from season to season and keep the global constants', () => {
    const early = withProfilesBefore(defaultModelParams, matches, 2018, 2018);
    const late = withProfilesBefore(defaultModelParams, matches, 2022, 2018);
    expect(late.league_profile!['serie-a']!.shots_per_match).not.toBeCloseTo(
      early.league_profile!['serie-a']!.shots_per_match!,
      1,
    );
    expect(late.cards).toEqual(defaultModelParams.cards);
    expect(late.model_version).toBe(defaultModelParams.model_version);
  });
});
