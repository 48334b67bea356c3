// `matchsim simulate --fixture ID [--draws N] [--odds H,D,A [--total O,U] [--fit exact|supremacy]
// [--margin-method M]] [--from-minute M [--score H-A] [--red-cards H-A]]`: its arguments, and the lines it
// prints of src/operations/operator-simulation.ts's simulation (run on the database, or through the running
// service's admin API): the result, the goals and, for a fitted run, its calibration beside the targets.
import type { SimulationDocument } from '../engine/document-schema.js';
import { type FromState, MARKET_FITS, type MarketFitKind } from '../engine-contract/match-inputs.js';
import { MAX_DRAWS_PER_JOB, MIN_DRAWS_PER_JOB } from '../engine-contract/run.js';
import { MARGIN_METHODS, type MarginMethod } from '../market/margin-removal.js';
import { OPERATOR_DRAWS, type SimulateArguments } from '../operations/operator-simulation.js';
import type { MarketRequest } from '../simulations/market-request.js';

export class SimulateArgumentError extends Error {}

/** `--from-minute M [--score H-A] [--red-cards H-A]`: the in-play state (docs/api.md §4.3, "In play"). */
export function inPlayArguments(flags: InPlayFlags): FromState | undefined {
  const minute = flags['from-minute'];
  if (minute === undefined) {
    if (flags.score !== undefined || flags['red-cards'] !== undefined)
      throw new SimulateArgumentError('--score and --red-cards go with --from-minute');
    return undefined;
  }
  const pair = (value: string | undefined, flag: string) => {
    if (value === undefined) return { home: 0, away: 0 };
    const match = /^(\d{1,2})-(\d{1,2})$/.exec(value.trim());
    if (!match) throw new SimulateArgumentError(`--${flag} takes home-away counts, e.g. 1-0`);
    return { home: Number(match[1]), away: Number(match[2]) };
  };
  const redCards = pair(flags['red-cards'], 'red-cards');
  return {
    minute,
    score: pair(flags.score, 'score'),
    ...(redCards.home + redCards.away > 0 ? { red_cards: redCards } : {}),
  };
}

function oddsList(value: string, flag: string, count: number): number[] {
  const odds = value.split(',').map((part) => Number(part.trim()));
  if (odds.length !== count || odds.some((o) => !Number.isFinite(o))) {
    throw new SimulateArgumentError(`--${flag} takes ${count} decimal odds separated by commas`);
  }
  return odds;
}

/** The command's flags as arguments; a mistake is a SimulateArgumentError (the CLI's usage error). */
export function simulateArguments(flags: MarketFlags & InPlayFlags): SimulateArguments {
  const fromState = inPlayArguments(flags);
  return { ...marketArguments(flags), ...(fromState ? { fromState } : {}) };
}

type MarketFlags = {
  [flag in 'fixture' | 'draws' | 'odds' | 'total' | 'fit' | 'margin-method']?: string | undefined;
};
type InPlayFlags = { [flag in 'from-minute' | 'score' | 'red-cards']?: string | undefined };

function marketArguments(flags: MarketFlags): SimulateArguments {
  const fixtureId = Number(flags.fixture);
  if (!Number.isSafeInteger(fixtureId) || fixtureId < 1)
    throw new SimulateArgumentError('--fixture must be a fixture id');
  const draws = flags.draws === undefined ? OPERATOR_DRAWS : Number(flags.draws);
  if (!Number.isSafeInteger(draws) || draws < MIN_DRAWS_PER_JOB || draws > MAX_DRAWS_PER_JOB) {
    throw new SimulateArgumentError(
      `--draws must be a whole number from ${MIN_DRAWS_PER_JOB} to ${MAX_DRAWS_PER_JOB}`,
    );
  }
  if (flags.odds === undefined) {
    if (flags.total !== undefined || flags.fit !== undefined || flags['margin-method'] !== undefined)
      throw new SimulateArgumentError('--total, --fit and --margin-method go with --odds');
    return { fixtureId, draws };
  }
  if (flags.fit !== undefined && !(MARKET_FITS as readonly string[]).includes(flags.fit))
    throw new SimulateArgumentError(`--fit is one of ${MARKET_FITS.join(', ')}`);
  const method = flags['margin-method'];
  if (method !== undefined && !(MARGIN_METHODS as readonly string[]).includes(method))
    throw new SimulateArgumentError(`--margin-method is one of ${MARGIN_METHODS.join(', ')}`);
  const market: MarketRequest = { odds: { '1x2': oddsList(flags.odds, 'odds', 3) } };
  if (flags.total !== undefined) market.odds['total_2.5'] = oddsList(flags.total, 'total', 2);
  if (flags.fit !== undefined) market.fit = flags.fit as MarketFitKind;
  if (method !== undefined) market.margin_method = method as MarginMethod;
  return { fixtureId, draws, market };
}

const percent = (p: number) => `${(100 * p).toFixed(1)}%`;

/** The lines an operator reads: the result and goals, and a fitted run's targets beside what it reached. */
export function simulationRows(document: SimulationDocument): Record<string, string>[] {
  const { result, goals, calibration } = document;
  const over = document.markets.totals.find((total) => total.line === 2.5)!.over;
  const rows = [
    {
      figure: 'this run',
      home_win: percent(result.home_win),
      draw: percent(result.draw),
      away_win: percent(result.away_win),
      over_2_5: percent(over),
      goals: `${goals.expected.home.toFixed(2)} - ${goals.expected.away.toFixed(2)}`,
    },
  ];
  if (calibration) {
    const { targets, achieved } = calibration;
    rows.push({
      figure: `market (${calibration.method})`,
      home_win: percent(targets.home_win),
      draw: percent(targets.draw),
      away_win: percent(targets.away_win),
      over_2_5: targets.over_2_5 === undefined ? '' : percent(targets.over_2_5),
      goals: '',
    });
    rows.push({
      figure: `fit (${calibration.fit})`,
      home_win: percent(achieved.home_win),
      draw: percent(achieved.draw),
      away_win: percent(achieved.away_win),
      over_2_5: percent(achieved.over_2_5),
      goals: `${calibration.fitted_goals.home.toFixed(2)} - ${calibration.fitted_goals.away.toFixed(2)} rated (model ${calibration.rated_goals.home.toFixed(2)} - ${calibration.rated_goals.away.toFixed(2)})`,
    });
  }
  return rows;
}
