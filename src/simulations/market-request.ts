// A request's market (docs/api.md §4.3, "Fitted to the market" and "Value against offered prices"): its
// bookmaker odds read as probabilities here, in the domain, with the one margin removal the service has
// (src/market), and handed to the engine as plain targets in the match inputs; the market fit itself is
// the compile's (src/engine/market-fit.ts), asked here first so that a market the model cannot reach is
// refused before anything is held.

import { marketFitOfInputs } from '../engine/compile.js';
import { VALUE_KEYS } from '../engine/document-value.js';
import { FIT_TOLERANCE, type MarketFit } from '../engine/market-fit.js';
import type { MarketFitKind, MarketInputs, MatchInputs } from '../engine-contract/match-inputs.js';
import { defaultModelParams } from '../engine-contract/model-params.js';
import { ApiError } from '../errors.js';
import {
  DEFAULT_MARGIN_METHOD,
  MAX_DECIMAL_ODDS,
  type MarginMethod,
  removeMargin,
} from '../market/margin-removal.js';

/** The request's `market`, as the body schema (src/http/schemas/simulations.ts) admits it. */
export interface MarketRequest {
  odds: { '1x2': number[]; 'total_2.5'?: number[] | undefined };
  margin_method?: MarginMethod | undefined;
  fit?: MarketFitKind | undefined;
}

/** `offered_odds`: decimal odds by the outcome names of document-value.ts VALUE_KEYS. */
export type OfferedOdds = Record<string, number>;

/** `offered_odds` as a request gives it (the body schema has an optional field per outcome). */
export type OfferedOddsRequest = Readonly<Record<string, number | undefined>>;

const join = (prefix: string, field: string) => (prefix ? `${prefix}.${field}` : field);

/**
 * The market inputs of `market`: each market's margin removed by its method (odds at or below 1.0, or an
 * overround below 1 or above 1.5, answer 400 parameter_invalid naming the odds, from removeMargin).
 */
export function marketInputs(market: MarketRequest, prefix: string): MarketInputs {
  const method = market.margin_method ?? DEFAULT_MARGIN_METHOD;
  const fit = market.fit ?? 'exact';
  const field = join(prefix, 'market');
  const total = market.odds['total_2.5'];
  if (fit === 'supremacy' && total !== undefined) {
    throw new ApiError('parameter_invalid', {
      param: `${field}.fit`,
      message:
        `\`${field}.fit\`: "supremacy" keeps the model's level of goals, which a total would set; ` +
        'send the total with fit "exact" (the default), or leave the total out.',
    });
  }
  const [homeWin, draw, awayWin] = removeMargin(
    market.odds['1x2'],
    method,
    `${field}.odds.1x2`,
  ).probabilities;
  const targets: MarketInputs['targets'] = { home_win: homeWin!, draw: draw!, away_win: awayWin! };
  if (total !== undefined)
    targets.over_2_5 = removeMargin(total, method, `${field}.odds.total_2.5`).probabilities[0]!;
  const odds: MarketInputs['odds'] = { '1x2': [...market.odds['1x2']] };
  if (total !== undefined) odds['total_2.5'] = [...total];
  return { odds, margin_method: method, fit, targets };
}

/**
 * The market fit of a fitted run's inputs before anything is held: on the job threads of this process's
 * engine, off the event loop (some 4 ms a fit, a fitted batch's items each one); an API process that runs
 * no engine fits here.
 */
export function marketFitFor(
  engine: { fitMarket?: ((match: MatchInputs & { market: MarketInputs }) => Promise<MarketFit>) | undefined },
  match: MatchInputs & { market: MarketInputs },
): Promise<MarketFit> {
  return engine.fitMarket
    ? engine.fitMarket(match)
    : Promise.resolve(marketFitOfInputs(match, defaultModelParams));
}

/**
 * Refuses a fitted run whose market the model cannot reach (400 market_unreachable): the compile's own
 * fit (`fit`, compile.ts marketFitOfInputs), run once before anything is held.
 */
export function checkMarketReachable(
  match: MatchInputs & { market: MarketInputs },
  fit: MarketFit,
  prefix: string,
): void {
  if (fit.reached) return;
  const field = join(prefix, 'market');
  throw new ApiError('market_unreachable', {
    param: `${field}.odds`,
    message:
      `\`${field}.odds\`: the model cannot reproduce these prices within ${FIT_TOLERANCE} with any goals ` +
      `for the two sides (it came to ${describe(fit.achieved)} against ${describe(match.market.targets)}).`,
    recovery: {
      targets: match.market.targets,
      achieved: fit.achieved,
      next_step: 'Check the odds belong to this match and market, or fit with "supremacy".',
    },
  });
}

function describe(prices: {
  home_win: number;
  draw: number;
  away_win: number;
  over_2_5?: number | undefined;
}): string {
  const parts = [prices.home_win, prices.draw, prices.away_win].map((p) => p.toFixed(4)).join(' / ');
  return prices.over_2_5 === undefined ? parts : `${parts}, over 2.5 ${prices.over_2_5.toFixed(4)}`;
}

/**
 * `offered_odds` checked and put in the value section's order: every key an outcome the document prices
 * (VALUE_KEYS), every price decimal odds above 1.0 (400 parameter_invalid naming the key otherwise).
 */
export function offeredOdds(offered: OfferedOddsRequest, prefix: string): OfferedOdds {
  const field = join(prefix, 'offered_odds');
  const known = new Set(VALUE_KEYS);
  for (const [key, odds] of Object.entries(offered)) {
    if (odds === undefined) continue;
    if (!known.has(key)) {
      throw new ApiError('parameter_invalid', {
        param: `${field}.${key}`,
        message: `\`${field}.${key}\`: not an outcome the document prices; the outcomes are ${VALUE_KEYS.join(', ')}.`,
      });
    }
    if (!(Number.isFinite(odds) && odds > 1 && odds <= MAX_DECIMAL_ODDS)) {
      throw new ApiError('parameter_invalid', {
        param: `${field}.${key}`,
        message: `\`${field}.${key}\`: decimal odds must be greater than 1.0 and at most ${MAX_DECIMAL_ODDS}; ${odds} was given.`,
      });
    }
  }
  const ordered: OfferedOdds = {};
  for (const key of VALUE_KEYS) {
    const odds = offered[key];
    if (odds !== undefined) ordered[key] = odds;
  }
  return ordered;
}
