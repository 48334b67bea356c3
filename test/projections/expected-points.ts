// Each club's expected points over its remaining fixtures computed without the sampler: 3 P(win) + P(draw)
// of each fixture from exact Poisson sums, averaged over the season's strength perturbation (the two
// clubs' log-strength difference is normal with variance 2 sd²). The sampler's tests and the API's test
// compare the simulated seasons with it.
import type { RemainingFixture, SeasonInput } from '../../src/projections/season-sampler.js';

function poissonPmf(mean: number, max: number): number[] {
  const pmf = [Math.exp(-mean)];
  for (let k = 1; k <= max; k++) pmf.push((pmf[k - 1]! * mean) / k);
  return pmf;
}

/** Home and away expected points of one fixture whose strength ratio is `ratio`. */
function fixturePoints(f: RemainingFixture, ratio: number): { home: number; away: number } {
  const home = poissonPmf(f.homeExpectedGoals * ratio, 30);
  const away = poissonPmf(f.awayExpectedGoals / ratio, 30);
  let win = 0;
  let draw = 0;
  let loss = 0;
  home.forEach((ph, i) => {
    away.forEach((pa, j) => {
      if (i > j) win += ph * pa;
      else if (i === j) draw += ph * pa;
      else loss += ph * pa;
    });
  });
  return { home: 3 * win + draw, away: 3 * loss + draw };
}

/**
 * Expected points of each club over its remaining fixtures: 3 P(win) + P(draw) of each, averaged over the
 * season's strength perturbations (the two clubs' log-strength difference is normal, variance 2 sd²).
 */
export function expectedPointsByFixture(input: SeasonInput): number[] {
  const out = new Array<number>(input.clubs).fill(0);
  const sd = Math.SQRT2 * input.strengthSd;
  const nodes = sd === 0 ? [{ d: 0, w: 1 }] : gridNodes(sd);
  for (const f of input.remaining) {
    for (const { d, w } of nodes) {
      const points = fixturePoints(f, Math.exp(d));
      out[f.home]! += w * points.home;
      out[f.away]! += w * points.away;
    }
  }
  return out;
}

/** A normal N(0, sd²) as weighted points on ±6 sd. */
function gridNodes(sd: number): { d: number; w: number }[] {
  const nodes: { d: number; w: number }[] = [];
  for (let i = -120; i <= 120; i++) nodes.push({ d: (i / 20) * sd, w: Math.exp(-((i / 20) ** 2) / 2) });
  const total = nodes.reduce((sum, node) => sum + node.w, 0);
  return nodes.map((node) => ({ d: node.d, w: node.w / total }));
}
