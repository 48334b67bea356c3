// A run fitted to the market (docs/model.md, "Fitting to the market"): the compile finds the two sides'
// base goals at which the model's own prices, under all its dynamics, equal the probabilities the domain
// read from the bookmaker's odds (match inputs `market.targets`). The prices come from the exact forward
// pass of market-pass.ts over the lineups' strength buckets as the engines draw them; the two base goals
// are solved by Broyden's method, first on the pass at each side's mean strength multiplier (one pass an
// iteration), then corrected by the difference the three-point mixture of buckets makes (a round or two).
import * as layout from '../engine-contract/layout.js';
import type { MarketFitKind, MarketInputs } from '../engine-contract/match-inputs.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import { ratedGoalsOfBase } from './compile-calibration.js';
import { fixedXiStrength, strengthBucketOf } from './compile-lineups.js';
import { type AddedTimeModel, type EventRates, rateFactors, setBaseGoals } from './compile-rates.js';
import { bookingHazards, createPassWork, type PassPrices, type PassWork, passPrices } from './market-pass.js';

/** How close a fit must come to each price it fits (docs/api.md §4.3, "Fitted to the market"). */
export const FIT_TOLERANCE = 0.002;
/** Base goals a side may be fitted to: outside them the market is beyond the model's reach. */
const MIN_BASE = 0.02;
const MAX_BASE = 8;

/** A market's four prices, named as its targets are (match-inputs.ts): what a fit reached, or the model's own. */
export type MarketPrices = Record<keyof MarketInputs['targets'], number>;

/** What a fit found: the document's `calibration` section is made from it (document.ts). */
export interface MarketFit {
  fit: MarketFitKind;
  /** The quantities the two goals were solved for (docs/api.md §2.3, `calibration.fitted_to`). */
  fittedTo: string[];
  /** Whether every fitted quantity came within FIT_TOLERANCE with goals inside the model's range. */
  reached: boolean;
  /** Base goals of the fitted run (the compile's calibration). */
  base: [number, number];
  /** The rated goals whose calibration gives those base goals. */
  ratedGoals: [number, number];
  /** The model's own rated goals, unfitted. */
  modelRatedGoals: [number, number];
  achieved: MarketPrices;
}

/**
 * The probability of each strength bucket of `side`'s XI as the engines draw it (fallback/engine.ts
 * setUpDraw): a fixed XI has one; a predicted XI's goalkeeper and outfield picks are systematic samples
 * whose choice is the same between breakpoints, so each stretch of offsets is one XI.
 */
export function strengthBuckets(fixture: Uint32Array, side: number): Float64Array {
  const base = layout.sideBase(side);
  const buckets = new Float64Array(layout.STRENGTH_BUCKETS);
  const weight = (slot: number) => fixture[base + layout.S_GOAL_WEIGHT + slot]!;
  const bucketOf = (strength: number) => strengthBucketOf(fixture, base, strength);
  if (fixture[base + layout.S_LINEUP_MODE] === layout.LINEUP_MODE_FIXED) {
    buckets[bucketOf(fixedXiStrength(fixture, base))] = 1;
    return buckets;
  }
  const keepers: { weight: number; p: number }[] = [];
  if (fixture[base + layout.S_LINEUP_MODE] === layout.LINEUP_MODE_PREDICTED) {
    let before = 0;
    for (let i = 0; i < fixture[base + layout.S_KEEPER_COUNT]!; i++) {
      const cum = fixture[base + layout.S_KEEPER_CUM + i]!;
      keepers.push({
        weight: weight(fixture[base + layout.S_KEEPER_ORDER + i]!),
        p: (cum - before) / layout.SAMPLING_UNIT,
      });
      before = cum;
    }
  } else {
    keepers.push({ weight: 0, p: 1 });
  }
  const count = fixture[base + layout.S_OUTFIELD_COUNT]!;
  const picks = fixture[base + layout.S_OUTFIELD_PICKS]!;
  const cum = (i: number) => fixture[base + layout.S_OUTFIELD_CUM + i]!;
  const points = new Set<number>([0, layout.SAMPLING_UNIT]);
  for (let j = 0; j < picks; j++) {
    for (let i = 0; i < count; i++) {
      const point = cum(i) - j * layout.SAMPLING_UNIT;
      if (point > 0 && point < layout.SAMPLING_UNIT) points.add(point);
    }
  }
  const sorted = [...points].sort((a, b) => a - b);
  for (let k = 0; k + 1 < sorted.length; k++) {
    const offset = sorted[k]!;
    let strength = 0;
    let i = 0;
    for (let j = 0; j < picks; j++) {
      while (cum(i) <= offset + j * layout.SAMPLING_UNIT) i++;
      strength += weight(fixture[base + layout.S_OUTFIELD_ORDER + i]!);
    }
    const p = (sorted[k + 1]! - offset) / layout.SAMPLING_UNIT;
    for (const keeper of keepers) buckets[bucketOf(strength + keeper.weight)]! += p * keeper.p;
  }
  return buckets;
}

/** What a fit needs of the compile: the fixture's constants and rates, the model's base and the lineups' buckets. */
export interface FitSetting {
  market: MarketInputs;
  /** The fixture's constants (its league profile applied). */
  params: ModelParams;
  added: AddedTimeModel;
  /** The model's calibrated base goals and the rated goals they were calibrated to. */
  modelBase: readonly [number, number];
  modelRatedGoals: readonly [number, number];
  /** strengthBuckets of each side. */
  buckets: readonly [Float64Array, Float64Array];
  /** Each bucket's goal multiplier (compile.ts). */
  multipliers: readonly number[];
}

/** A thread's reusable arrays for fits (compile.ts CalibrationCache holds one). */
export type FitWork = PassWork;
export const createFitWork = createPassWork;

type Vector = [number, number];

/** The fit's two prices functions: the exact mixture, and the pass at the mean multipliers. */
interface Pricing {
  approximate: (base: Vector) => PassPrices;
  exact: (base: Vector) => PassPrices;
  /** One strength pair (both XIs fixed): the two are the same. */
  single: boolean;
  rates: EventRates;
}

function pricing(setting: Omit<FitSetting, 'market'>, work: FitWork): Pricing {
  const { params, added } = setting;
  const rates = rateFactors(params, added);
  setBaseGoals(rates, setting.modelBase);
  const hazards = bookingHazards(
    rates,
    added,
    params.cards.booked_player_factor,
    params.substitutions.max_per_side,
  );
  const mixture = strengthPoints(
    logMoments(setting.buckets[0], setting.multipliers),
    logMoments(setting.buckets[1], setting.multipliers),
  );
  const mean: Vector = [0, 0];
  for (const { weight, strength } of mixture) {
    mean[0] += weight * strength[0];
    mean[1] += weight * strength[1];
  }
  const single = mixture.length === 1;
  const onePass = (base: Vector, strength: readonly [number, number]) =>
    passPrices(rates, added, base, strength, hazards, work);
  const approximate = (base: Vector) => onePass(base, single ? mixture[0]!.strength : mean);
  const exact = (base: Vector): PassPrices => {
    if (single) return approximate(base);
    const sum: PassPrices = { homeWin: 0, draw: 0, awayWin: 0, over25: 0, goals: [0, 0] };
    for (const { weight, strength } of mixture) {
      const p = onePass(base, strength);
      sum.homeWin += weight * p.homeWin;
      sum.draw += weight * p.draw;
      sum.over25 += weight * p.over25;
      sum.goals[0] += weight * p.goals[0];
      sum.goals[1] += weight * p.goals[1];
    }
    sum.awayWin = 1 - sum.homeWin - sum.draw;
    return sum;
  };
  return { approximate, exact, single, rates };
}

/**
 * What a fit solves for (docs/model.md, "Fitting to the market"): with a total, the home-minus-away
 * balance of the 1X2 and over 2.5; with the 1X2 alone, home and away wins (`exact`, so the draw too),
 * or the balance and the model's expected goals in all (`supremacy`, `level`).
 */
function residualOf(market: MarketInputs, level: number): (p: PassPrices) => Vector {
  const { targets } = market;
  const supremacy = targets.home_win - targets.away_win;
  if (targets.over_2_5 !== undefined) {
    const over = targets.over_2_5;
    return (p) => [p.homeWin - p.awayWin - supremacy, p.over25 - over];
  }
  if (market.fit === 'supremacy')
    return (p) => [p.homeWin - p.awayWin - supremacy, (p.goals[0] + p.goals[1] - level) / level];
  return (p) => [p.homeWin - targets.home_win, p.awayWin - targets.away_win];
}

/** The model's own prices, unfitted: the exact pass at its calibrated base goals (compile.ts modelPricesOfInputs). */
export function modelPrices(
  setting: Omit<FitSetting, 'market'>,
  work: FitWork = createFitWork(),
): MarketPrices {
  const p = pricing(setting, work).exact([setting.modelBase[0], setting.modelBase[1]]);
  return { home_win: p.homeWin, draw: p.draw, away_win: p.awayWin, over_2_5: p.over25 };
}

export function fitMarket(setting: FitSetting, work: FitWork = createFitWork()): MarketFit {
  const { market, added } = setting;
  const prices = pricing(setting, work);
  const modelBase: Vector = [setting.modelBase[0], setting.modelBase[1]];
  const withTotal = market.targets.over_2_5 !== undefined;
  // A supremacy fit keeps the goals the model expects in all: its level.
  let level = 0;
  if (market.fit === 'supremacy' && !withTotal) {
    const model = prices.exact(modelBase);
    level = model.goals[0] + model.goals[1];
  }
  const found = solveMixture(prices, residualOf(market, level), modelBase);
  const base = fromLog(found.x);
  const achieved = marketPrices(found.prices);
  const { targets } = market;
  const supremacy = targets.home_win - targets.away_win;
  const misses = withTotal
    ? [achieved.home_win - achieved.away_win - supremacy, achieved.over_2_5 - targets.over_2_5!]
    : market.fit === 'supremacy'
      ? [achieved.home_win - achieved.away_win - supremacy]
      : [
          achieved.home_win - targets.home_win,
          achieved.draw - targets.draw,
          achieved.away_win - targets.away_win,
        ];
  const inRange = base.every((b) => b >= MIN_BASE && b <= MAX_BASE);
  return {
    fit: market.fit,
    fittedTo: withTotal
      ? ['home_win_minus_away_win', 'over_2_5']
      : market.fit === 'supremacy'
        ? ['home_win_minus_away_win', 'expected_goals_total']
        : ['home_win', 'draw', 'away_win'],
    reached: inRange && misses.every((m) => Math.abs(m) <= FIT_TOLERANCE),
    base,
    ratedGoals: ratedGoalsOfBase(prices.rates, added, base),
    modelRatedGoals: [setting.modelRatedGoals[0], setting.modelRatedGoals[1]],
    achieved,
  };
}

/** The solver stops once every fitted quantity is this close: far inside FIT_TOLERANCE. */
const SOLVE_TOLERANCE = 1e-5;
const SOLVE_ITERATIONS = 24;
/** The first round's solve, whose solution is only where the mixture is first priced. */
const FIRST_ROUND_TOLERANCE = 1e-3;
/** At most this many rounds of the correction for the lineups' strength mixture. */
const MIXTURE_ROUNDS = 4;
/** A round whose solution moved each log base goal less than this ends the solve (solveMixture). */
const MIXTURE_SETTLED = 0.05;

/**
 * The log base goals at which `residual` of the exact prices is zero: solved on the pass at the mean
 * multipliers (one pass an iteration), corrected by the mixture's difference at each round's solution.
 * The mixture (three passes) is priced once a round; after a round whose solution moved the goals less
 * than MIXTURE_SETTLED, the prices there are the pass's plus the mixture's difference at the round before
 * (the difference changes with the goals far more slowly than the prices do: over 50 random markets such
 * prices were within 2e-5 of the mixture's own), so the round ends the solve without pricing it again.
 */
function solveMixture(
  prices: Pricing,
  residual: (p: PassPrices) => Vector,
  start: Vector,
): { x: Vector; prices: PassPrices } {
  let x: Vector = [Math.log(start[0]), Math.log(start[1])];
  let correction: Vector = [0, 0];
  let jacobian: number[] | null = null;
  // The residual at x of the round's function, when known: after a round it is the mixture's residual.
  let known: Vector | null = null;
  // The mixture's prices minus the pass's, at the last point the mixture was priced.
  let difference: PassPrices | null = null;
  // The pass's prices at the round before's solution.
  let previousPass: PassPrices | null = null;
  for (let round = 0; ; round++) {
    const c = correction;
    let last: PassPrices | null = null;
    const solved = solve(
      (y) => {
        last = prices.approximate(fromLog(y));
        const r = residual(last);
        return [r[0] + c[0], r[1] + c[1]];
      },
      x,
      known,
      jacobian,
      // The first round only finds where to take the mixture's difference: near is enough.
      round === 0 && !prices.single ? FIRST_ROUND_TOLERANCE : SOLVE_TOLERANCE,
    );
    // The pass's prices at the round's solution (when the solver took no step there, the round before's).
    const pass: PassPrices = last ?? previousPass ?? prices.approximate(fromLog(solved.x));
    const moved = Math.max(Math.abs(solved.x[0] - x[0]), Math.abs(solved.x[1] - x[1]));
    x = solved.x;
    jacobian = solved.jacobian;
    // One strength pair: the pass is the prices.
    if (prices.single) return { x, prices: pass };
    // From the second round on there is a difference: the last round always ends here.
    if (difference && (moved < MIXTURE_SETTLED || round === MIXTURE_ROUNDS)) {
      return { x, prices: addPrices(pass, difference) };
    }
    const mixture = prices.exact(fromLog(x));
    const r = residual(mixture);
    if (Math.max(Math.abs(r[0]), Math.abs(r[1])) < SOLVE_TOLERANCE) return { x, prices: mixture };
    difference = addPrices(mixture, pass, -1);
    previousPass = pass;
    // The mixture's residual minus the pass's at x (the round's function, c of it the correction's).
    correction = [c[0] + r[0] - solved.residual[0], c[1] + r[1] - solved.residual[1]];
    // With it the round's function at x is the mixture's residual there.
    known = r;
  }
}

/** a + sign × b, price by price. */
function addPrices(a: PassPrices, b: PassPrices, sign = 1): PassPrices {
  return {
    homeWin: a.homeWin + sign * b.homeWin,
    draw: a.draw + sign * b.draw,
    awayWin: a.awayWin + sign * b.awayWin,
    over25: a.over25 + sign * b.over25,
    goals: [a.goals[0] + sign * b.goals[0], a.goals[1] + sign * b.goals[1]],
  };
}

/** The mean and standard deviation of a side's log strength multiplier over its buckets. */
function logMoments(buckets: Float64Array, multipliers: readonly number[]): { mean: number; sd: number } {
  let mean = 0;
  let square = 0;
  buckets.forEach((p, b) => {
    const log = Math.log(multipliers[b]!);
    mean += p * log;
    square += p * log * log;
  });
  return { mean, sd: Math.sqrt(Math.max(0, square - mean * mean)) };
}

/**
 * The two sides' strength mixture as at most three pairs of multipliers of equal weight whose log
 * multipliers have the buckets' means, variances and no correlation (the points of an equilateral
 * triangle; pairs that coincide, as when a side's XI is fixed, are merged). The prices are smooth in each
 * side's goals, so these points give the mixture's prices to within its third moments' share, some 1e-5
 * (docs/model.md, "Fitting to the market"), with three passes a price instead of up to twenty-five.
 */
function strengthPoints(
  home: { mean: number; sd: number },
  away: { mean: number; sd: number },
): { weight: number; strength: [number, number] }[] {
  const corners: Vector[] = [
    [0, Math.SQRT2],
    [-Math.sqrt(1.5), -Math.SQRT1_2],
    [Math.sqrt(1.5), -Math.SQRT1_2],
  ];
  const points: { weight: number; strength: [number, number] }[] = [];
  for (const [u, v] of corners) {
    const strength: [number, number] = [Math.exp(home.mean + home.sd * u), Math.exp(away.mean + away.sd * v)];
    const same = points.find((p) => p.strength[0] === strength[0] && p.strength[1] === strength[1]);
    if (same) same.weight += 1 / 3;
    else points.push({ weight: 1 / 3, strength });
  }
  return points;
}

function fromLog(x: Vector): Vector {
  // Kept inside the solver's range so a market beyond reach cannot run the pass on absurd rates.
  const clamp = (v: number) => Math.min(Math.log(MAX_BASE * 2), Math.max(Math.log(MIN_BASE / 2), v));
  return [Math.exp(clamp(x[0])), Math.exp(clamp(x[1]))];
}

function marketPrices(p: PassPrices): MarketPrices {
  return { home_win: p.homeWin, draw: p.draw, away_win: p.awayWin, over_2_5: p.over25 };
}

/**
 * f(x) = 0 for two unknowns by Broyden's method: the Jacobian by forward differences once (or the one a
 * previous round left), then updated by each step's secant; steps longer than 1 (in log goals) are
 * shortened. With `residualAtStart` f(start) is not evaluated again; x is the last point f was evaluated
 * at unless f never was.
 */
function solve(
  f: (x: Vector) => Vector,
  start: Vector,
  residualAtStart: Vector | null,
  jacobian: number[] | null,
  tolerance: number,
): { x: Vector; jacobian: number[]; residual: Vector } {
  let x = start;
  let r = residualAtStart ?? f(x);
  let j = jacobian ?? finiteJacobian(f, x, r);
  for (let iteration = 0; iteration < SOLVE_ITERATIONS; iteration++) {
    if (Math.max(Math.abs(r[0]), Math.abs(r[1])) < tolerance) break;
    const det = j[0]! * j[3]! - j[1]! * j[2]!;
    if (!(Math.abs(det) > 1e-300)) break;
    let dx: Vector = [-(j[3]! * r[0] - j[1]! * r[1]) / det, -(-j[2]! * r[0] + j[0]! * r[1]) / det];
    const length = Math.hypot(dx[0], dx[1]);
    if (length > 1) dx = [dx[0] / length, dx[1] / length];
    const next: Vector = [x[0] + dx[0], x[1] + dx[1]];
    const rNext = f(next);
    const dr = [rNext[0] - r[0], rNext[1] - r[1]];
    const norm = dx[0] * dx[0] + dx[1] * dx[1];
    if (norm > 0) {
      const u0 = (dr[0]! - (j[0]! * dx[0] + j[1]! * dx[1])) / norm;
      const u1 = (dr[1]! - (j[2]! * dx[0] + j[3]! * dx[1])) / norm;
      j = [j[0]! + u0 * dx[0], j[1]! + u0 * dx[1], j[2]! + u1 * dx[0], j[3]! + u1 * dx[1]];
    }
    x = next;
    r = rNext;
  }
  return { x, jacobian: j, residual: r };
}

const STEP = 1e-5;

function finiteJacobian(f: (x: Vector) => Vector, x: Vector, r: Vector): number[] {
  const a = f([x[0] + STEP, x[1]]);
  const b = f([x[0], x[1] + STEP]);
  return [(a[0] - r[0]) / STEP, (b[0] - r[0]) / STEP, (a[1] - r[1]) / STEP, (b[1] - r[1]) / STEP];
}
