// Statistical check of the whole model: a simulated league season of plausible teams against the
// reference figures of the football data (test/football-data/README.md: 7 European leagues, 2009/10 to
// 2024/25). The tolerances are the stated acceptance bands of the starting/fitted constants, not Monte
// Carlo noise (81,000 simulated matches: standard errors near 0.2 percentage points).
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { type SeasonFigures, simulateSeason } from './season.js';

const REFERENCE = [
  // [figure, README value, tolerance]
  ['goalsPerMatch', 2.81, 0.12],
  ['homeGoals', 1.58, 0.08],
  ['awayGoals', 1.22, 0.08],
  ['homeWin', 0.454, 0.025],
  ['draw', 0.249, 0.025],
  ['awayWin', 0.297, 0.025],
  ['over25', 0.53, 0.035],
  ['btts', 0.535, 0.025],
  ['nilNil', 0.069, 0.02],
  ['firstHalfShare', 0.44, 0.02],
  ['halfTimeLeaderWins', 0.75, 0.03],
  ['halfTimeLeaderDraws', 0.17, 0.03],
  ['halfTimeLeaderLoses', 0.08, 0.02],
  ['yellowsPerMatch', 4.1, 0.3],
  ['redsPerMatch', 0.2, 0.06],
  ['shotsPerMatch', 24.6, 1.5],
  ['onTargetShare', 0.36, 0.02],
  ['conversion', 0.11, 0.01],
] as const;

describe('a simulated season', () => {
  let figures: SeasonFigures;
  beforeAll(() => {
    // 10 teams, 90 fixtures, 900 draws each: 81,000 simulated matches.
    figures = simulateSeason(defaultModelParams, 10, 900);
  });

  it.each(REFERENCE)('matches the reference %s = %d within %d', (figure, value, tolerance) => {
    expect(Math.abs(figures[figure] - value)).toBeLessThanOrEqual(tolerance);
  });
});
