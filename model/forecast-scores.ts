// Scores of probability forecasts: ranked probability score (Epstein 1969) and log loss of 1X2,
// log loss of binary markets, and expected calibration error (equal-width bins).

export type Outcome = 'home' | 'draw' | 'away';

export interface ThreeWay {
  home: number;
  draw: number;
  away: number;
}

/** Smallest probability a log loss is taken of, so one impossible-looking result cannot make it infinite. */
const PROBABILITY_FLOOR = 1e-6;

/** RPS of an ordered three-way forecast (home, draw, away): half the sum of squared cumulative gaps. */
export function rankedProbabilityScore(forecast: ThreeWay, outcome: Outcome): number {
  const observed: ThreeWay = { home: 0, draw: 0, away: 0 };
  observed[outcome] = 1;
  const gapAfterHome = forecast.home - observed.home;
  const gapAfterDraw = forecast.home + forecast.draw - (observed.home + observed.draw);
  return (gapAfterHome * gapAfterHome + gapAfterDraw * gapAfterDraw) / 2;
}

export function threeWayLogLoss(forecast: ThreeWay, outcome: Outcome): number {
  return -Math.log(Math.max(forecast[outcome], PROBABILITY_FLOOR));
}

export function binaryLogLoss(probability: number, happened: boolean): number {
  const p = happened ? probability : 1 - probability;
  return -Math.log(Math.max(p, PROBABILITY_FLOOR));
}

export interface CalibrationBin {
  from: number;
  to: number;
  count: number;
  meanForecast: number;
  observedRate: number;
}

export interface Calibration {
  /** Σ over bins of (count / total) · |mean forecast − observed rate|. */
  ece: number;
  bins: CalibrationBin[];
}

/** Expected calibration error of binary forecasts over `binCount` equal-width bins of [0, 1]. */
export function expectedCalibrationError(
  forecasts: readonly { probability: number; happened: boolean }[],
  binCount = 10,
): Calibration {
  const sums = Array.from({ length: binCount }, () => ({ count: 0, forecast: 0, hits: 0 }));
  for (const { probability, happened } of forecasts) {
    const bin = sums[Math.min(binCount - 1, Math.max(0, Math.floor(probability * binCount)))]!;
    bin.count++;
    bin.forecast += probability;
    if (happened) bin.hits++;
  }
  const total = forecasts.length;
  let ece = 0;
  const bins: CalibrationBin[] = [];
  sums.forEach((bin, i) => {
    if (bin.count === 0) return;
    const meanForecast = bin.forecast / bin.count;
    const observedRate = bin.hits / bin.count;
    ece += (bin.count / total) * Math.abs(meanForecast - observedRate);
    bins.push({ from: i / binCount, to: (i + 1) / binCount, count: bin.count, meanForecast, observedRate });
  });
  return { ece, bins };
}

export function outcomeOf(homeGoals: number, awayGoals: number): Outcome {
  if (homeGoals > awayGoals) return 'home';
  if (homeGoals === awayGoals) return 'draw';
  return 'away';
}

/** The 1X2 scores of forecasts (one per match, in the order of `outcomes`). */
export interface ThreeWayScores {
  rps_1x2: number;
  log_loss_1x2: number;
  /** The expected calibration error of each outcome's probability, averaged over the three. */
  ece_1x2: number;
}

export function threeWayScores(forecasts: readonly ThreeWay[], outcomes: readonly Outcome[]): ThreeWayScores {
  let rps = 0;
  let logLoss = 0;
  const classwise: Record<Outcome, { probability: number; happened: boolean }[]> = {
    home: [],
    draw: [],
    away: [],
  };
  forecasts.forEach((f, i) => {
    const outcome = outcomes[i]!;
    rps += rankedProbabilityScore(f, outcome);
    logLoss += threeWayLogLoss(f, outcome);
    for (const k of ['home', 'draw', 'away'] as const) {
      classwise[k].push({ probability: f[k], happened: outcome === k });
    }
  });
  const n = Math.max(1, forecasts.length);
  return {
    rps_1x2: rps / n,
    log_loss_1x2: logLoss / n,
    ece_1x2:
      (expectedCalibrationError(classwise.home).ece +
        expectedCalibrationError(classwise.draw).ece +
        expectedCalibrationError(classwise.away).ece) /
      3,
  };
}
