// The in-play forecasts of the minute model (docs/model.md "In play"): the exact forward pass from a
// state against the engine's in-play run from the same state, and a small walk-forward in-play backtest
// on the real data (one league, one held-out season, the shipped constants); the full one is `matchsim
// model backtest-in-play`.
import { describe, expect, it } from 'vitest';
import { simulateRange } from '../../fallback/engine.js';
import { backtestInPlay, poissonFromState } from '../../model/in-play-backtest.js';
import { SECOND_HALF_START, scoreDistributionFrom } from '../../model/minute-model.js';
import { referenceFixture } from '../../model/reference-fixture.js';
import { stepTableFromCompiled } from '../../model/step-rates.js';
import { compileFixture } from '../../src/engine/compile.js';
import { C_FT_GRID, COUNTER_WORDS, finalizeCounters, GRID_SIZE } from '../../src/engine-contract/layout.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { testDataDir } from '../helpers/football-data.js';

describe('the forward pass from an in-play state', () => {
  it("gives the engine's in-play result from the same state within Monte Carlo error", () => {
    const inputs = referenceFixture(1, 1.6, 1.1);
    const compiled = compileFixture(
      { ...inputs, from_state: { minute: '46', score: { home: 0, away: 1 } } },
      defaultModelParams,
    );
    const draws = 40_000;
    const counters = new Uint32Array(COUNTER_WORDS);
    simulateRange(compiled, { lo: 52, hi: 46 }, 0, draws, counters);
    finalizeCounters(counters);
    const engine = [0, 0, 0];
    const exact = [0, 0, 0];
    const grid = scoreDistributionFrom(
      stepTableFromCompiled(compileFixture(inputs, defaultModelParams)),
      { home: 0, away: 1, menAdvantage: 0 },
      SECOND_HALF_START,
      GRID_SIZE - 1,
    );
    for (let h = 0; h < GRID_SIZE; h++) {
      for (let a = 0; a < GRID_SIZE; a++) {
        const result = h > a ? 0 : h === a ? 1 : 2;
        engine[result]! += counters[C_FT_GRID + h * GRID_SIZE + a]! / draws;
        exact[result]! += grid[h * GRID_SIZE + a]!;
      }
    }
    expect(grid[0]).toBe(0);
    for (let i = 0; i < 3; i++) {
      // The pass leaves out second-yellow dismissals: a little more than Monte Carlo error is allowed.
      expect(Math.abs(engine[i]! - exact[i]!)).toBeLessThan(4 * Math.sqrt(0.25 / draws) + 0.005);
    }
  });

  it('the Poisson baseline adds goals for the time left to the score', () => {
    const level = poissonFromState({ home: 1, away: 1 }, 0.7, 0.7);
    expect(level.home).toBeCloseTo(level.away, 12);
    expect(poissonFromState({ home: 2, away: 0 }, 0, 0)).toEqual({ home: 1, draw: 0, away: 0 });
  });
});

describe('backtestInPlay', () => {
  it('scores the model from half time, the Poisson baseline and the pre-match forecast on the same matches', async () => {
    const result = await backtestInPlay({
      dataDir: testDataDir,
      competitions: ['premier-league'],
      heldOutSeasons: [2022],
      params: defaultModelParams,
    });
    expect(result.matches).toBe(380);
    // Knowing the half-time score beats not knowing it.
    expect(result.model_from_half_time.rps_1x2).toBeLessThan(result.pre_match_model.rps_1x2);
    expect(result.poisson_baseline_from_half_time.rps_1x2).toBeLessThan(result.pre_match_model.rps_1x2);
    const counted = Object.values(result.by_half_time_margin).reduce((sum, band) => sum + band.matches, 0);
    expect(counted).toBe(380);
  }, 120_000);
});
