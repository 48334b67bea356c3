// The totals shrink of the walk-forward forecasts (model/goal-totals.ts): the home/away ratio is kept,
// a club's goals-at-either-end rating moves towards the centre, and the mean total over the season's
// pairings is what the ratings gave.
import { describe, expect, it } from 'vitest';
import { shrunkTotal, totalsCentre } from '../../model/goal-totals.js';
import { expectedGoals, type RatingFit } from '../../model/team-ratings.js';

const fit: RatingFit = {
  intercept: 0.1,
  homeAdvantage: 0.25,
  rho: -0.05,
  weight: 100,
  teams: new Map([
    ['open', { attack: 0.3, defence: -0.25 }],
    ['tight', { attack: -0.2, defence: 0.3 }],
    ['strong', { attack: 0.35, defence: 0.3 }],
    ['weak', { attack: -0.3, defence: -0.2 }],
  ]),
};
const clubs = ['open', 'tight', 'strong', 'weak'];
const average = () => ({ attack: 0, defence: 0 });

function pairings(shrink: number): { home: number; away: number }[] {
  const centre = totalsCentre(fit, clubs, shrink, average);
  return clubs.flatMap((home) =>
    clubs
      .filter((away) => away !== home)
      .map((away) => {
        const g = expectedGoals(fit, home, away);
        const s = shrunkTotal({ lambdaHome: g.home, lambdaAway: g.away }, centre, shrink);
        return { home: s.lambdaHome, away: s.lambdaAway };
      }),
  );
}

describe('totals shrink', () => {
  it('keeps each match’s home/away ratio and the mean total over the pairings', () => {
    const plain = pairings(1);
    const shrunk = pairings(0.7);
    const mean = (xs: { home: number; away: number }[]) =>
      xs.reduce((s, x) => s + x.home + x.away, 0) / xs.length;
    expect(mean(shrunk)).toBeCloseTo(mean(plain), 12);
    shrunk.forEach((s, i) => {
      expect(s.home / s.away).toBeCloseTo(plain[i]!.home / plain[i]!.away, 12);
    });
  });

  it('pulls the open and the tight clubs’ matches towards each other', () => {
    const total = (xs: { home: number; away: number }[], i: number) => xs[i]!.home + xs[i]!.away;
    const plain = pairings(1);
    const shrunk = pairings(0.7);
    const highest = plain.reduce((best, _, i) => (total(plain, i) > total(plain, best) ? i : best), 0);
    const lowest = plain.reduce((best, _, i) => (total(plain, i) < total(plain, best) ? i : best), 0);
    expect(total(shrunk, highest)).toBeLessThan(total(plain, highest));
    expect(total(shrunk, lowest)).toBeGreaterThan(total(plain, lowest));
    const logProduct = (xs: { home: number; away: number }[], i: number) =>
      Math.log(xs[i]!.home * xs[i]!.away);
    expect(logProduct(shrunk, highest) - logProduct(shrunk, lowest)).toBeCloseTo(
      0.7 * (logProduct(plain, highest) - logProduct(plain, lowest)),
      12,
    );
  });

  it('leaves rated goals alone at shrink 1', () => {
    const rated = { lambdaHome: 1.7, lambdaAway: 0.9, rho: 0.02 };
    expect(shrunkTotal(rated, totalsCentre(fit, clubs, 1, average), 1)).toEqual(rated);
  });
});
