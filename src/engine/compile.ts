// Host-side compile step: all floating-point work of a run happens here, once, and produces the integer
// tables of src/engine-contract/layout.ts that the CPU loop (fallback/) and the GPU kernels (gpu/, shaders/) read
// unchanged. It belongs to neither engine: the runner compiles a job once, whichever engine runs it.

import { createHash } from 'node:crypto';
import { buildEventTables } from '../engine-contract/event-tables.js';
import {
  type CompiledFixture,
  FIXTURE_WORDS,
  FX_ADDED_TIME_FIRST,
  FX_ADDED_TIME_SECOND,
  FX_ASSIST_THRESHOLD,
  FX_MAX_SUBSTITUTIONS,
  MAX_ADDED_MINUTES,
  sideBase,
  THRESHOLD_WORDS,
} from '../engine-contract/layout.js';
import {
  expectedGoalsFromRatings,
  type MatchInputs,
  paramsForFixture,
} from '../engine-contract/match-inputs.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import { type Calibration, eventRates } from './compile-calibration.js';
import { compileSide } from './compile-lineups.js';
import {
  type AddedTimeModel,
  addedTimeModel,
  type EventRates,
  probabilityThreshold,
  thresholdTable,
} from './compile-rates.js';
import { compileState } from './compile-state.js';
import {
  createFitWork,
  type FitSetting,
  type FitWork,
  fitMarket,
  type MarketFit,
  type MarketPrices,
  modelPrices,
  strengthBuckets,
} from './market-fit.js';

/** Each strength bucket's representative ratio (compile-lineups.ts STRENGTH_EDGE_RATIOS cut them). */
const STRENGTH_BUCKET_RATIOS = [0.72, 0.87, 1, 1.13, 1.3] as const;

/** The parameters' JSON, serialised once per parameters object (a process has one). */
const paramsJsonOf = new WeakMap<ModelParams, string>();

/** How a job's payload text begins (job-work.ts JobPayload as src/jobs/job-store.ts stores it): its match first. */
export const PAYLOAD_MATCH_START = '{"match":';
/** Where the match ends in a payload's text: the as_of member that follows it. */
const PAYLOAD_AS_OF = ',"as_of":"';
/**
 * What may follow the match in a payload's text: its as_of, any offered_odds (numbers by outcome name,
 * no object inside), and the payload's end. A `,"` never stands inside a JSON string (its quotes are
 * escaped) and this tail closes exactly one object, so the as_of it starts with is the payload's own.
 */
const PAYLOAD_TAIL = /^,"as_of":"[^"]*"(?:,"offered_odds":\{[^{}]*\})?\}$/;

/**
 * The text of a payload's match inputs, sliced out of the payload's text without a parse (the event loop
 * keys jobs by it, runner.ts), or null for a payload not laid out as the queue stores one.
 */
export function matchTextOf(payloadJson: string): string | null {
  if (!payloadJson.startsWith(PAYLOAD_MATCH_START)) return null;
  const end = payloadJson.lastIndexOf(PAYLOAD_AS_OF);
  if (end < 0 || !PAYLOAD_TAIL.test(payloadJson.slice(end))) return null;
  return payloadJson.slice(PAYLOAD_MATCH_START.length, end);
}

/**
 * What a compile depends on, as a SHA-256 of the text of the job's match inputs (job-work.ts JobPayload
 * `match`, matchTextOf) and the parameters' JSON: not the inputs' as_of or the offered odds, which only the
 * document reads, so every job of a fixture version shares one compile whatever its draws, seed, offered
 * odds or data version. The text as stored, not re-serialised: the same submission code writes the same
 * inputs as the same text. A payload laid out otherwise is keyed by its whole text (shared less, never
 * wrongly).
 */
export function compileKey(payloadJson: string, params: ModelParams): string {
  const matchText = matchTextOf(payloadJson);
  return matchText === null ? keyOf('payload', payloadJson, params) : compileKeyOfMatch(matchText, params);
}

/** compileKey of a payload whose match inputs are `matchText` (JSON.stringify of them, as submissions write it). */
export function compileKeyOfMatch(matchText: string, params: ModelParams): string {
  return keyOf('match', matchText, params);
}

function keyOf(kind: 'match' | 'payload', text: string, params: ModelParams): string {
  let paramsJson = paramsJsonOf.get(params);
  if (paramsJson === undefined) {
    paramsJson = JSON.stringify(params);
    paramsJsonOf.set(params, paramsJson);
  }
  return createHash('sha256')
    .update(kind)
    .update('\n')
    .update(text)
    .update('\n')
    .update(paramsJson)
    .digest('hex');
}

/** Added-time models by the constants they are made of (a fixture's profile leaves them as they are). */
const addedTimeModels = new WeakMap<ModelParams['added_time'], AddedTimeModel>();

/**
 * compile-rates.ts addedTimeModel of `params`, made once per added-time constants: a compile asked for it
 * three times, and an in-play job's fixture table once more (some 0.02 ms each). Read only.
 */
export function addedTimeOf(params: ModelParams): AddedTimeModel {
  let added = addedTimeModels.get(params.added_time);
  if (added === undefined) {
    added = addedTimeModel(params);
    addedTimeModels.set(params.added_time, added);
  }
  return added;
}

/**
 * Where a compile writes its tables: new plain memory by default, or memory used before (a slot of
 * compiled-slots.ts). The fixture table is cleared first (a squad leaves later player slots unwritten);
 * the threshold and event tables have every word written.
 */
export interface CompileInto {
  fixture: Uint32Array;
  thresholds: Uint32Array;
}

export function compileFixture(
  inputs: MatchInputs,
  globalParams: ModelParams,
  into: CompileInto = {
    fixture: new Uint32Array(FIXTURE_WORDS),
    thresholds: new Uint32Array(THRESHOLD_WORDS),
  },
): CompiledFixture & { marketFit?: MarketFit } {
  const { compiled, marketFit } = compileTables(inputs, globalParams, into, null);
  return marketFit ? { ...compiled, marketFit } : compiled;
}

/** Calibrations kept (four numbers each): a few matchdays' fixture versions, with their lineups. */
const CALIBRATIONS_KEPT = 1024;

/**
 * The calibrations of a fixture's event rates (most of a compile: compile-calibration.ts) by what they
 * depend on: the model's constants, the competition's profile and the two sides' rated goals, not their
 * lineups, draws or seed. Every job of a fixture version shares its calibration whatever its lineups
 * (announced, predicted, a client's custom XI), where the compile cache (job-threads.ts) shares whole
 * compiled fixtures by payload. It keeps the four numbers a calibration finds, not the rates made from
 * them (some 8 KB): a cache of rates a batch of other fixtures pushes out costs its thread more in
 * collections than the rates cost to make. Least recently used first out. A job thread owns one
 * (job-work.ts JobScratch): no module keeps one.
 */
export interface CalibrationCache {
  /** The constants its rates were made with: another object empties it first. */
  params: ModelParams | null;
  calibrations: Map<string, Calibration>;
  hits: number;
  misses: number;
  /**
   * Market fits (market-fit.ts) by what they depend on: the calibration's key, the market's targets and
   * fit, and the lineups' strength buckets. Emptied with the calibrations.
   */
  fits: Map<string, MarketFit>;
  fitWork: FitWork;
}

export function createCalibrationCache(): CalibrationCache {
  return {
    params: null,
    calibrations: new Map(),
    hits: 0,
    misses: 0,
    fits: new Map(),
    fitWork: createFitWork(),
  };
}

/** The calibrated rates of `inputs` (params: the fixture's, its profile applied), their calibration from `cache`. */
function ratesOf(
  inputs: MatchInputs,
  globalParams: ModelParams,
  params: ModelParams,
  ratedGoals: { home: number; away: number },
  cache: CalibrationCache | null,
): { rates: EventRates; calibration: Calibration } {
  const rated = [ratedGoals.home, ratedGoals.away] as const;
  if (cache === null) return eventRates(params, addedTimeOf(params), rated);
  if (cache.params !== globalParams) {
    cache.params = globalParams;
    cache.calibrations.clear();
    cache.fits.clear();
  }
  // A number's shortest round-trip text names it exactly.
  const key = `${ratedGoals.home} ${ratedGoals.away} ${inputs.profile ? JSON.stringify(inputs.profile) : ''}`;
  const known = cache.calibrations.get(key);
  if (known !== undefined) {
    cache.hits++;
    cache.calibrations.delete(key);
  } else {
    cache.misses++;
    if (cache.calibrations.size >= CALIBRATIONS_KEPT)
      cache.calibrations.delete(cache.calibrations.keys().next().value!);
  }
  const found = eventRates(params, addedTimeOf(params), rated, known);
  cache.calibrations.set(key, found.calibration);
  return found;
}

/** Strength bucket multipliers of a model's constants: each bucket's ratio ^ lineup_strength_elasticity. */
function strengthMultipliersOf(params: ModelParams): number[] {
  return STRENGTH_BUCKET_RATIOS.map((ratio) => ratio ** params.lineup_strength_elasticity);
}

/**
 * The market fit of `inputs` (which carry a market), the sides already compiled into `fixture` (their
 * strength buckets), from `cache` when it holds it.
 */
function marketFitOf(
  inputs: MatchInputs & { market: NonNullable<MatchInputs['market']> },
  params: ModelParams,
  fixture: Uint32Array,
  model: { ratedGoals: { home: number; away: number }; calibration: Calibration },
  cache: CalibrationCache | null,
): MarketFit {
  const buckets = [strengthBuckets(fixture, 0), strengthBuckets(fixture, 1)] as const;
  const key = cache
    ? JSON.stringify([
        model.ratedGoals,
        inputs.profile ?? null,
        inputs.market,
        [...buckets[0]],
        [...buckets[1]],
      ])
    : '';
  const known = cache?.fits.get(key);
  if (known !== undefined) {
    cache!.fits.delete(key);
    cache!.fits.set(key, known);
    return known;
  }
  const fit = fitMarket({ market: inputs.market, ...pricedSetting(params, buckets, model) }, cache?.fitWork);
  if (cache) {
    if (cache.fits.size >= CALIBRATIONS_KEPT) cache.fits.delete(cache.fits.keys().next().value!);
    cache.fits.set(key, fit);
  }
  return fit;
}

/**
 * The market fit of `inputs` as a job's compile makes it: what the domain asks before it takes a fitted
 * run (a market the model cannot reach is refused before anything is held, docs/api.md §4.3). Asked on a
 * job thread with its `cache` (job-work.ts, the 'fit' task), the job's compile there finds it again.
 */
export function marketFitOfInputs(
  inputs: MatchInputs & { market: NonNullable<MatchInputs['market']> },
  globalParams: ModelParams,
  cache: CalibrationCache | null = null,
): MarketFit {
  const { params, fixture, model } = fitBasis(inputs, globalParams, cache);
  return marketFitOf(inputs, params, fixture, model, cache);
}

/**
 * The model's own prices of `inputs`, unfitted: the fit's exact pass at the calibrated base goals
 * (market-fit.ts modelPrices), which the market backtest sets beside the fitted ones (model/market-backtest.ts).
 */
export function modelPricesOfInputs(
  inputs: MatchInputs,
  globalParams: ModelParams,
  cache: CalibrationCache | null = null,
): MarketPrices {
  const { params, fixture, model } = fitBasis(inputs, globalParams, cache);
  return modelPrices(
    pricedSetting(params, [strengthBuckets(fixture, 0), strengthBuckets(fixture, 1)], model),
  );
}

/** What the fit's exact pass prices a fixture from (market-fit.ts FitSetting, less the market). */
function pricedSetting(
  params: ModelParams,
  buckets: FitSetting['buckets'],
  model: { ratedGoals: { home: number; away: number }; calibration: Calibration },
): Omit<FitSetting, 'market'> {
  return {
    params,
    added: addedTimeOf(params),
    modelBase: model.calibration.base,
    modelRatedGoals: [model.ratedGoals.home, model.ratedGoals.away],
    buckets,
    multipliers: strengthMultipliersOf(params),
  };
}

/** What a fit of `inputs` starts from: the fixture's constants, its sides compiled, the model's calibration. */
function fitBasis(inputs: MatchInputs, globalParams: ModelParams, cache: CalibrationCache | null) {
  const params = paramsForFixture(globalParams, inputs.profile);
  const fixture = new Uint32Array(FIXTURE_WORDS);
  for (const [side, sideInputs] of [inputs.home, inputs.away].entries()) {
    compileSide(fixture, sideBase(side), sideInputs, params.cards.booked_player_factor);
  }
  const ratedGoals = expectedGoalsFromRatings(inputs);
  const { calibration } = ratesOf(inputs, globalParams, params, ratedGoals, cache);
  return { params, fixture, model: { ratedGoals, calibration } };
}

/**
 * compileFixture, and its event tables (src/engine-contract/event-tables.ts) written into
 * `into.eventTables` from the stretches of steps whose rates are the same, which the compile knows: the
 * tables the engines read, where compileFixture leaves them to eventTablesOf. With `cache`, rates made
 * for another job of the same rates are taken from it (the same bits). `knownFit`: the market fit of
 * these very inputs, found before on another thread (job-threads.ts `fitMarket`), taken as it is.
 */
export function compileWithEventTables(
  inputs: MatchInputs,
  globalParams: ModelParams,
  into: CompileInto & { eventTables: Uint32Array },
  cache: CalibrationCache | null = null,
  knownFit: MarketFit | null = null,
): CompiledFixture & { eventTables: Uint32Array; marketFit?: MarketFit } {
  const { compiled, rates, marketFit } = compileTables(inputs, globalParams, into, cache, knownFit);
  return {
    ...compiled,
    eventTables: buildEventTables(compiled.thresholds, into.eventTables, rates),
    ...(marketFit ? { marketFit } : {}),
  };
}

function compileTables(
  inputs: MatchInputs,
  globalParams: ModelParams,
  into: CompileInto,
  cache: CalibrationCache | null,
  knownFit: MarketFit | null = null,
): { compiled: CompiledFixture; rates: EventRates; marketFit: MarketFit | null } {
  // The competition's card and shot rates replace the global ones (docs/model.md, "League profiles").
  const params = paramsForFixture(globalParams, inputs.profile);
  const fixture = into.fixture.fill(0);
  const added = addedTimeOf(params);
  for (let k = 0; k < MAX_ADDED_MINUTES; k++) {
    fixture[FX_ADDED_TIME_FIRST + k] = probabilityThreshold(added.firstCumulative[k]!);
    fixture[FX_ADDED_TIME_SECOND + k] = probabilityThreshold(added.secondCumulative[k]!);
  }
  fixture[FX_MAX_SUBSTITUTIONS] = params.substitutions.max_per_side;
  fixture[FX_ASSIST_THRESHOLD] = probabilityThreshold(params.assisted_share);

  for (const [side, sideInputs] of [inputs.home, inputs.away].entries()) {
    compileSide(fixture, sideBase(side), sideInputs, params.cards.booked_player_factor);
  }
  const strengthMultipliers = strengthMultipliersOf(params);

  const modelRatedGoals = expectedGoalsFromRatings(inputs);
  const model = ratesOf(inputs, globalParams, params, modelRatedGoals, cache);
  let { rates } = model;
  let ratedGoals = modelRatedGoals;
  let marketFit: MarketFit | null = null;
  if (inputs.market !== undefined) {
    // A fitted run (docs/model.md, "Fitting to the market"): the fit's base goals are the calibration,
    // and the rated goals they stand for replace the ratings' in everything after.
    marketFit =
      knownFit ??
      marketFitOf(
        { ...inputs, market: inputs.market },
        params,
        fixture,
        { ratedGoals, calibration: model.calibration },
        cache,
      );
    rates = eventRates(params, added, marketFit.ratedGoals, {
      base: marketFit.base,
      simulated: marketFit.ratedGoals,
    }).rates;
    ratedGoals = { home: marketFit.ratedGoals[0], away: marketFit.ratedGoals[1] };
  }
  const thresholds = thresholdTable(rates, strengthMultipliers, into.thresholds);
  // After the fit, which reads the sides' pre-match lineups: a fitted in-play run keeps the fit of the
  // match (docs/model.md "In play").
  compileState(fixture, inputs, params, added);

  return {
    compiled: {
      fixture,
      thresholds,
      playerIds: [inputs.home.players.map((p) => p.player_id), inputs.away.players.map((p) => p.player_id)],
      ratedGoals,
    },
    rates,
    marketFit,
  };
}
