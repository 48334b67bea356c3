// The exact forward pass of the minute model against the engine it stands in for, and against itself.
import { describe, expect, it } from 'vitest';
import { simulateRange } from '../../fallback/engine.js';
import { expectedGoalsUnder, observedScoreLikelihood, scoreDistribution } from '../../model/minute-model.js';
import { referenceFixture } from '../../model/reference-fixture.js';
import { marketsFromGrid } from '../../model/score-grid.js';
import { stepTableFromCompiled, stepTableFromParams } from '../../model/step-rates.js';
import { compileFixture } from '../../src/engine/compile.js';
import { C_FT_GRID, COUNTER_WORDS, finalizeCounters, GRID_SIZE } from '../../src/engine-contract/layout.js';
import { defaultModelParams, type ModelParams } from '../../src/engine-contract/model-params.js';

const rated: [number, number] = [1.6, 1.1];

describe('step probabilities', () => {
  it('built from the parameters equal the engine compiler’s thresholds', () => {
    const fromEngine = stepTableFromCompiled(
      compileFixture(referenceFixture(1, ...rated), defaultModelParams),
    );
    const fromParams = stepTableFromParams(defaultModelParams, rated);
    let worst = 0;
    for (let i = 0; i < fromEngine.goal.length; i++) {
      worst = Math.max(worst, Math.abs(fromEngine.goal[i]! - fromParams.goal[i]!));
      worst = Math.max(worst, Math.abs(fromEngine.red[i]! - fromParams.red[i]!));
    }
    expect(worst).toBeLessThan(1e-7);
    fromEngine.stepPlayed.forEach((p, step) => {
      expect(fromParams.stepPlayed[step]).toBeCloseTo(p, 8);
    });
  });

  it('are calibrated so expected goals equal the rated goals under the dynamics', () => {
    const [home, away] = expectedGoalsUnder(stepTableFromParams(defaultModelParams, rated));
    expect(home).toBeCloseTo(rated[0], 6);
    expect(away).toBeCloseTo(rated[1], 6);
  });
});

describe('scoreDistribution', () => {
  const table = stepTableFromParams(defaultModelParams, rated);
  const dist = scoreDistribution(table, { maxGoals: 10, withHtFt: true });

  it('is a distribution whose mean is the rated goals', () => {
    expect(dist.fullTime.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
    expect(dist.htFt.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
    let home = 0;
    for (let h = 0; h <= 10; h++) for (let a = 0; a <= 10; a++) home += h * dist.fullTime[h * 11 + a]!;
    expect(home).toBeCloseTo(rated[0], 3);
  });

  it('matches the engine’s sampled score grid within Monte Carlo error', () => {
    const compiled = compileFixture(referenceFixture(1, ...rated), defaultModelParams);
    const draws = 40_000;
    const counters = new Uint32Array(COUNTER_WORDS);
    simulateRange(compiled, { lo: 7, hi: 11 }, 0, draws, counters);
    finalizeCounters(counters);
    const sampled = new Float64Array(GRID_SIZE * GRID_SIZE);
    for (let i = 0; i < sampled.length; i++) sampled[i] = counters[C_FT_GRID + i]! / draws;
    const engine = marketsFromGrid(sampled, GRID_SIZE);
    const analytic = marketsFromGrid(dist.fullTime, 11);
    // Standard error of a probability near 0.4 at 40,000 draws is 0.0025; allow 4 of them. The engine
    // also sends players off for a second yellow, which the analytic pass leaves out (a small effect).
    for (const key of ['home', 'draw', 'away', 'over25', 'btts'] as const) {
      expect(Math.abs(engine[key] - analytic[key])).toBeLessThan(0.01);
    }
  });

  it('turns stronger score-state effects into more comebacks and more draws', () => {
    const flat: ModelParams = {
      ...defaultModelParams,
      score_state_multipliers: [1, 1, 1, 1, 1],
      red_card_multipliers: { side_down: 1, side_up: 1 },
    };
    const pushing: ModelParams = { ...flat, score_state_multipliers: [1.5, 1.5, 1, 0.7, 0.7] };
    const plain = scoreDistribution(stepTableFromParams(flat, rated), { maxGoals: 10, withHtFt: true });
    const pushed = scoreDistribution(stepTableFromParams(pushing, rated), { maxGoals: 10, withHtFt: true });
    expect(marketsFromGrid(pushed.fullTime, 11).draw).toBeGreaterThan(
      marketsFromGrid(plain.fullTime, 11).draw,
    );
    // H/D + A/D: half-time leaders pegged back
    expect(pushed.htFt[1]! + pushed.htFt[7]!).toBeGreaterThan(plain.htFt[1]! + plain.htFt[7]!);
  });
});

describe('observedScoreLikelihood', () => {
  // 'none' conditions on no red card: compare with a table whose red-card probability is zero.
  const table = stepTableFromParams(defaultModelParams, rated);
  table.red.fill(0);
  const dist = scoreDistribution(table, { maxGoals: 10 });

  it('gives the full-time cell of the score distribution when half-time is unknown', () => {
    for (const [h, a] of [
      [0, 0],
      [2, 1],
      [1, 3],
    ] as const) {
      const p = observedScoreLikelihood(table, null, { home: h, away: a }, 'none');
      expect(p).toBeCloseTo(dist.fullTime[h * 11 + a]!, 10);
    }
  });

  it('sums over half-time scores to the full-time probability', () => {
    let total = 0;
    for (let h = 0; h <= 2; h++) {
      for (let a = 0; a <= 1; a++)
        total += observedScoreLikelihood(table, { home: h, away: a }, { home: 2, away: 1 }, 'none');
    }
    expect(total).toBeCloseTo(dist.fullTime[2 * 11 + 1]!, 10);
  });

  it('conditional on a red card, is a distribution over full-time scores that favours the other side', () => {
    const strong: ModelParams = {
      ...defaultModelParams,
      red_card_multipliers: { side_down: 0.5, side_up: 1.8 },
    };
    const redTable = stepTableFromParams(strong, rated);
    let total = 0;
    let homeWins = 0;
    let plainHomeWins = 0;
    for (let h = 0; h <= 9; h++) {
      for (let a = 0; a <= 9; a++) {
        const p = observedScoreLikelihood(redTable, null, { home: h, away: a }, 'home');
        total += p;
        if (h > a) {
          homeWins += p;
          plainHomeWins += observedScoreLikelihood(redTable, null, { home: h, away: a }, 'none');
        }
      }
    }
    expect(total).toBeCloseTo(1, 4);
    expect(homeWins).toBeLessThan(plainHomeWins - 0.05);
  });
});
