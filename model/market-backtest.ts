// The market backtest (docs/model.md, "Fitting to the market"): on held-out seasons of results files that
// carry closing odds (football-data.co.uk's files do; `matchsim results fetch` downloads them, and the
// repository's own data has none), how well over 2.5 goals is priced by the model alone, by the model
// fitted to the closing 1X2 (exact and supremacy, src/engine/market-fit.ts), and by the closing total
// itself: log loss and Brier score over the matches that have both closing markets. The model's rated
// goals are the walk-forward ratings' (model/walk-forward.ts), as `matchsim ratings` publishes them.
import {
  type CalibrationCache,
  createCalibrationCache,
  marketFitOfInputs,
  modelPricesOfInputs,
} from '../src/engine/compile.js';
import type { MarketFitKind, MatchInputs } from '../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../src/engine-contract/model-params.js';
import {
  DEFAULT_MARGIN_METHOD,
  MAX_OVERROUND,
  MIN_OVERROUND,
  removeMargin,
} from '../src/market/margin-removal.js';
import type { CommandOutput } from './league-commands.js';
import type { LeagueMatch } from './league-results.js';
import { referenceFixture } from './reference-fixture.js';
import { readResultsFolder } from './results-files.js';
import { walkForward } from './walk-forward.js';

/** One way of pricing over 2.5, scored over the matches that have both closing markets. */
export interface OverScore {
  name: 'model' | 'fitted exact' | 'fitted supremacy' | 'closing total';
  logLoss: number;
  brier: number;
}

export interface MarketBacktest {
  heldOutSeasons: number[];
  /** Held-out matches with closing 1X2 and over/under 2.5 odds: the ones scored. */
  matches: number;
  /** Held-out matches without both closing markets, left out. */
  withoutOdds: number;
  /**
   * Held-out matches whose closing 1X2 or total is not one bookmaker's market (its inverse odds add to
   * less than 1, as best prices across books can, or to more than 1.5: src/market/margin-removal.ts
   * refuses both), left out like those without odds.
   */
  notOneMarket: number;
  marginMethod: string;
  over25: OverScore[];
}

interface Forecast {
  model: number;
  exact: number;
  supremacy: number;
  market: number;
  over: boolean;
}

/**
 * Every way's probability of over 2.5 for one match with closing odds; the three prices from the model
 * share its calibration through `cache` (compile.ts CalibrationCache), made once.
 */
function forecastOf(
  index: number,
  match: LeagueMatch & { closing: { result: number[]; total: number[] } },
  rated: { lambdaHome: number; lambdaAway: number },
  cache: CalibrationCache,
): Forecast {
  const inputs = referenceFixture(index, rated.lambdaHome, rated.lambdaAway);
  const [homeWin, draw, awayWin] = removeMargin(match.closing.result, DEFAULT_MARGIN_METHOD).probabilities;
  const fitted = (fit: MarketFitKind) => {
    const market: NonNullable<MatchInputs['market']> = {
      odds: { '1x2': [...match.closing.result] },
      margin_method: DEFAULT_MARGIN_METHOD,
      fit,
      targets: { home_win: homeWin!, draw: draw!, away_win: awayWin! },
    };
    return marketFitOfInputs({ ...inputs, market }, defaultModelParams, cache).achieved.over_2_5;
  };
  return {
    model: modelPricesOfInputs(inputs, defaultModelParams, cache).over_2_5,
    exact: fitted('exact'),
    supremacy: fitted('supremacy'),
    market: removeMargin(match.closing.total, DEFAULT_MARGIN_METHOD).probabilities[0]!,
    over: match.homeGoals + match.awayGoals > 2.5,
  };
}

/** Whether `odds` are one market whose margin can be removed (MIN_OVERROUND to MAX_OVERROUND). */
function isOneMarket(odds: readonly number[]): boolean {
  const overround = odds.reduce((sum, price) => sum + 1 / price, 0);
  return overround >= MIN_OVERROUND && overround <= MAX_OVERROUND;
}

/** Log loss and Brier score of `p` (each forecast's probability of over 2.5) against the outcomes. */
function scored(
  name: OverScore['name'],
  forecasts: readonly Forecast[],
  p: (f: Forecast) => number,
): OverScore {
  let logLoss = 0;
  let brier = 0;
  for (const forecast of forecasts) {
    const q = Math.min(1 - 1e-12, Math.max(1e-12, p(forecast)));
    logLoss -= forecast.over ? Math.log(q) : Math.log(1 - q);
    brier += ((forecast.over ? 1 : 0) - q) ** 2;
  }
  const n = Math.max(1, forecasts.length);
  return { name, logLoss: logLoss / n, brier: brier / n };
}

export function marketBacktest(
  matches: readonly LeagueMatch[],
  heldOutSeasons: readonly number[],
  onProgress: (message: string) => void = () => {},
): MarketBacktest {
  onProgress(`market backtest: walk-forward ratings over seasons ${heldOutSeasons.join(', ')}`);
  const rated = walkForward(matches, { heldOutSeasons });
  const forecasts: Forecast[] = [];
  const cache = createCalibrationCache();
  let withoutOdds = 0;
  let notOneMarket = 0;
  for (const [index, { match, rated: goals }] of rated.entries()) {
    const { closing } = match;
    if (!closing?.result || !closing.total) {
      withoutOdds++;
      continue;
    }
    if (!isOneMarket(closing.result) || !isOneMarket(closing.total)) {
      notOneMarket++;
      continue;
    }
    forecasts.push(
      forecastOf(
        index + 1,
        { ...match, closing: { ...closing, result: closing.result, total: closing.total } },
        goals,
        cache,
      ),
    );
    if (forecasts.length % 500 === 0) onProgress(`market backtest: ${forecasts.length} matches fitted`);
  }
  return {
    heldOutSeasons: [...heldOutSeasons],
    matches: forecasts.length,
    withoutOdds,
    notOneMarket,
    marginMethod: DEFAULT_MARGIN_METHOD,
    over25: [
      scored('model', forecasts, (f) => f.model),
      scored('fitted exact', forecasts, (f) => f.exact),
      scored('fitted supremacy', forecasts, (f) => f.supremacy),
      scored('closing total', forecasts, (f) => f.market),
    ],
  };
}

/** Held-out seasons when none are named: the last three whose files the figures came from. */
export const DEFAULT_MARKET_SEASONS = [2023, 2024, 2025] as const;

/** `matchsim market backtest`: the backtest on a folder of results files with closing odds. */
export function marketBacktestCommand(options: {
  results: string;
  seasons?: readonly number[] | undefined;
  competitions?: readonly string[] | undefined;
  onProgress?: (message: string) => void;
}): CommandOutput {
  const matches = readResultsFolder(options.results, options.competitions);
  const result = marketBacktest(matches, options.seasons ?? DEFAULT_MARKET_SEASONS, options.onProgress);
  if (result.matches === 0) {
    const seasons = result.heldOutSeasons.join(', ');
    throw new Error(
      result.withoutOdds + result.notOneMarket === 0
        ? `no match of seasons ${seasons} is in ${options.results}`
        : `none of the ${result.withoutOdds + result.notOneMarket} matches of seasons ${seasons} has closing 1X2 and ` +
            "over/under 2.5 odds that are one market each; football-data.co.uk's files carry them " +
            '(matchsim results fetch; docs/feed.md)',
    );
  }
  const rows = result.over25.map(
    (row) => `${row.name.padEnd(18)} ${row.logLoss.toFixed(4)}   ${row.brier.toFixed(4)}`,
  );
  const human = [
    `over 2.5 goals on ${result.matches} held-out matches with closing odds (seasons ${result.heldOutSeasons.join(', ')}; ${result.withoutOdds} without them and ${result.notOneMarket} whose odds are not one market (inverse odds adding to under 1 or over 1.5) left out; margins removed by ${result.marginMethod})`,
    `${'priced by'.padEnd(18)} log loss  Brier`,
    ...rows,
  ].join('\n');
  return { value: { ...result }, human };
}
