// Host-side compile step: all floating-point work of a run happens here, once, and produces the integer
// tables of ./contract/layout.ts that the CPU loop (fallback/) and the GPU kernels (gpu/, shaders/) read
// unchanged. It belongs to neither engine: the runner compiles a job once, whichever engine runs it.

import { createHash } from 'node:crypto';
import {
  type CompiledFixture,
  EVENT_GOAL,
  EVENT_RED,
  EVENT_SHOT_OFF_TARGET,
  EVENT_SHOT_ON_TARGET,
  EVENT_SUBSTITUTION,
  EVENT_YELLOW,
  FIRST_HALF_ADDED_START,
  FIXTURE_WORDS,
  FX_ADDED_TIME_FIRST,
  FX_ADDED_TIME_SECOND,
  FX_ASSIST_THRESHOLD,
  FX_MAX_SUBSTITUTIONS,
  LINEUP_MODE_FIXED,
  LINEUP_MODE_PREDICTED,
  LINEUP_MODE_PREDICTED_UNLABELLED,
  MAX_ADDED_MINUTES,
  RED_CARD_BUCKETS,
  S_ASSIST_WEIGHT,
  S_BENCH_COUNT,
  S_BENCH_LIMIT,
  S_BENCH_ORDER,
  S_BOOKED_CARD_WEIGHT,
  S_CARD_WEIGHT,
  S_GOAL_WEIGHT,
  S_IS_KEEPER,
  S_KEEPER_COUNT,
  S_KEEPER_CUM,
  S_KEEPER_ORDER,
  S_LINEUP_MODE,
  S_OUTFIELD_COUNT,
  S_OUTFIELD_CUM,
  S_OUTFIELD_ORDER,
  S_OUTFIELD_PICKS,
  S_PLAYER_COUNT,
  S_SHOT_WEIGHT,
  S_STRENGTH_EDGES,
  S_SUB_OFF_WEIGHT,
  S_XI,
  SAMPLING_UNIT,
  SCORE_STATE_BUCKETS,
  SECOND_HALF_ADDED_START,
  SECOND_HALF_START,
  SIDES,
  STEP_BAND,
  STEPS,
  STRENGTH_BUCKETS,
  sideBase,
  THRESHOLD_WORDS,
  thresholdIndex,
  WEIGHT_MAX,
  XI_SIZE,
} from './contract/layout.js';
import {
  expectedGoalsFromRatings,
  type MatchInputs,
  type PlayerProfile,
  PREDICTED_BENCH_SIZE,
  paramsForFixture,
  type SideInputs,
} from './contract/match-inputs.js';
import type { ModelParams } from './contract/model-params.js';

/** Below this a start probability is treated as zero (it would round to no sampling ticks anyway). */
const MIN_START_PROBABILITY = 1e-6;
/**
 * Strength buckets: the XI's summed goal weight over the squad's expected sum, cut at these ratios;
 * each bucket's rate multiplier is its representative ratio ^ lineup_strength_elasticity.
 */
const STRENGTH_EDGE_RATIOS = [0.8, 0.93, 1.07, 1.2] as const;
const STRENGTH_BUCKET_RATIOS = [0.72, 0.87, 1, 1.13, 1.3] as const;
const TWO_POW_32 = 4294967296;
/** Relative error at which the calibration of base goal rates stops. */
const CALIBRATION_TOLERANCE = 1e-7;
const OUTFIELD_ORDER: Record<string, number> = { defender: 0, midfielder: 1, attacker: 2 };

/** A probability as a `u < threshold` cut-off. */
function probabilityThreshold(p: number): number {
  if (!(p > 0)) return 0;
  return Math.min(TWO_POW_32 - 1, Math.floor(p * TWO_POW_32));
}

/** What a compile depends on, as a SHA-256 of the inputs' and parameters' JSON. */
export function compileKey(inputs: MatchInputs, params: ModelParams): string {
  return createHash('sha256')
    .update(JSON.stringify(inputs))
    .update('\n')
    .update(JSON.stringify(params))
    .digest('hex');
}

export function compileFixture(inputs: MatchInputs, globalParams: ModelParams): CompiledFixture {
  // The competition's card and shot rates replace the global ones (docs/model.md, "League profiles").
  const params = paramsForFixture(globalParams, inputs.profile);
  const fixture = new Uint32Array(FIXTURE_WORDS);
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
  const rates = eventRates(params, added, [ratedGoals.home, ratedGoals.away]);
  const thresholds = thresholdTable(rates, strengthMultipliers);

  return {
    fixture,
    thresholds,
    playerIds: [inputs.home.players.map((p) => p.player_id), inputs.away.players.map((p) => p.player_id)],
    ratedGoals,
  };
}

// ---- Lineups and player weights ------------------------------------------------------------------

function compileSide(fixture: Uint32Array, base: number, side: SideInputs, bookedFactor: number): void {
  const players = side.players;
  fixture[base + S_PLAYER_COUNT] = players.length;
  const slotOf = new Map(players.map((p, slot) => [p.player_id, slot]));

  const goal = quantizeWeights(players.map((p) => p.goal_share));
  const assist = quantizeWeights(players.map((p) => p.assist_share));
  const shot = quantizeWeights(players.map((p) => p.shot_share));
  const card = quantizeWeights(players.map((p) => p.card_share));
  players.forEach((player, slot) => {
    const keeper = player.position === 'goalkeeper';
    fixture[base + S_GOAL_WEIGHT + slot] = goal[slot]!;
    fixture[base + S_ASSIST_WEIGHT + slot] = assist[slot]!;
    fixture[base + S_SHOT_WEIGHT + slot] = shot[slot]!;
    fixture[base + S_CARD_WEIGHT + slot] = card[slot]!;
    // A player expected to play 60 minutes is taken off far more often than one expected to play 90.
    fixture[base + S_SUB_OFF_WEIGHT + slot] = keeper ? 0 : Math.round(96 - player.typical_minutes);
    fixture[base + S_IS_KEEPER + slot] = keeper ? 1 : 0;
    fixture[base + S_BOOKED_CARD_WEIGHT + slot] = Math.round(card[slot]! * bookedFactor);
  });

  // The predicted-XI sampling plan; also the baseline of the strength buckets for fixed lineups.
  const plan = predictedPlan(players);
  fixture[base + S_KEEPER_COUNT] = plan.keepers.length;
  writeSystematic(fixture, base + S_KEEPER_ORDER, base + S_KEEPER_CUM, plan.keepers);
  fixture[base + S_OUTFIELD_COUNT] = plan.outfield.length;
  fixture[base + S_OUTFIELD_PICKS] = plan.outfieldPicks;
  writeSystematic(fixture, base + S_OUTFIELD_ORDER, base + S_OUTFIELD_CUM, plan.outfield);

  let expectedStrength = 0;
  for (const { slot, inclusion } of [...plan.keepers, ...plan.outfield]) {
    expectedStrength += inclusion * goal[slot]!;
  }
  STRENGTH_EDGE_RATIOS.forEach((ratio, i) => {
    fixture[base + S_STRENGTH_EDGES + i] = Math.ceil(expectedStrength * ratio);
  });

  if (side.lineup.source === 'predicted') {
    fixture[base + S_LINEUP_MODE] =
      plan.keepers.length > 0 ? LINEUP_MODE_PREDICTED : LINEUP_MODE_PREDICTED_UNLABELLED;
    const order = players
      .map((player, slot) => ({ player, slot }))
      .filter(({ player }) => player.start_probability >= MIN_START_PROBABILITY)
      .sort((a, b) => b.player.start_probability - a.player.start_probability || a.slot - b.slot);
    fixture[base + S_BENCH_COUNT] = order.length;
    fixture[base + S_BENCH_LIMIT] = PREDICTED_BENCH_SIZE;
    order.forEach(({ slot }, i) => {
      fixture[base + S_BENCH_ORDER + i] = slot;
    });
  } else {
    fixture[base + S_LINEUP_MODE] = LINEUP_MODE_FIXED;
    side.lineup.xi.forEach((id, i) => {
      fixture[base + S_XI + i] = slotOf.get(id)!;
    });
    fixture[base + S_BENCH_COUNT] = side.lineup.bench.length;
    fixture[base + S_BENCH_LIMIT] = side.lineup.bench.length;
    side.lineup.bench.forEach((id, i) => {
      fixture[base + S_BENCH_ORDER + i] = slotOf.get(id)!;
    });
  }
}

/** Shares as integers 0..WEIGHT_MAX relative to the side's largest; a positive share never rounds to 0. */
function quantizeWeights(shares: readonly number[]): number[] {
  const max = Math.max(0, ...shares);
  if (max === 0) return shares.map(() => 1); // no information: everyone equally likely
  return shares.map((s) => (s > 0 ? Math.max(1, Math.round((s / max) * WEIGHT_MAX)) : 0));
}

interface Candidate {
  slot: number;
  /** Probability of being in the XI under the sampling plan. */
  inclusion: number;
  ticks: number;
}

interface PredictedPlan {
  keepers: Candidate[];
  outfield: Candidate[];
  outfieldPicks: number;
}

/**
 * One goalkeeper from the labelled goalkeepers, ten outfield players from the rest, each with inclusion
 * probability proportional to its start probability, capped at 1 and summing to the picks. Without a
 * labelled goalkeeper (or too few outfield players) the XI is 11 picks over the whole squad.
 */
function predictedPlan(players: readonly PlayerProfile[]): PredictedPlan {
  const all = players.map((player, slot) => ({ player, slot }));
  const keepers = all.filter(({ player }) => player.position === 'goalkeeper');
  const outfield = all.filter(({ player }) => player.position !== 'goalkeeper');
  const byLine = (a: (typeof all)[number], b: (typeof all)[number]) =>
    (OUTFIELD_ORDER[a.player.position ?? ''] ?? 3) - (OUTFIELD_ORDER[b.player.position ?? ''] ?? 3) ||
    b.player.start_probability - a.player.start_probability ||
    a.slot - b.slot;
  if (keepers.length === 0 || outfield.length < XI_SIZE - 1) {
    return { keepers: [], outfield: inclusionPlan([...all].sort(byLine), XI_SIZE), outfieldPicks: XI_SIZE };
  }
  return {
    keepers: inclusionPlan(keepers, 1),
    outfield: inclusionPlan([...outfield].sort(byLine), XI_SIZE - 1),
    outfieldPicks: XI_SIZE - 1,
  };
}

function inclusionPlan(candidates: { player: PlayerProfile; slot: number }[], picks: number): Candidate[] {
  // Start probabilities below MIN_START_PROBABILITY count as none; players with no chance still get a
  // sliver when the squad cannot otherwise fill the picks.
  const chance = (player: PlayerProfile) =>
    player.start_probability >= MIN_START_PROBABILITY ? player.start_probability : 0;
  const positive = candidates.filter(({ player }) => chance(player) > 0).length;
  const raw = candidates.map(
    ({ player }) => chance(player) || (positive < picks ? MIN_START_PROBABILITY : 0),
  );
  const inclusion = capAtOne(raw, picks);
  const ticks = inclusion.map((p) => Math.round(p * SAMPLING_UNIT));
  // Make the ticks sum to exactly picks * SAMPLING_UNIT without any interval passing one unit.
  let drift = picks * SAMPLING_UNIT - ticks.reduce((a, b) => a + b, 0);
  let idle = 0; // candidates visited since the last change: a full lap without one means no room
  for (let i = 0; drift !== 0 && idle < ticks.length; i = (i + 1) % ticks.length) {
    idle++;
    if (drift > 0 && ticks[i]! < SAMPLING_UNIT && raw[i]! > 0) {
      ticks[i]!++;
      drift--;
      idle = 0;
    } else if (drift < 0 && ticks[i]! > 0) {
      ticks[i]!--;
      drift++;
      idle = 0;
    }
  }
  if (drift !== 0) throw new RangeError(`cannot pick ${picks} starters from ${candidates.length} candidates`);
  return candidates.map(({ slot }, i) => ({ slot, inclusion: ticks[i]! / SAMPLING_UNIT, ticks: ticks[i]! }));
}

/** Scales weights to sum to `total` with none above 1 (iteratively fixing the capped ones). */
function capAtOne(weights: readonly number[], total: number): number[] {
  const result = [...weights];
  const capped = new Array<boolean>(weights.length).fill(false);
  for (let round = 0; round < weights.length + 1; round++) {
    let free = 0;
    let fixed = 0;
    for (let i = 0; i < weights.length; i++) {
      if (capped[i]) fixed += 1;
      else free += weights[i]!;
    }
    if (free <= 0) break;
    const scale = (total - fixed) / free;
    let changed = false;
    weights.forEach((w, i) => {
      if (capped[i]) return;
      const scaled = w * scale;
      if (scaled > 1) {
        capped[i] = true;
        changed = true;
      }
      result[i] = Math.min(1, scaled);
    });
    if (!changed) break;
  }
  return result.map((w, i) => (capped[i] ? 1 : w));
}

function writeSystematic(
  fixture: Uint32Array,
  orderAt: number,
  cumAt: number,
  candidates: Candidate[],
): void {
  let cumulative = 0;
  candidates.forEach(({ slot, ticks }, i) => {
    cumulative += ticks;
    fixture[orderAt + i] = slot;
    fixture[cumAt + i] = cumulative;
  });
}

// ---- Event rates -------------------------------------------------------------------------------------

interface AddedTimeModel {
  /** P(added <= k), k = 0..10. */
  firstCumulative: number[];
  secondCumulative: number[];
  /** P(step is played). */
  stepPlayed: number[];
  /** Expected played steps in each 15-minute band. */
  bandSteps: number[];
}

function addedTimeModel(params: ModelParams): AddedTimeModel {
  const cumulative = (weights: readonly number[]) => {
    const total = weights.reduce((a, b) => a + b, 0);
    let running = 0;
    return weights.map((w) => {
      running += w / total;
      return Math.min(1, running);
    });
  };
  const firstCumulative = cumulative(params.added_time.first_half);
  const secondCumulative = cumulative(params.added_time.second_half);
  const stepPlayed = Array.from({ length: STEPS }, (_, step) => {
    if (step >= FIRST_HALF_ADDED_START && step < SECOND_HALF_START) {
      return 1 - firstCumulative[step - FIRST_HALF_ADDED_START]!;
    }
    if (step >= SECOND_HALF_ADDED_START) return 1 - secondCumulative[step - SECOND_HALF_ADDED_START]!;
    return 1;
  });
  const bandSteps = new Array<number>(6).fill(0);
  stepPlayed.forEach((p, step) => {
    bandSteps[STEP_BAND[step]!]! += p;
  });
  return { firstCumulative, secondCumulative, stepPlayed, bandSteps };
}

/** Per-step shape of a band-weighted rate: sums to 1 over the expected played steps of a match. */
function stepCurve(bandWeights: readonly number[], added: AddedTimeModel): number[] {
  const total = bandWeights.reduce((a, b) => a + b, 0);
  return STEP_BAND.map((band) => bandWeights[band]! / total / added.bandSteps[band]!);
}

/**
 * A side's event rates at a step before the cell's multipliers, index side * STEPS + step: a cell's
 * categorical draw is these times its score, red-card and strength multipliers (categoricalRates). Each
 * product is formed in the order the per-cell formula always used, so the compiled tables keep their bits.
 */
interface EventRates {
  /** base goals of the side * goal curve at the step (rewritten by each calibration round). */
  goals: Float64Array;
  yellow: Float64Array;
  red: Float64Array;
  substitution: Float64Array;
  savedPerGoal: number;
  offTargetPerGoal: number;
  scoreMultipliers: Float64Array;
  redMultipliers: Float64Array;
  /** Goals per match of each side under the dynamics, after calibration (for tests and reports). */
  calibratedGoals: [number, number];
}

/**
 * Rates per minute become one categorical draw per side and step whose marginals equal the rates (at
 * most one event per side and minute; a per-minute total above 1 is scaled down, never reached with
 * football's rates, about 0.2). The scale of a cell whose rates are `goals` (times savedPerGoal and
 * offTargetPerGoal for the shots) and the (side, step) factors at `sideStep`: 1, or 1 / their total.
 */
function categoricalTotal(rates: EventRates, sideStep: number, goals: number): number {
  const total =
    goals +
    goals * rates.savedPerGoal +
    goals * rates.offTargetPerGoal +
    rates.yellow[sideStep]! +
    rates.red[sideStep]! +
    rates.substitution[sideStep]!;
  return total <= 1 ? 1 : total;
}

/**
 * Writes one cell's cumulative `u < threshold` cut-offs (EVENT_GOAL..EVENT_SUBSTITUTION order), each
 * probability divided by the cell's categoricalTotal as the kinds are summed.
 */
function writeCell(
  thresholds: Uint32Array,
  index: number,
  rates: EventRates,
  sideStep: number,
  goals: number,
): void {
  const total = categoricalTotal(rates, sideStep, goals);
  // x / 1 is x: the common case divides by 1 and keeps the same bits as no division.
  let cumulative = goals / total;
  thresholds[index + EVENT_GOAL] = probabilityThreshold(cumulative);
  cumulative += (goals * rates.savedPerGoal) / total;
  thresholds[index + EVENT_SHOT_ON_TARGET] = probabilityThreshold(cumulative);
  cumulative += (goals * rates.offTargetPerGoal) / total;
  thresholds[index + EVENT_SHOT_OFF_TARGET] = probabilityThreshold(cumulative);
  cumulative += rates.yellow[sideStep]! / total;
  thresholds[index + EVENT_YELLOW] = probabilityThreshold(cumulative);
  cumulative += rates.red[sideStep]! / total;
  thresholds[index + EVENT_RED] = probabilityThreshold(cumulative);
  cumulative += rates.substitution[sideStep]! / total;
  thresholds[index + EVENT_SUBSTITUTION] = probabilityThreshold(cumulative);
}

/**
 * The cumulative `u < threshold` cut-offs of every (side, strength, step, score, red) cell. A cell's goals
 * are base goals * goal curve * score multiplier * red multiplier * strength multiplier, multiplied in
 * that order (floating-point products are rounded at each step, and the tables must keep their bits).
 */
function thresholdTable(rates: EventRates, strengthMultipliers: readonly number[]): Uint32Array {
  const thresholds = new Uint32Array(THRESHOLD_WORDS);
  for (let side = 0; side < SIDES; side++) {
    for (let strength = 0; strength < STRENGTH_BUCKETS; strength++) {
      const multiplier = strengthMultipliers[strength]!;
      for (let step = 0; step < STEPS; step++) {
        const sideStep = side * STEPS + step;
        for (let score = 0; score < SCORE_STATE_BUCKETS; score++) {
          const scoreGoals = rates.goals[sideStep]! * rates.scoreMultipliers[score]!;
          for (let red = 0; red < RED_CARD_BUCKETS; red++) {
            const goals = scoreGoals * rates.redMultipliers[red]! * multiplier;
            writeCell(thresholds, thresholdIndex(side, strength, step, score, red), rates, sideStep, goals);
          }
        }
      }
    }
  }
  return thresholds;
}

/** The rates' per-(side, step) factors but the goals, which setBaseGoals writes. */
function rateFactors(params: ModelParams, added: AddedTimeModel): EventRates {
  const cardCurve = stepCurve(params.cards.band_weights, added);
  const subCurve = stepCurve(params.substitutions.band_weights, added);
  const { conversion, on_target_share } = params.shots;
  const yellowPerMatch = [params.cards.yellow_per_match.home, params.cards.yellow_per_match.away];
  const redPerMatch = [params.cards.straight_red_per_match.home, params.cards.straight_red_per_match.away];
  const subs = params.substitutions;
  const rates: EventRates = {
    goals: new Float64Array(SIDES * STEPS),
    yellow: new Float64Array(SIDES * STEPS),
    red: new Float64Array(SIDES * STEPS),
    substitution: new Float64Array(SIDES * STEPS),
    savedPerGoal: on_target_share / conversion - 1,
    offTargetPerGoal: (1 - on_target_share) / conversion,
    scoreMultipliers: Float64Array.from(params.score_state_multipliers),
    redMultipliers: Float64Array.from([
      params.red_card_multipliers.side_down,
      1,
      params.red_card_multipliers.side_up,
    ]),
    calibratedGoals: [0, 0],
  };
  for (let side = 0; side < SIDES; side++) {
    for (let step = 0; step < STEPS; step++) {
      const at = side * STEPS + step;
      rates.yellow[at] = yellowPerMatch[side]! * cardCurve[step]!;
      rates.red[at] = redPerMatch[side]! * cardCurve[step]!;
      const halfTime = step === SECOND_HALF_START ? subs.half_time_share : 0;
      rates.substitution[at] =
        subs.expected_per_side * (halfTime + (1 - subs.half_time_share) * subCurve[step]!);
    }
  }
  return rates;
}

function setBaseGoals(rates: EventRates, goalCurve: readonly number[], base: readonly number[]): void {
  for (let side = 0; side < SIDES; side++) {
    for (let step = 0; step < STEPS; step++)
      rates.goals[side * STEPS + step] = base[side]! * goalCurve[step]!;
  }
}

/** Rounds of calibration at most; they stop earlier once both corrections are within tolerance. */
const CALIBRATION_ROUNDS = 8;

function eventRates(params: ModelParams, added: AddedTimeModel, ratedGoals: [number, number]): EventRates {
  const goalCurve = stepCurve(params.goal_band_weights, added);
  const rates = rateFactors(params, added);
  const base = [...ratedGoals];
  // Score-state and red-card effects shift a side's goals away from its rated figure: find the base
  // rates whose simulated expectation equals the rating (a few fixed-point rounds of an exact forward
  // pass over goal difference and player-count difference).
  const probabilities: StepProbabilities = {
    goal: new Float64Array(SIDES * STEPS * RATE_CELLS),
    red: new Float64Array(SIDES * STEPS * RATE_CELLS),
  };
  let simulated: [number, number] = [...ratedGoals];
  for (let round = 0; round < CALIBRATION_ROUNDS; round++) {
    setBaseGoals(rates, goalCurve, base);
    stepProbabilities(rates, probabilities);
    simulated = expectedGoalsUnderDynamics(added, probabilities);
    let converged = true;
    for (let side = 0; side < SIDES; side++) {
      if (!(simulated[side]! > 0)) continue;
      const correction = ratedGoals[side]! / simulated[side]!;
      if (Math.abs(correction - 1) > CALIBRATION_TOLERANCE) converged = false;
      base[side] = base[side]! * correction;
    }
    if (converged) break;
  }
  setBaseGoals(rates, goalCurve, base);
  rates.calibratedGoals = simulated;
  return rates;
}

const MAX_DIFF = 10;
const MAX_MEN_DIFF = 2;
const NEGLIGIBLE_MASS = 1e-13;
const MEN_STATES = 2 * MAX_MEN_DIFF + 1;
/** States of the forward pass: goal difference × player-count difference. */
const DYNAMICS_STATES = (2 * MAX_DIFF + 1) * MEN_STATES;
/** Rate cells of one (side, step): score bucket × red bucket. */
const RATE_CELLS = SCORE_STATE_BUCKETS * RED_CARD_BUCKETS;

/** Goal and red-card probabilities of each (side, step, score bucket, red bucket). */
interface StepProbabilities {
  goal: Float64Array;
  red: Float64Array;
}

function stateIndex(diff: number, men: number): number {
  return (diff + MAX_DIFF) * MEN_STATES + (men + MAX_MEN_DIFF);
}

/**
 * The forward pass's fixed geometry, built once: each state's rate cell for each side (the offset
 * within a (side, step) block) and where each of its six moves (besides staying) lands, clamped at the
 * edges: (+1, +1), (+1, 0), (-1, -1), (0, -1), (-1, 0), (0, +1) in (goal difference, men difference).
 */
const STATE_MOVES = [
  [1, 1],
  [1, 0],
  [-1, -1],
  [0, -1],
  [-1, 0],
  [0, 1],
] as const;
const MOVES = STATE_MOVES.length;
const HOME_CELL = new Int32Array(DYNAMICS_STATES);
const AWAY_CELL = new Int32Array(DYNAMICS_STATES);
const MOVE_TO = new Int32Array(DYNAMICS_STATES * MOVES);
for (let diff = -MAX_DIFF; diff <= MAX_DIFF; diff++) {
  for (let men = -MAX_MEN_DIFF; men <= MAX_MEN_DIFF; men++) {
    const i = stateIndex(diff, men);
    HOME_CELL[i] = rateCell(0, diff, men);
    AWAY_CELL[i] = rateCell(1, diff, men);
    STATE_MOVES.forEach(([dDiff, dMen], m) => {
      const d = Math.max(-MAX_DIFF, Math.min(MAX_DIFF, diff + dDiff));
      const n = Math.max(-MAX_MEN_DIFF, Math.min(MAX_MEN_DIFF, men + dMen));
      MOVE_TO[i * MOVES + m] = stateIndex(d, n);
    });
  }
}

/**
 * Expected goals of both sides under the score-state and red-card dynamics (at neutral lineup strength),
 * by propagating the distribution of (goal difference, red-card difference) through the steps. Added
 * steps are nested (step k+1 is played only if step k is), so the pass keeps the distribution of draws
 * still playing and folds finished ones back in after the added-time block.
 */
function expectedGoalsUnderDynamics(
  added: AddedTimeModel,
  probabilities: StepProbabilities,
): [number, number] {
  let dist = new Float64Array(DYNAMICS_STATES);
  let next = new Float64Array(DYNAMICS_STATES);
  const finished = new Float64Array(DYNAMICS_STATES);
  dist[stateIndex(0, 0)] = 1;
  const goals = new Float64Array(SIDES);
  let reach = 1; // P(this added step is played) before folding
  for (let step = 0; step < STEPS; step++) {
    const inAdded =
      (step >= FIRST_HALF_ADDED_START && step < SECOND_HALF_START) || step >= SECOND_HALF_ADDED_START;
    if (inAdded) {
      const played = added.stepPlayed[step]!;
      setAsideStopped(dist, finished, reach, played);
      reach = played;
    }
    next.fill(0);
    playStep(dist, next, step, probabilities, goals);
    [dist, next] = [next, dist];
    const lastAdded = step === SECOND_HALF_START - 1 || step === STEPS - 1;
    if (lastAdded) {
      for (let i = 0; i < DYNAMICS_STATES; i++) dist[i]! += finished[i]!;
      finished.fill(0);
      reach = 1;
    }
  }
  return [goals[0]!, goals[1]!];
}

/**
 * Goal and red-card probabilities of each (side, step, score bucket, red bucket) at neutral strength (a
 * strength multiplier of 1 changes no bit of a product), as thresholdTable computes them.
 */
function stepProbabilities(rates: EventRates, out: StepProbabilities): void {
  for (let sideStep = 0; sideStep < SIDES * STEPS; sideStep++) {
    for (let score = 0; score < SCORE_STATE_BUCKETS; score++) {
      const scoreGoals = rates.goals[sideStep]! * rates.scoreMultipliers[score]!;
      for (let redBucket = 0; redBucket < RED_CARD_BUCKETS; redBucket++) {
        const at = sideStep * RATE_CELLS + score * RED_CARD_BUCKETS + redBucket;
        const goals = scoreGoals * rates.redMultipliers[redBucket]!;
        const total = categoricalTotal(rates, sideStep, goals);
        out.goal[at] = goals / total;
        out.red[at] = rates.red[sideStep]! / total;
      }
    }
  }
}

/** The rate cell of `side` in state (diff, men), both counted from home's side, within its (side, step) block. */
function rateCell(side: number, diff: number, men: number): number {
  // men = home's opponents sent off minus home's: > 0 means home has more players.
  const own = side === 0 ? diff : -diff;
  const score = Math.max(-2, Math.min(2, own)) + 2;
  const sideMen = side === 0 ? men : -men;
  const redBucket = sideMen < 0 ? 0 : sideMen === 0 ? 1 : 2;
  return score * RED_CARD_BUCKETS + redBucket;
}

/**
 * At an added step: moves the draws whose half ended before it (reach − played of them) from `dist`
 * to `finished`, leaving in `dist` the draws that play it.
 */
function setAsideStopped(dist: Float64Array, finished: Float64Array, reach: number, played: number): void {
  const stopping = reach - played; // draws whose half ended before this step
  if (stopping > 0 && reach > 0) {
    for (let i = 0; i < DYNAMICS_STATES; i++) finished[i]! += (dist[i]! * stopping) / reach;
    const keep = played / reach;
    for (let i = 0; i < DYNAMICS_STATES; i++) dist[i]! *= keep;
  }
}

/**
 * One step of the forward pass: adds the step's expected goals to `goals` and spreads `dist` into `next`.
 * The sums are made in state order and, within a state, in move order, as they always were: floating-point
 * addition is not associative, and the calibrated rates must keep their last bits. (A move of zero mass
 * adds nothing: `next` holds no -0.)
 */
function playStep(
  dist: Float64Array,
  next: Float64Array,
  step: number,
  { goal, red }: StepProbabilities,
  goals: Float64Array,
): void {
  const homeAt = step * RATE_CELLS;
  const awayAt = (STEPS + step) * RATE_CELLS;
  let homeGoals = goals[0]!;
  let awayGoals = goals[1]!;
  for (let i = 0; i < DYNAMICS_STATES; i++) {
    const mass = dist[i]!;
    if (mass < NEGLIGIBLE_MASS) continue; // far tails (10-goal margins) change nothing measurable
    const homeCell = homeAt + HOME_CELL[i]!;
    const awayCell = awayAt + AWAY_CELL[i]!;
    const homeGoal = goal[homeCell]!;
    const homeRed = red[homeCell]!;
    const awayGoal = goal[awayCell]!;
    const awayRed = red[awayCell]!;
    homeGoals += mass * homeGoal;
    awayGoals += mass * awayGoal;
    const homeNone = 1 - homeGoal - homeRed;
    const awayNone = 1 - awayGoal - awayRed;
    const to = i * MOVES;
    next[i]! += mass * (homeGoal * awayGoal + homeRed * awayRed + homeNone * awayNone);
    next[MOVE_TO[to]!]! += mass * homeGoal * awayRed;
    next[MOVE_TO[to + 1]!]! += mass * homeGoal * awayNone;
    next[MOVE_TO[to + 2]!]! += mass * homeRed * awayGoal;
    next[MOVE_TO[to + 3]!]! += mass * homeRed * awayNone;
    next[MOVE_TO[to + 4]!]! += mass * homeNone * awayGoal;
    next[MOVE_TO[to + 5]!]! += mass * homeNone * awayRed;
  }
  goals[0] = homeGoals;
  goals[1] = awayGoals;
}
