// A small walk-forward backtest on real data (test/football-data: one league, one held-out season) with
// the shipped constants, so it runs in seconds; the full backtest is `matchsim model backtest`.
import { describe, expect, it } from 'vitest';
import { backtestModel } from '../../model/backtest.js';
import { loadLeagueMatches } from '../../model/league-results.js';
import { walkForward } from '../../model/walk-forward.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { testDataDir } from '../helpers/football-data.js';

const dataDir = testDataDir;

describe('walkForward', () => {
  it('rates each held-out match only from matches before its day', () => {
    const matches = loadLeagueMatches(dataDir, ['premier-league']);
    const rated = walkForward(matches, { heldOutSeasons: [2022] });
    expect(rated).toHaveLength(380);
    // Changing a held-out result must not change the forecast of that match or any earlier one.
    const target = rated[200]!.match;
    const altered = matches.map((m) => (m === target ? { ...m, homeGoals: m.homeGoals + 5 } : m));
    const again = walkForward(altered, { heldOutSeasons: [2022] });
    const index = again.findIndex((r) => r.match.day === target.day && r.match.home === target.home);
    expect(again[index]!.model.lambdaHome).toBeCloseTo(rated[200]!.model.lambdaHome, 12);
    expect(again[index]!.baseline.lambdaHome).toBeCloseTo(rated[200]!.baseline.lambdaHome, 12);
    const later = again.findIndex((r) => r.match.day >= target.day + 7 && r.match.home === target.home);
    expect(again[later]!.model.lambdaHome).not.toBeCloseTo(rated[later]!.model.lambdaHome, 6);
  });
});

describe('backtestModel', () => {
  it('scores the model, Dixon-Coles and base rates on the same held-out matches', async () => {
    const result = await backtestModel({
      dataDir,
      competitions: ['premier-league'],
      heldOutSeasons: [2022],
      params: defaultModelParams,
      engineEvery: 95,
      engineDraws: 2000,
      engineThreads: 0,
    });
    expect(result.held_out_seasons).toEqual([2022]);
    const { model, dixon_coles, base_rates } = result.comparison;
    for (const metrics of [model, dixon_coles, base_rates]) {
      expect(metrics.matches).toBe(380);
      expect(metrics.rps_1x2).toBeGreaterThan(0.1);
      expect(metrics.rps_1x2).toBeLessThan(0.3);
      expect(metrics.log_loss_1x2).toBeGreaterThan(0.8);
      expect(metrics.log_loss_1x2).toBeLessThan(1.2);
    }
    // Ratings carry information base rates lack.
    expect(model.rps_1x2).toBeLessThan(base_rates.rps_1x2);
    expect(model.log_loss_1x2).toBeLessThan(base_rates.log_loss_1x2);
    expect(result.metrics).toEqual(model);

    // Observed realism figures are the season's own.
    const season = loadLeagueMatches(dataDir, ['premier-league']).filter((m) => m.season === 2022);
    const draws = season.filter((m) => m.homeGoals === m.awayGoals).length / season.length;
    expect(result.realism.observed.draw).toBeCloseTo(draws, 12);
    const htFt = Object.values(result.realism.model.ht_ft).reduce((a, b) => a + b, 0);
    expect(htFt).toBeCloseTo(1, 6);

    // Matches 0, 95, 190 and 285 of the season.
    expect(result.engine_check?.matches).toBe(4);
    expect(result.engine_check?.engine.matches).toBe(4);
    expect(result.engine_check!.max_abs_difference_1x2).toBeLessThan(0.1);
    // Box-score means are per match in whole shots (the engine counts sixteenths): near the matches' own.
    const { engine, observed } = result.engine_check!.box_score;
    for (const figure of ['shots', 'shots_on_target'] as const) {
      expect(engine[figure]! / observed[figure]!).toBeGreaterThan(0.75);
      expect(engine[figure]! / observed[figure]!).toBeLessThan(1.33);
    }

    // The breakdown: the one league is the whole; promoted and established split the season.
    const { by_competition, by_subgroup, realism_by_competition } = result.breakdown;
    expect(by_competition['premier-league']!.model).toEqual(model);
    expect(by_competition['premier-league']!.dixon_coles).toEqual(dixon_coles);
    expect(by_subgroup.promoted!.matches + by_subgroup.established!.matches).toBe(380);
    // Three clubs came up in 2022/23, each with 38 matches (none met another twice in the other's count).
    expect(by_subgroup.promoted!.matches).toBeGreaterThan(100);
    expect(by_subgroup.early_season!.matches).toBeGreaterThan(20);
    const realism = realism_by_competition['premier-league']!;
    expect(realism.matches).toBe(4);
    expect(realism.rows.map((r) => r.figure)).toEqual([
      'goals',
      'shots',
      'shots_on_target',
      'yellow_cards',
      'red_cards',
    ]);
    for (const row of realism.rows)
      expect(row.pass).toBe(Math.abs(row.engine - row.observed) <= row.tolerance);
    // Three clubs came up: their points, won and forecast, per club-season.
    const points = result.breakdown.promoted_points;
    expect(points.club_seasons).toBe(3);
    expect(points.actual).toBeGreaterThan(20);
    expect(points.actual).toBeLessThan(80);
    expect(Math.abs(points.model - points.actual)).toBeLessThan(15);

    expect(result.probabilities).toBe('analytic');
    expect(['qualified', 'unqualified']).toContain(result.status);
    expect(result.calibrated).toBe(result.status === 'qualified' && result.checks.every((c) => c.pass));
  });
});
