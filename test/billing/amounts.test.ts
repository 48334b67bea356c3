import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  creditsNumber,
  creditsToMilli,
  formatCredits,
  priceOfDrawsMilli,
} from '../../src/billing/amounts.js';

describe('credit amounts', () => {
  it('formats milli-credits as the exact three-decimal string', () => {
    expect(formatCredits(1_000)).toBe('1.000');
    expect(formatCredits(100)).toBe('0.100');
    expect(formatCredits(0)).toBe('0.000');
    expect(formatCredits(1)).toBe('0.001');
    expect(formatCredits(2_500_000)).toBe('2500.000');
    expect(formatCredits(-2_500)).toBe('-2.500');
    expect(formatCredits(Number.MAX_SAFE_INTEGER)).toBe('9007199254740.991');
  });

  it('gives credits as JSON numbers', () => {
    expect(creditsNumber(1_000)).toBe(1);
    expect(creditsNumber(100)).toBe(0.1);
    expect(creditsNumber(1_234_567)).toBe(1234.567);
    expect(JSON.stringify({ credits: creditsNumber(100) })).toBe('{"credits":0.1}');
  });

  it('parses operator input of at most three decimals', () => {
    expect(creditsToMilli(25)).toBe(25_000);
    expect(creditsToMilli('0.1')).toBe(100);
    expect(creditsToMilli(' 12.345 ')).toBe(12_345);
    expect(creditsToMilli('-1.5')).toBe(-1_500);
    expect(() => creditsToMilli('1.2345')).toThrow(RangeError);
    expect(() => creditsToMilli('1e3')).toThrow(RangeError);
    expect(() => creditsToMilli('')).toThrow(RangeError);
  });

  it('prices a run at one milli-credit per draw', () => {
    expect(priceOfDrawsMilli(1_000)).toBe(1_000);
    expect(formatCredits(priceOfDrawsMilli(100))).toBe('0.100');
    expect(formatCredits(priceOfDrawsMilli(1_000_000))).toBe('1000.000');
  });

  it('refuses amounts that are not safe integers', () => {
    expect(() => formatCredits(0.5)).toThrow(RangeError);
    expect(() => creditsNumber(Number.NaN)).toThrow(RangeError);
    expect(() => formatCredits(2 ** 53)).toThrow(RangeError);
  });

  it('round-trips every amount through the string form', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (milli) => {
        expect(creditsToMilli(formatCredits(milli))).toBe(milli);
        expect(creditsNumber(milli) * 1000).toBeCloseTo(milli, 3);
      }),
    );
  });
});
