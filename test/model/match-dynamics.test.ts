// The score-state fit against matches drawn from the minute model with known multipliers.
import { describe, expect, it } from 'vitest';
import { type DynamicsSample, fitMatchDynamics } from '../../model/match-dynamics.js';
import { SECOND_HALF_START, STEPS, scoreBucket, stepTableIndex } from '../../model/minute-model.js';
import { calibrationGrid, makeStepRateModel } from '../../model/step-rates.js';
import { defaultModelParams, type ModelParams } from '../../src/engine-contract/model-params.js';
import { seededUniform } from '../engine/plausible-teams.js';

const TRUE_MULTIPLIERS = [1.5, 1.3, 1, 0.8, 0.7];

/** Matches sampled step by step from the model (no red cards), recording half-time and full-time. */
function sampleMatches(params: ModelParams, count: number, seed: number): DynamicsSample[] {
  const uniform = seededUniform(seed);
  const model = makeStepRateModel(params);
  const baseFor = calibrationGrid(model);
  const samples: DynamicsSample[] = [];
  for (let i = 0; i < count; i++) {
    const rated: [number, number] = [1 + 1.2 * uniform(), 0.7 + 0.9 * uniform()];
    const table = model.table(baseFor(rated));
    const score = [0, 0];
    let halfTime = { home: 0, away: 0 };
    const firstHalfEnd = uniform();
    const secondHalfEnd = uniform();
    for (let step = 0; step < STEPS; step++) {
      const played = table.stepPlayed[step]!;
      // Added steps are nested: one uniform per half decides how many are played.
      if (played < 1 && (step < SECOND_HALF_START ? firstHalfEnd : secondHalfEnd) >= played) {
        if (step === SECOND_HALF_START - 1) halfTime = { home: score[0]!, away: score[1]! };
        continue;
      }
      const [h, a] = score as [number, number];
      if (uniform() < table.goal[stepTableIndex(0, step, scoreBucket(h - a), 1)]!) score[0]!++;
      if (uniform() < table.goal[stepTableIndex(1, step, scoreBucket(a - h), 1)]!) score[1]!++;
      if (step === SECOND_HALF_START - 1) halfTime = { home: score[0]!, away: score[1]! };
    }
    samples.push({ rated, halfTime, fullTime: { home: score[0]!, away: score[1]! }, redCard: 'none' });
  }
  return samples;
}

describe('fitMatchDynamics', () => {
  it('recovers score-state multipliers from half-time and full-time scores', () => {
    const truth: ModelParams = {
      ...defaultModelParams,
      score_state_multipliers: TRUE_MULTIPLIERS,
      cards: { ...defaultModelParams.cards, straight_red_per_match: { home: 0, away: 0 } },
    };
    const samples = sampleMatches(truth, 800, 42);
    const start: ModelParams = { ...truth, score_state_multipliers: [1, 1, 1, 1, 1] };
    const fit = fitMatchDynamics(start, samples, { maxEvaluations: 30 });
    const [down2, down1, level, up1, up2] = fit.scoreStateMultipliers as [
      number,
      number,
      number,
      number,
      number,
    ];
    expect(level).toBe(1);
    // Trailing sides push, leading sides ease off, as in the generating model.
    expect(down1).toBeGreaterThan(1.1);
    expect(down2).toBeGreaterThan(1.1);
    expect(up1).toBeLessThan(0.95);
    expect(up2).toBeLessThan(0.95);
    expect(fit.scoreState.after).toBeGreaterThan(fit.scoreState.before);
    expect(fit.redCard.matches).toBe(0);
  });
});
