// Dixon-Coles team ratings (Dixon & Coles 1997, "Modelling association football scores and
// inefficiencies in the football betting market"): goals are Poisson with
//   log λ_home = intercept + home_advantage + attack[home] − defence[away]
//   log λ_away = intercept + attack[away] − defence[home]
// past matches weighted by exp(−decay · age in days), and the low-score correction τ(ρ) on 0-0, 1-0,
// 0-1 and 1-1. The Poisson part is fitted by block Newton steps (each team's attack and defence has a
// closed-form one-dimensional step because the other teams are held fixed), ρ afterwards by a
// one-dimensional search with the rates fixed: the two-stage fit Dixon and Coles themselves note
// loses almost nothing, since τ touches four scorelines only.

export interface RatedMatch {
  day: number;
  home: string;
  away: string;
  /** The goal signal the ratings learn from: goals, or goals blended with a shot-based figure. */
  homeScore: number;
  awayScore: number;
  /** Actual goals, for the low-score correction (only integer scores have a τ). */
  homeGoals: number;
  awayGoals: number;
}

export interface TeamRating {
  attack: number;
  defence: number;
}

export interface RatingPrior {
  /** Standard deviation of the normal prior on each rating (log scale); Infinity = no prior. */
  sd: number;
  /** Prior mean of a team's ratings; teams not listed get 0 (the league average). */
  meanFor?: (team: string) => TeamRating;
}

export interface RatingFit {
  intercept: number;
  homeAdvantage: number;
  rho: number;
  teams: Map<string, TeamRating>;
  /** Sum of the weights of the matches used: the effective sample size. */
  weight: number;
}

export interface RatingFitOptions {
  /** Day the ratings are for; only matches before it count. */
  asOf: number;
  decayPerDay: number;
  prior: RatingPrior;
  /** Starting point, e.g. the previous fit in a walk-forward (far fewer sweeps needed). */
  start?: RatingFit;
  /** Fit ρ (Dixon-Coles) or keep it at 0 (plain independent Poisson). */
  fitRho?: boolean;
  maxSweeps?: number;
  tolerance?: number;
}

interface Row {
  h: number;
  a: number;
  w: number;
  yh: number;
  ya: number;
  gh: number;
  ga: number;
}

export function fitTeamRatings(matches: readonly RatedMatch[], options: RatingFitOptions): RatingFit {
  const { rows, names, totalWeight } = weightedRows(matches, options.asOf, options.decayPerDay);
  const state = startingState(rows, names, options);
  const { attack, defence, precision } = state;
  const n = names.length;
  const grad = new Float64Array(n);
  const hess = new Float64Array(n);
  const maxSweeps = options.maxSweeps ?? 200;
  const tolerance = options.tolerance ?? 1e-6;
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    let largestStep = 0;
    // Attack of every team at once: given the defences, the teams' attack terms are independent.
    largestStep = Math.max(largestStep, stepRatings(state, grad, hess, 'attack'));
    largestStep = Math.max(largestStep, stepRatings(state, grad, hess, 'defence'));
    // Without a prior the ratings are only identified up to a shift; pin the mean at zero.
    if (precision === 0 && n > 0) {
      centre(attack);
      centre(defence);
    }
    // Intercept and home advantage: one joint 2×2 Newton step.
    largestStep = Math.max(largestStep, stepGoalLevel(state));
    if (largestStep < tolerance) break;
  }

  const teams = new Map<string, TeamRating>();
  names.forEach((name, i) => {
    teams.set(name, { attack: attack[i]!, defence: defence[i]! });
  });
  const fit: RatingFit = {
    intercept: state.intercept,
    homeAdvantage: state.homeAdvantage,
    rho: 0,
    teams,
    weight: totalWeight,
  };
  if (options.fitRho ?? true) fit.rho = fitRho(rows, fit, attack, defence);
  return fit;
}

/** The Poisson fit in progress: ratings by team index, their prior means and the goal level. */
interface RatingState {
  rows: readonly Row[];
  attack: Float64Array;
  defence: Float64Array;
  priorAttack: Float64Array;
  priorDefence: Float64Array;
  /** Precision of the prior (1 / sd²); 0 without one. */
  precision: number;
  intercept: number;
  homeAdvantage: number;
}

/** The matches before `asOf` with their decay weights (negligible ones left out), teams by index. */
function weightedRows(
  matches: readonly RatedMatch[],
  asOf: number,
  decayPerDay: number,
): { rows: Row[]; names: string[]; totalWeight: number } {
  const index = new Map<string, number>();
  const names: string[] = [];
  const rows: Row[] = [];
  let totalWeight = 0;
  for (const match of matches) {
    if (match.day >= asOf) continue;
    const w = Math.exp(-decayPerDay * (asOf - match.day));
    if (w < 1e-6) continue;
    rows.push({
      h: teamIndex(match.home),
      a: teamIndex(match.away),
      w,
      yh: match.homeScore,
      ya: match.awayScore,
      gh: match.homeGoals,
      ga: match.awayGoals,
    });
    totalWeight += w;
  }
  function teamIndex(name: string): number {
    let i = index.get(name);
    if (i === undefined) {
      i = names.length;
      index.set(name, i);
      names.push(name);
    }
    return i;
  }
  return { rows, names, totalWeight };
}

/** Ratings from the options' start (else the prior means) and the prior the fit is pulled towards. */
function startingState(
  rows: readonly Row[],
  names: readonly string[],
  options: RatingFitOptions,
): RatingState {
  const { prior } = options;
  const n = names.length;
  const attack = new Float64Array(n);
  const defence = new Float64Array(n);
  const priorAttack = new Float64Array(n);
  const priorDefence = new Float64Array(n);
  const precision = Number.isFinite(prior.sd) ? 1 / (prior.sd * prior.sd) : 0;
  names.forEach((name, i) => {
    const mean = prior.meanFor?.(name) ?? { attack: 0, defence: 0 };
    priorAttack[i] = mean.attack;
    priorDefence[i] = mean.defence;
    const start = options.start?.teams.get(name) ?? mean;
    attack[i] = start.attack;
    defence[i] = start.defence;
  });
  return {
    rows,
    attack,
    defence,
    priorAttack,
    priorDefence,
    precision,
    intercept: options.start?.intercept ?? Math.log(Math.max(meanScore(rows), 0.1)),
    homeAdvantage: options.start?.homeAdvantage ?? 0.25,
  };
}

/**
 * One Newton step on every team's attack (the defences held) or defence (the attacks held); returns the
 * largest step. A match's home goals move the home attack and the away defence, its away goals the away
 * attack and the home defence; a defence's gradient is an attack's negated (negation is exact, so the
 * sums are the same numbers whichever way they are written).
 */
function stepRatings(
  state: RatingState,
  grad: Float64Array,
  hess: Float64Array,
  ratings: 'attack' | 'defence',
): number {
  const { intercept, homeAdvantage, attack, defence } = state;
  const onAttack = ratings === 'attack';
  const sign = onAttack ? 1 : -1;
  grad.fill(0);
  hess.fill(0);
  for (const r of state.rows) {
    const lh = Math.exp(intercept + homeAdvantage + attack[r.h]! - defence[r.a]!);
    const la = Math.exp(intercept + attack[r.a]! - defence[r.h]!);
    // The team whose rating the home goals' rate moves, and the away goals'.
    const byHome = onAttack ? r.h : r.a;
    const byAway = onAttack ? r.a : r.h;
    grad[byHome]! += sign * (r.w * (r.yh - lh));
    hess[byHome]! += r.w * lh;
    grad[byAway]! += sign * (r.w * (r.ya - la));
    hess[byAway]! += r.w * la;
  }
  return onAttack
    ? newtonSteps(attack, state.priorAttack, grad, hess, state.precision)
    : newtonSteps(defence, state.priorDefence, grad, hess, state.precision);
}

/** Applies each value's Newton step (with its prior) in place; returns the largest step. */
function newtonSteps(
  values: Float64Array,
  prior: Float64Array,
  grad: Float64Array,
  hess: Float64Array,
  precision: number,
): number {
  let largestStep = 0;
  for (let i = 0; i < values.length; i++) {
    const step = clampStep(
      (grad[i]! - precision * (values[i]! - prior[i]!)) / (hess[i]! + precision + 1e-12),
    );
    values[i]! += step;
    largestStep = Math.max(largestStep, Math.abs(step));
  }
  return largestStep;
}

/** One joint Newton step on intercept and home advantage; returns the larger step (0 when singular). */
function stepGoalLevel(state: RatingState): number {
  const { attack, defence } = state;
  let gAll = 0;
  let hAll = 0;
  let gHome = 0;
  let hHome = 0;
  for (const r of state.rows) {
    const lh = Math.exp(state.intercept + state.homeAdvantage + attack[r.h]! - defence[r.a]!);
    const la = Math.exp(state.intercept + attack[r.a]! - defence[r.h]!);
    gAll += r.w * (r.yh - lh + r.ya - la);
    hAll += r.w * (lh + la);
    gHome += r.w * (r.yh - lh);
    hHome += r.w * lh;
  }
  const det = hAll * hHome - hHome * hHome;
  if (!(det > 1e-12)) return 0;
  const stepC = clampStep((hHome * gAll - hHome * gHome) / det);
  const stepH = clampStep((hAll * gHome - hHome * gAll) / det);
  state.intercept += stepC;
  state.homeAdvantage += stepH;
  return Math.max(Math.abs(stepC), Math.abs(stepH));
}

/** Expected goals of a fixture under a fit; unknown teams get `fallback` (default: league average). */
export function expectedGoals(
  fit: RatingFit,
  home: string,
  away: string,
  fallback: (team: string) => TeamRating = () => ({ attack: 0, defence: 0 }),
): { home: number; away: number } {
  const h = fit.teams.get(home) ?? fallback(home);
  const a = fit.teams.get(away) ?? fallback(away);
  return {
    home: Math.exp(fit.intercept + fit.homeAdvantage + h.attack - a.defence),
    away: Math.exp(fit.intercept + a.attack - h.defence),
  };
}

/** Dixon-Coles τ: the factor on the independent-Poisson probability of a low scoreline. */
export function lowScoreCorrection(
  homeGoals: number,
  awayGoals: number,
  lambdaHome: number,
  lambdaAway: number,
  rho: number,
): number {
  if (homeGoals === 0 && awayGoals === 0) return 1 - lambdaHome * lambdaAway * rho;
  if (homeGoals === 0 && awayGoals === 1) return 1 + lambdaHome * rho;
  if (homeGoals === 1 && awayGoals === 0) return 1 + lambdaAway * rho;
  if (homeGoals === 1 && awayGoals === 1) return 1 - rho;
  return 1;
}

function fitRho(rows: readonly Row[], fit: RatingFit, attack: Float64Array, defence: Float64Array): number {
  const low: { w: number; gh: number; ga: number; lh: number; la: number }[] = [];
  for (const r of rows) {
    if (r.gh > 1 || r.ga > 1) continue;
    low.push({
      w: r.w,
      gh: r.gh,
      ga: r.ga,
      lh: Math.exp(fit.intercept + fit.homeAdvantage + attack[r.h]! - defence[r.a]!),
      la: Math.exp(fit.intercept + attack[r.a]! - defence[r.h]!),
    });
  }
  const logLikelihood = (rho: number): number => {
    let total = 0;
    for (const m of low) {
      const tau = lowScoreCorrection(m.gh, m.ga, m.lh, m.la, rho);
      total += m.w * Math.log(Math.max(tau, 1e-12));
    }
    return total;
  };
  return goldenSectionMaximum(logLikelihood, -0.3, 0.3, 1e-5);
}

/** Maximum of a unimodal function on [low, high]. */
function goldenSectionMaximum(f: (x: number) => number, low: number, high: number, tol: number): number {
  const ratio = (Math.sqrt(5) - 1) / 2;
  let a = low;
  let b = high;
  let c = b - ratio * (b - a);
  let d = a + ratio * (b - a);
  let fc = f(c);
  let fd = f(d);
  while (b - a > tol) {
    if (fc > fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - ratio * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + ratio * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2;
}

function meanScore(rows: readonly Row[]): number {
  let goals = 0;
  let weight = 0;
  for (const r of rows) {
    goals += r.w * (r.yh + r.ya);
    weight += 2 * r.w;
  }
  return weight > 0 ? goals / weight : 1.3;
}

function centre(values: Float64Array): void {
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / values.length;
  for (let i = 0; i < values.length; i++) values[i]! -= mean;
}

// Newton on exp-shaped terms can overshoot from a cold start (a team with one heavy defeat); a
// bounded step keeps every sweep an improvement without a line search.
function clampStep(step: number): number {
  return Math.max(-1, Math.min(1, step));
}

/**
 * Refits intercept and home advantage on actual goals with the team ratings held fixed. When the
 * ratings learn from a blended signal (goals and shots on target), the signal's level follows the
 * conversion rate of the past and can drift from the goals actually scored; the level must not.
 */
export function refitGoalLevel(
  matches: readonly RatedMatch[],
  fit: RatingFit,
  options: { asOf: number; decayPerDay: number },
): RatingFit {
  let intercept = fit.intercept;
  let homeAdvantage = fit.homeAdvantage;
  const rows = matches
    .filter((m) => m.day < options.asOf)
    .map((m) => {
      const h = fit.teams.get(m.home) ?? { attack: 0, defence: 0 };
      const a = fit.teams.get(m.away) ?? { attack: 0, defence: 0 };
      return {
        w: Math.exp(-options.decayPerDay * (options.asOf - m.day)),
        homeOffset: h.attack - a.defence,
        awayOffset: a.attack - h.defence,
        gh: m.homeGoals,
        ga: m.awayGoals,
      };
    });
  for (let iteration = 0; iteration < 50; iteration++) {
    let gAll = 0;
    let hAll = 0;
    let gHome = 0;
    let hHome = 0;
    for (const r of rows) {
      const lh = Math.exp(intercept + homeAdvantage + r.homeOffset);
      const la = Math.exp(intercept + r.awayOffset);
      gAll += r.w * (r.gh - lh + r.ga - la);
      hAll += r.w * (lh + la);
      gHome += r.w * (r.gh - lh);
      hHome += r.w * lh;
    }
    const det = hAll * hHome - hHome * hHome;
    if (!(det > 1e-12)) break;
    const stepC = clampStep((hHome * gAll - hHome * gHome) / det);
    const stepH = clampStep((hAll * gHome - hHome * gAll) / det);
    intercept += stepC;
    homeAdvantage += stepH;
    if (Math.abs(stepC) + Math.abs(stepH) < 1e-9) break;
  }
  return { ...fit, intercept, homeAdvantage };
}
