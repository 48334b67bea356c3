// The document's `calibration` and `value` sections (docs/api.md §2.3): what a run fitted to the market
// found (market-fit.ts), and the run's prices against odds a client was offered. Both are absent from a
// document whose request carried neither, so such documents keep their bytes.
import { z } from 'zod';
import type { MarketInputs } from '../engine-contract/match-inputs.js';
import type { MarketFit } from './market-fit.js';

const probability = z.number().min(0).max(1);
const prices = z.object({
  home_win: probability,
  draw: probability,
  away_win: probability,
  over_2_5: probability.optional(),
});
const goalsPair = z.object({ home: z.number(), away: z.number() });

export const calibrationSectionSchema = z.object({
  /** The margin removal the odds were read with (docs/api.md §4.13). */
  method: z.string(),
  fit: z.enum(['exact', 'supremacy']),
  /** What the two goals were solved for (docs/model.md, "Fitting to the market"). */
  fitted_to: z.array(z.string()),
  odds: z.object({ '1x2': z.array(z.number()), 'total_2.5': z.array(z.number()).optional() }),
  /** The odds' probabilities, margin removed. */
  targets: prices,
  /** The fitted model's own prices by the compile's exact pass (the run's draws estimate them). */
  achieved: prices.required(),
  /** Rated goals of the fitted run (its expected goals under the dynamics at neutral lineups). */
  fitted_goals: goalsPair,
  /** The model's own rated goals, from the ratings. */
  rated_goals: goalsPair,
});
export type CalibrationSection = z.infer<typeof calibrationSectionSchema>;

export function calibrationSection(market: MarketInputs, fit: MarketFit): CalibrationSection {
  return {
    method: market.margin_method,
    fit: fit.fit,
    fitted_to: fit.fittedTo,
    odds: market.odds,
    targets: market.targets,
    achieved: fit.achieved,
    fitted_goals: { home: fit.ratedGoals[0], away: fit.ratedGoals[1] },
    rated_goals: { home: fit.modelRatedGoals[0], away: fit.modelRatedGoals[1] },
  };
}

/** The document's figures value can be asked of: result, double chance, totals, both teams to score, half time. */
export interface PricedOutcomes {
  result: { home_win: number; draw: number; away_win: number };
  double_chance: { home_or_draw: number; home_or_away: number; draw_or_away: number };
  totals: readonly { line: number; over: number; under: number }[];
  btts: { yes: number; no: number };
  half_time: { home_win: number; draw: number; away_win: number };
}

const TOTAL_LINES = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5] as const;
const lineKey = (line: number) => String(line).replace('.', '_');

/**
 * Every outcome `offered_odds` may name (docs/api.md §4.3, "Value against offered prices"), in the order
 * the value section lists them, with where the document prices it.
 */
export const VALUE_OUTCOMES: readonly { key: string; of: (p: PricedOutcomes) => number }[] = [
  { key: 'home_win', of: (p) => p.result.home_win },
  { key: 'draw', of: (p) => p.result.draw },
  { key: 'away_win', of: (p) => p.result.away_win },
  { key: 'home_or_draw', of: (p) => p.double_chance.home_or_draw },
  { key: 'home_or_away', of: (p) => p.double_chance.home_or_away },
  { key: 'draw_or_away', of: (p) => p.double_chance.draw_or_away },
  ...TOTAL_LINES.flatMap((line) => [
    { key: `over_${lineKey(line)}`, of: (p: PricedOutcomes) => p.totals.find((t) => t.line === line)!.over },
    {
      key: `under_${lineKey(line)}`,
      of: (p: PricedOutcomes) => p.totals.find((t) => t.line === line)!.under,
    },
  ]),
  { key: 'btts_yes', of: (p) => p.btts.yes },
  { key: 'btts_no', of: (p) => p.btts.no },
  { key: 'half_time_home_win', of: (p) => p.half_time.home_win },
  { key: 'half_time_draw', of: (p) => p.half_time.draw },
  { key: 'half_time_away_win', of: (p) => p.half_time.away_win },
];
export const VALUE_KEYS: readonly string[] = VALUE_OUTCOMES.map((outcome) => outcome.key);

export const valueEntrySchema = z.object({
  offered_odds: z.number(),
  /** The run's probability of the outcome. */
  probability,
  /** 1 / probability; null when the run saw the outcome in no draw. */
  fair_odds: z.number().nullable(),
  /** probability × offered_odds − 1: the expected return of a stake of 1. */
  edge: z.number(),
  /** The edge's Monte Carlo standard error: offered_odds × √(p(1 − p) / draws). */
  edge_standard_error: z.number().min(0),
  /** The Kelly stake as a share of a bankroll, edge / (offered_odds − 1); 0 when the edge is not positive. */
  kelly: z.number().min(0),
});
export const valueSectionSchema = z.record(z.string(), valueEntrySchema);
export type ValueSection = z.infer<typeof valueSectionSchema>;

/** The value section of `offered` (keys of VALUE_KEYS, odds above 1) against the run's prices. */
export function valueSection(
  offered: Record<string, number>,
  priced: PricedOutcomes,
  draws: number,
): ValueSection {
  const section: ValueSection = {};
  for (const { key, of } of VALUE_OUTCOMES) {
    const odds = offered[key];
    if (odds === undefined) continue;
    const p = of(priced);
    const edge = p * odds - 1;
    section[key] = {
      offered_odds: odds,
      probability: p,
      fair_odds: p > 0 ? 1 / p : null,
      edge,
      edge_standard_error: odds * Math.sqrt((p * (1 - p)) / draws),
      kelly: edge > 0 ? edge / (odds - 1) : 0,
    };
  }
  return section;
}
