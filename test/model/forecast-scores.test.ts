import { describe, expect, it } from 'vitest';
import {
  binaryLogLoss,
  expectedCalibrationError,
  outcomeOf,
  rankedProbabilityScore,
  threeWayLogLoss,
} from '../../model/forecast-scores.js';

describe('ranked probability score', () => {
  const forecast = { home: 0.5, draw: 0.3, away: 0.2 };

  it('matches the hand-computed values for each outcome', () => {
    // cumulative forecast (0.5, 0.8); observed home (1, 1): ((0.5)² + (0.2)²) / 2
    expect(rankedProbabilityScore(forecast, 'home')).toBeCloseTo(0.145, 12);
    // observed draw (0, 1): ((0.5)² + (0.2)²) / 2
    expect(rankedProbabilityScore(forecast, 'draw')).toBeCloseTo(0.145, 12);
    // observed away (0, 0): ((0.5)² + (0.8)²) / 2
    expect(rankedProbabilityScore(forecast, 'away')).toBeCloseTo(0.445, 12);
  });

  it('is 0 for a certain, correct forecast and 1 for the opposite certainty', () => {
    expect(rankedProbabilityScore({ home: 1, draw: 0, away: 0 }, 'home')).toBe(0);
    expect(rankedProbabilityScore({ home: 1, draw: 0, away: 0 }, 'away')).toBe(1);
  });

  it('punishes a near miss less than a far miss (the order of outcomes counts)', () => {
    const homeHeavy = { home: 0.7, draw: 0.2, away: 0.1 };
    expect(rankedProbabilityScore(homeHeavy, 'draw')).toBeLessThan(rankedProbabilityScore(homeHeavy, 'away'));
  });
});

describe('log loss', () => {
  it('is minus the log of the probability given to what happened', () => {
    expect(threeWayLogLoss({ home: 0.5, draw: 0.3, away: 0.2 }, 'draw')).toBeCloseTo(1.2039728043259361, 12);
    expect(binaryLogLoss(0.8, true)).toBeCloseTo(0.2231435513142097, 12);
    expect(binaryLogLoss(0.8, false)).toBeCloseTo(1.6094379124341003, 12);
  });

  it('stays finite for a forecast of 0 that happened', () => {
    expect(binaryLogLoss(0, true)).toBeCloseTo(-Math.log(1e-6), 9);
  });
});

describe('expected calibration error', () => {
  it('matches a hand-computed example', () => {
    const forecasts = [
      { probability: 0.15, happened: true },
      { probability: 0.15, happened: false },
      { probability: 0.15, happened: false },
      { probability: 0.85, happened: true },
      { probability: 0.85, happened: true },
    ];
    // bin [0.1, 0.2): |0.15 - 1/3| · 3/5 = 0.11; bin [0.8, 0.9): |0.85 - 1| · 2/5 = 0.06
    const { ece, bins } = expectedCalibrationError(forecasts);
    expect(ece).toBeCloseTo(0.17, 12);
    expect(bins.map((b) => b.count)).toEqual([3, 2]);
    expect(bins[0]!.observedRate).toBeCloseTo(1 / 3, 12);
  });

  it('is 0 when every bin forecasts its own frequency', () => {
    const forecasts = [
      ...Array.from({ length: 4 }, (_, i) => ({ probability: 0.25, happened: i === 0 })),
      ...Array.from({ length: 2 }, (_, i) => ({ probability: 0.5, happened: i === 0 })),
    ];
    expect(expectedCalibrationError(forecasts).ece).toBeCloseTo(0, 12);
  });

  it('puts a probability of exactly 1 in the last bin', () => {
    const { bins } = expectedCalibrationError([{ probability: 1, happened: true }]);
    expect(bins).toHaveLength(1);
    expect(bins[0]!.from).toBeCloseTo(0.9, 12);
  });
});

describe('outcomeOf', () => {
  it('reads a score as home, draw or away', () => {
    expect(outcomeOf(2, 1)).toBe('home');
    expect(outcomeOf(0, 0)).toBe('draw');
    expect(outcomeOf(1, 3)).toBe('away');
  });
});
