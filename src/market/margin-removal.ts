// Margin removal: one market's decimal odds to the probabilities they imply once the bookmaker's margin is
// taken out (docs/api.md §4.13, docs/model.md "Margin removal"). Pure: POST /v1/odds/implied calls it, and
// so will the market fit, so that both read a market the same way. The methods and their names follow R's
// `implied` package; Shin's method after Shin (1993), its z solved as Jullien & Salanié (1994) and Štrumbelj
// (2014) describe; the odds ratio after Cheung (2015).
import { ApiError } from '../errors.js';

export const MARGIN_METHODS = ['multiplicative', 'additive', 'power', 'shin', 'odds_ratio'] as const;
export type MarginMethod = (typeof MARGIN_METHODS)[number];
/** Shin's method is the most accurate of the usual ones on football's 1X2 (Štrumbelj 2014). */
export const DEFAULT_MARGIN_METHOD: MarginMethod = 'shin';

/** A market has at least two outcomes; a correct-score grid or an outright has a few dozen. */
export const MIN_OUTCOMES = 2;
export const MAX_OUTCOMES = 100;
/**
 * Decimal odds are above 1 (a price of 1 returns only the stake); above this a price says nothing a
 * bookmaker publishes (exchanges stop at 1000), and its probability would fall below what doubles square.
 */
export const MAX_DECIMAL_ODDS = 100_000;
/**
 * The overround (the sum of the inverse odds) a market may have. Below 1 the prices are not one
 * bookmaker's market (an arbitrage across books, or a list of outcomes that is not exhaustive); above 1.5 no
 * bookmaker prices a main market, and the odds are more likely a wrong list than a market.
 */
export const MIN_OVERROUND = 1;
export const MAX_OVERROUND = 1.5;

/** The one number each method solves for or applies; the multiplicative method has none. */
export type MarginParameter =
  | { name: 'z'; value: number }
  | { name: 'k'; value: number }
  | { name: 'c'; value: number }
  | { name: 'subtracted'; value: number };

export interface ImpliedProbabilities {
  method: MarginMethod;
  /** In the order of the odds; they sum to 1 to within a few units of the last place. */
  probabilities: number[];
  /** The sum of the inverse odds, 1 for a market without margin. */
  overround: number;
  parameter: MarginParameter | null;
}

/**
 * The probabilities `odds` imply under `method`. `field` names the odds in a refusal (`odds`, or the
 * market's path in a larger request): an element's problem is named `field.i`, as the request validation
 * names array elements. Throws parameter_invalid for odds no market has (docs/api.md §4.13).
 */
export function removeMargin(
  odds: readonly number[],
  method: MarginMethod = DEFAULT_MARGIN_METHOD,
  field = 'odds',
): ImpliedProbabilities {
  const inverse = checkedInverseOdds(odds, field);
  const overround = sum(inverse);
  const solved = solve(method, inverse, overround, field);
  return { method, overround, ...solved };
}

function checkedInverseOdds(odds: readonly number[], field: string): number[] {
  const refuse = (param: string, message: string) =>
    new ApiError('parameter_invalid', { param, message: `\`${param}\`: ${message}` });
  if (odds.length < MIN_OUTCOMES || odds.length > MAX_OUTCOMES) {
    throw refuse(
      field,
      `a market has ${MIN_OUTCOMES} to ${MAX_OUTCOMES} outcomes; ${odds.length} were given.`,
    );
  }
  odds.forEach((price, index) => {
    if (!Number.isFinite(price)) throw refuse(`${field}.${index}`, 'decimal odds must be a finite number.');
    if (price <= 1) {
      throw refuse(`${field}.${index}`, `decimal odds must be greater than 1.0; ${price} was given.`);
    }
    if (price > MAX_DECIMAL_ODDS) {
      throw refuse(`${field}.${index}`, `decimal odds are at most ${MAX_DECIMAL_ODDS}; ${price} was given.`);
    }
  });
  const inverse = odds.map((price) => 1 / price);
  const overround = sum(inverse);
  if (overround < MIN_OVERROUND) {
    throw refuse(
      field,
      `the overround (the sum of the inverse odds) is ${round(overround)}, below ${MIN_OVERROUND}: ` +
        'these prices are not one market of exhaustive outcomes.',
    );
  }
  if (overround > MAX_OVERROUND) {
    throw refuse(
      field,
      `the overround (the sum of the inverse odds) is ${round(overround)}, above ${MAX_OVERROUND}: ` +
        'no bookmaker prices a market with that margin.',
    );
  }
  return inverse;
}

function solve(
  method: MarginMethod,
  inverse: number[],
  overround: number,
  field: string,
): Pick<ImpliedProbabilities, 'probabilities' | 'parameter'> {
  switch (method) {
    case 'multiplicative':
      return { probabilities: inverse.map((pi) => pi / overround), parameter: null };
    case 'additive':
      return additive(inverse, overround, field);
    case 'power': {
      // p_i = π_i^k; Σ π_i^k falls as k grows (each π_i < 1) and is the overround at k = 1.
      const k = solveFalling((exponent) => sum(inverse.map((pi) => pi ** exponent)), 1);
      return { probabilities: inverse.map((pi) => pi ** k), parameter: { name: 'k', value: k } };
    }
    case 'shin': {
      const z = solveFalling((value) => sum(shinProbabilities(inverse, overround, value)), 0, 1);
      return { probabilities: shinProbabilities(inverse, overround, z), parameter: { name: 'z', value: z } };
    }
    case 'odds_ratio': {
      // Cheung (2015): the odds p/(1 − p) are the offered π/(1 − π) divided by one ratio c.
      const c = solveFalling((ratio) => sum(oddsRatioProbabilities(inverse, ratio)), 1);
      return { probabilities: oddsRatioProbabilities(inverse, c), parameter: { name: 'c', value: c } };
    }
  }
}

/** The margin shared equally: p_i = π_i − (Π − 1)/n; refused where a long price would reach zero or below. */
function additive(inverse: number[], overround: number, field: string) {
  const subtracted = (overround - 1) / inverse.length;
  const probabilities = inverse.map((pi) => pi - subtracted);
  const negative = probabilities.findIndex((p) => p <= 0);
  if (negative >= 0) {
    const param = `${field}.${negative}`;
    throw new ApiError('parameter_invalid', {
      param,
      message:
        `\`${param}\`: the additive method subtracts ${round(subtracted)} from each inverse price, which ` +
        `leaves this outcome at ${round(probabilities[negative]!)}, not above zero; use another method.`,
    });
  }
  return { probabilities, parameter: { name: 'subtracted' as const, value: subtracted } };
}

/**
 * Shin (1993): with a share z of insider money the book sets π_i from the true p_i; inverted,
 * p_i = (√(z² + 4(1 − z)π_i²/Π) − z) / (2(1 − z)). The difference √(z² + x) − z is written as
 * x / (√(z² + x) + z), which loses no digits to cancellation for long prices.
 */
export function shinProbabilities(inverse: readonly number[], overround: number, z: number): number[] {
  return inverse.map((pi) => {
    const x = (4 * (1 - z) * pi * pi) / overround;
    return x / (Math.sqrt(z * z + x) + z) / (2 * (1 - z));
  });
}

function oddsRatioProbabilities(inverse: readonly number[], c: number): number[] {
  return inverse.map((pi) => pi / (pi + c * (1 - pi)));
}

/**
 * The parameter at which `total` (falling in it, and at least 1 at `from`) equals 1, by bisection to the
 * last bit of a double: slower than Newton's steps but certain to converge for every market the checks
 * above admit, and a few hundred evaluations cost microseconds. Without `to`, the upper end is found by
 * doubling the distance from `from`.
 */
function solveFalling(total: (parameter: number) => number, from: number, to?: number): number {
  if (total(from) <= 1) return from;
  let low = from;
  let high = to ?? from + 1;
  if (to === undefined) {
    while (total(high) > 1) {
      low = high;
      high = from + (high - from) * 2;
    }
  }
  for (;;) {
    const middle = (low + high) / 2;
    if (middle <= low || middle >= high) break;
    if (total(middle) > 1) low = middle;
    else high = middle;
  }
  // Of the two neighbouring doubles, the one whose total lies nearer 1.
  return Math.abs(total(low) - 1) <= Math.abs(total(high) - 1) ? low : high;
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
