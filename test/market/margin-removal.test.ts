// Margin removal against the published formulas (docs/model.md "Margin removal"): each method's
// probabilities rebuilt here from its own definition, Shin's z by the other solver the literature uses
// (the fixed-point iteration of Jullien & Salanié 1994, as Štrumbelj 2014 runs it) and, for two outcomes,
// by its closed form.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { MARGIN_METHODS, type MarginMethod, removeMargin } from '../../src/market/margin-removal.js';

const HOME_DRAW_AWAY = [2.1, 3.4, 3.6];
const MARKETS = [
  HOME_DRAW_AWAY,
  [1.25, 6.5, 13],
  [1.9, 1.95],
  [4.0, 3.6, 2.0],
  [1.02, 21, 151],
  [2.5, 3.1, 3.3, 9.5],
];

const inverseOf = (odds: number[]) => odds.map((price) => 1 / price);
const total = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** Shin's z by z ← (Σ√(z² + 4(1 − z)π_i²/Π) − 2) / (n − 2), from z = 0 (three or more outcomes). */
function shinZByFixedPoint(odds: number[]): number {
  const inverse = inverseOf(odds);
  const overround = total(inverse);
  let z = 0;
  for (let step = 0; step < 10_000; step++) {
    const next =
      (total(inverse.map((pi) => Math.sqrt(z * z + (4 * (1 - z) * pi * pi) / overround))) - 2) /
      (odds.length - 2);
    if (Math.abs(next - z) < 1e-16) return next;
    z = next;
  }
  return z;
}

/** Shin's p_i for a given z, as Shin (1993) and Štrumbelj (2014) write it. */
const shinAt = (odds: number[], z: number) => {
  const inverse = inverseOf(odds);
  const overround = total(inverse);
  return inverse.map((pi) => (Math.sqrt(z * z + (4 * (1 - z) * pi * pi) / overround) - z) / (2 * (1 - z)));
};

function refusal(odds: number[], method?: MarginMethod): ApiError {
  try {
    removeMargin(odds, method);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`${odds.join(', ')} was not refused`);
}

describe('removeMargin', () => {
  it('every method sums to 1 and keeps the order of the prices', () => {
    for (const odds of MARKETS) {
      for (const method of MARGIN_METHODS) {
        if (method === 'additive' && odds[0] === 1.02) continue; // refused: below, "additive goes negative"
        const { probabilities } = removeMargin(odds, method);
        expect(Math.abs(total(probabilities) - 1)).toBeLessThan(1e-12);
        for (let i = 1; i < odds.length; i++) {
          // A longer price never gets the larger probability.
          if (odds[i]! > odds[i - 1]!) expect(probabilities[i]).toBeLessThan(probabilities[i - 1]!);
        }
      }
    }
  });

  it('multiplicative: π_i / Π, with no parameter', () => {
    const result = removeMargin(HOME_DRAW_AWAY, 'multiplicative');
    const inverse = inverseOf(HOME_DRAW_AWAY);
    expect(result.overround).toBeCloseTo(1 / 2.1 + 1 / 3.4 + 1 / 3.6, 15);
    expect(result.overround).toBeCloseTo(1.048086, 6);
    expect(result.parameter).toBeNull();
    expectClose(
      result.probabilities,
      inverse.map((pi) => pi / result.overround),
      15,
    );
    expect(result.probabilities.map((p) => round6(p))).toEqual([0.454343, 0.280624, 0.265033]);
  });

  it('additive: π_i − (Π − 1)/n, the subtraction as its parameter', () => {
    const result = removeMargin(HOME_DRAW_AWAY, 'additive');
    const subtracted = (result.overround - 1) / 3;
    expect(result.parameter).toEqual({ name: 'subtracted', value: subtracted });
    expect(subtracted).toBeCloseTo(0.016029, 6);
    expectClose(
      result.probabilities,
      inverseOf(HOME_DRAW_AWAY).map((pi) => pi - subtracted),
      15,
    );
    expect(result.probabilities.map((p) => round6(p))).toEqual([0.460162, 0.278089, 0.261749]);
  });

  it('power: π_i^k with k solved so the probabilities sum to 1', () => {
    for (const odds of MARKETS) {
      const result = removeMargin(odds, 'power');
      expect(result.parameter?.name).toBe('k');
      const k = result.parameter!.value;
      expect(k).toBeGreaterThan(1);
      const rebuilt = inverseOf(odds).map((pi) => pi ** k);
      expect(Math.abs(total(rebuilt) - 1)).toBeLessThan(1e-12);
      expectClose(result.probabilities, rebuilt, 15);
    }
    const worked = removeMargin(HOME_DRAW_AWAY, 'power');
    expect(worked.parameter!.value).toBeCloseTo(1.046112, 6);
    expect(worked.probabilities.map((p) => round6(p))).toEqual([0.460174, 0.27798, 0.261846]);
  });

  it('odds ratio: (p/(1 − p)) = (π/(1 − π)) / c with c solved so the probabilities sum to 1', () => {
    for (const odds of MARKETS) {
      const result = removeMargin(odds, 'odds_ratio');
      expect(result.parameter?.name).toBe('c');
      const c = result.parameter!.value;
      const rebuilt = inverseOf(odds).map((pi) => pi / (c + pi - c * pi));
      expect(Math.abs(total(rebuilt) - 1)).toBeLessThan(1e-12);
      rebuilt.forEach((p, i) => {
        expect(result.probabilities[i]).toBeCloseTo(p, 15);
        const pi = 1 / odds[i]!;
        expect(pi / (1 - pi) / (p / (1 - p))).toBeCloseTo(c, 12);
      });
    }
    const worked = removeMargin(HOME_DRAW_AWAY, 'odds_ratio');
    expect(worked.parameter!.value).toBeCloseTo(1.076713, 6);
    expect(worked.probabilities.map((p) => round6(p))).toEqual([0.457795, 0.279009, 0.263196]);
  });

  it("Shin: z agrees with Jullien & Salanié's fixed-point iteration, and the probabilities with Shin's formula", () => {
    for (const odds of MARKETS.filter((market) => market.length > 2)) {
      const result = removeMargin(odds, 'shin');
      expect(result.parameter?.name).toBe('z');
      const z = result.parameter!.value;
      expect(z).toBeCloseTo(shinZByFixedPoint(odds), 12);
      expectClose(result.probabilities, shinAt(odds, z), 13);
    }
    const worked = removeMargin(HOME_DRAW_AWAY, 'shin');
    expect(worked.parameter!.value).toBeCloseTo(0.024083, 6);
    expect(worked.probabilities.map((p) => round6(p))).toEqual([0.458666, 0.278738, 0.262597]);
  });

  it("Shin with two outcomes: z in closed form, and the probabilities are the additive method's", () => {
    for (const odds of [
      [1.9, 1.95],
      [1.5, 2.6],
      [1.1, 7],
      [3.2, 1.33],
    ]) {
      const [a, b] = inverseOf(odds) as [number, number];
      const overround = a + b;
      const squaredGap = (a - b) ** 2;
      const closedZ = ((overround - 1) * (squaredGap - overround)) / (overround * (squaredGap - 1));
      const result = removeMargin(odds, 'shin');
      expect(result.parameter!.value).toBeCloseTo(closedZ, 13);
      const additive = removeMargin(odds, 'additive');
      expectClose(result.probabilities, additive.probabilities, 13);
    }
  });

  it('a market without margin keeps its probabilities, each parameter at its neutral value', () => {
    const fair = [2, 4, 4];
    for (const method of MARGIN_METHODS) {
      const result = removeMargin(fair, method);
      expect(result.overround).toBe(1);
      expectClose(result.probabilities, inverseOf(fair), 15);
    }
    expect(removeMargin(fair, 'shin').parameter).toEqual({ name: 'z', value: 0 });
    expect(removeMargin(fair, 'power').parameter).toEqual({ name: 'k', value: 1 });
    expect(removeMargin(fair, 'odds_ratio').parameter).toEqual({ name: 'c', value: 1 });
    expect(removeMargin(fair, 'additive').parameter).toEqual({ name: 'subtracted', value: 0 });
  });

  it('refuses what no market is, naming the field and why', () => {
    expect(refusal([2.1])).toMatchObject({ code: 'parameter_invalid', options: { param: 'odds' } });
    expect(refusal([2.1, 1.0, 3.6]).options).toMatchObject({ param: 'odds.1' });
    expect(refusal([2.1, 1.0, 3.6]).message).toContain('greater than 1.0');
    expect(refusal([2.1, 0.5, 3.6]).options).toMatchObject({ param: 'odds.1' });
    expect(refusal([2.1, Number.POSITIVE_INFINITY]).options).toMatchObject({ param: 'odds.1' });
    expect(refusal([Number.NaN, 2.1]).options).toMatchObject({ param: 'odds.0' });
    expect(refusal([2.1, 200_000]).options).toMatchObject({ param: 'odds.1' });
    // Overround 0.917: below 1.
    const arbitrage = refusal([2.4, 3.6, 4.0]);
    expect(arbitrage.options).toMatchObject({ param: 'odds' });
    expect(arbitrage.message).toContain('below 1');
    // Overround 0.909 + 0.625 = 1.534: above 1.5.
    const wide = refusal([1.1, 1.6]);
    expect(wide.message).toContain('above 1.5');
    // The additive method takes (0.98039 + 0.04762 + 0.00662 − 1)/3 = 0.01154 from 1/151 = 0.00662.
    const negative = refusal([1.02, 21, 151], 'additive');
    expect(negative.options).toMatchObject({ param: 'odds.2' });
    expect(negative.message).toContain('not above zero');
    expect(() => removeMargin([1.02, 21, 151], 'shin')).not.toThrow();
  });

  it('names the odds by the path the caller gives', () => {
    try {
      removeMargin([2.1, 1], 'shin', 'market.odds.1x2');
      expect.unreachable();
    } catch (error) {
      expect((error as ApiError).options.param).toBe('market.odds.1x2.1');
    }
  });
});

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** Each of `actual` within 10^-digits / 2 of its twin in `expected`. */
function expectClose(actual: number[], expected: number[], digits: number): void {
  expect(actual).toHaveLength(expected.length);
  for (let i = 0; i < expected.length; i++) expect(actual[i]).toBeCloseTo(expected[i]!, digits);
}
