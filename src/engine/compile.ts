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
import { addedTimeModel, type EventRates, probabilityThreshold, thresholdTable } from './compile-rates.js';

/** Each strength bucket's representative ratio (compile-lineups.ts STRENGTH_EDGE_RATIOS cut them). */
const STRENGTH_BUCKET_RATIOS = [0.72, 0.87, 1, 1.13, 1.3] as const;

/** The parameters' JSON, serialised once per parameters object (a process has one). */
const paramsJsonOf = new WeakMap<ModelParams, string>();

/**
 * What a compile depends on, as a SHA-256 of the job's payload text (its match inputs and their as_of,
 * job-work.ts JobPayload) and the parameters' JSON. The text as stored, not re-serialised: the same
 * submission code writes the same inputs as the same text.
 */
export function compileKey(payloadJson: string, params: ModelParams): string {
  let paramsJson = paramsJsonOf.get(params);
  if (paramsJson === undefined) {
    paramsJson = JSON.stringify(params);
    paramsJsonOf.set(params, paramsJson);
  }
  return createHash('sha256').update(payloadJson).update('\n').update(paramsJson).digest('hex');
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
): CompiledFixture {
  return compileTables(inputs, globalParams, into, null).compiled;
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
}

export function createCalibrationCache(): CalibrationCache {
  return { params: null, calibrations: new Map(), hits: 0, misses: 0 };
}

/** The calibrated rates of `inputs` (params: the fixture's, its profile applied), their calibration from `cache`. */
function ratesOf(
  inputs: MatchInputs,
  globalParams: ModelParams,
  params: ModelParams,
  ratedGoals: { home: number; away: number },
  cache: CalibrationCache | null,
): EventRates {
  const rated = [ratedGoals.home, ratedGoals.away] as const;
  if (cache === null) return eventRates(params, addedTimeModel(params), rated).rates;
  if (cache.params !== globalParams) {
    cache.params = globalParams;
    cache.calibrations.clear();
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
  const { rates, calibration } = eventRates(params, addedTimeModel(params), rated, known);
  cache.calibrations.set(key, calibration);
  return rates;
}

/**
 * compileFixture, and its event tables (src/engine-contract/event-tables.ts) written into
 * `into.eventTables` from the stretches of steps whose rates are the same, which the compile knows: the
 * tables the engines read, where compileFixture leaves them to eventTablesOf. With `cache`, rates made
 * for another job of the same rates are taken from it (the same bits).
 */
export function compileWithEventTables(
  inputs: MatchInputs,
  globalParams: ModelParams,
  into: CompileInto & { eventTables: Uint32Array },
  cache: CalibrationCache | null = null,
): CompiledFixture & { eventTables: Uint32Array } {
  const { compiled, rates } = compileTables(inputs, globalParams, into, cache);
  return { ...compiled, eventTables: buildEventTables(compiled.thresholds, into.eventTables, rates) };
}

function compileTables(
  inputs: MatchInputs,
  globalParams: ModelParams,
  into: CompileInto,
  cache: CalibrationCache | null,
): { compiled: CompiledFixture; rates: EventRates } {
  // The competition's card and shot rates replace the global ones (docs/model.md, "League profiles").
  const params = paramsForFixture(globalParams, inputs.profile);
  const fixture = into.fixture.fill(0);
  const added = addedTimeModel(params);
  for (let k = 0; k < MAX_ADDED_MINUTES; k++) {
    fixture[FX_ADDED_TIME_FIRST + k] = probabilityThreshold(added.firstCumulative[k]!);
    fixture[FX_ADDED_TIME_SECOND + k] = probabilityThreshold(added.secondCumulative[k]!);
  }
  fixture[FX_MAX_SUBSTITUTIONS] = params.substitutions.max_per_side;
  fixture[FX_ASSIST_THRESHOLD] = probabilityThreshold(params.assisted_share);

  const strengthMultipliers: number[] = [];
  for (const [side, sideInputs] of [inputs.home, inputs.away].entries()) {
    compileSide(fixture, sideBase(side), sideInputs, params.cards.booked_player_factor);
  }
  for (const ratio of STRENGTH_BUCKET_RATIOS) {
    strengthMultipliers.push(ratio ** params.lineup_strength_elasticity);
  }

  const ratedGoals = expectedGoalsFromRatings(inputs);
  const rates = ratesOf(inputs, globalParams, params, ratedGoals, cache);
  const thresholds = thresholdTable(rates, strengthMultipliers, into.thresholds);

  return {
    compiled: {
      fixture,
      thresholds,
      playerIds: [inputs.home.players.map((p) => p.player_id), inputs.away.players.map((p) => p.player_id)],
      ratedGoals,
    },
    rates,
  };
}
