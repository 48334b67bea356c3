// The engine's expected shots (src/engine-contract/layout.ts "Shot tables"), checked against the shot
// tables directly: a fixture whose only events are shots that are not goals, so no cell or player ever
// changes and a side's expected shots in a draw are the shot tables' sum over the steps it played (first
// half to its added time, second half to its own). The draws' added minutes are in the counters, so the
// expected total is known exactly; the counters differ from it only by the dithered rounding to
// 1 / SHOT_COUNTER_UNIT, which is unbiased, so the means agree within a few thousandths of a shot.
import { describe, expect, it } from 'vitest';
import { simulateRange } from '../../fallback/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import { buildEventTables } from '../../src/engine-contract/event-tables.js';
import {
  C_ADDED_TIME,
  C_TEAM,
  COUNTER_WORDS,
  EVENT_CELLS,
  EVENT_KINDS,
  EVENT_ROWS,
  EVENT_SHOT_OFF_TARGET,
  EVENT_SHOT_ON_TARGET,
  EVENT_SHOTS_AT,
  EVENT_SUBSTITUTION,
  FIRST_HALF_ADDED_START,
  finalizeCounters,
  MAX_ADDED_MINUTES,
  MAX_COUNTER_INCREMENT_PER_DRAW,
  P_SHOTS,
  P_SHOTS_ON_TARGET,
  playerCounterBase,
  RED_CARD_BUCKETS,
  S_SHOT_WEIGHT,
  S_XI,
  SECOND_HALF_ADDED_START,
  SECOND_HALF_START,
  SHOT_COUNTER_BITS,
  SHOT_COUNTER_UNIT,
  SHOT_FRACTION_BITS,
  SHOT_ON_TARGET_OFFSET,
  SHOT_ROW_WORDS,
  SHOT_SHARE_BITS,
  SIDES,
  STEPS,
  STRENGTH_BUCKETS,
  sideBase,
  TEAM_COUNTERS,
  TEAM_SHOTS,
  TEAM_SHOTS_ON_TARGET,
  THRESHOLD_WORDS,
  thresholdIndex,
  XI_SIZE,
} from '../../src/engine-contract/layout.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from './plausible-teams.js';

const DRAWS = 20_000;
/** Each draw's counters are within 1 / SHOT_COUNTER_UNIT of its expected shots; the means far closer. */
const TOLERANCE = 0.003;

/** A threshold table with shots that are not goals only, rates rising through the match. */
function shotsOnlyThresholds(): Uint32Array {
  const thresholds = new Uint32Array(THRESHOLD_WORDS);
  for (let side = 0; side < SIDES; side++) {
    for (let strength = 0; strength < STRENGTH_BUCKETS; strength++) {
      for (let step = 0; step < STEPS; step++) {
        const shot = (0.04 + 0.0006 * step + 0.01 * side) * 2 ** 32;
        for (let cell = 0; cell < EVENT_CELLS; cell++) {
          const at = thresholdIndex(
            side,
            strength,
            step,
            Math.floor(cell / RED_CARD_BUCKETS),
            cell % RED_CARD_BUCKETS,
          );
          thresholds[at + EVENT_SHOT_ON_TARGET] = Math.round(0.35 * shot);
          for (let kind = EVENT_SHOT_OFF_TARGET; kind <= EVENT_SUBSTITUTION; kind++) {
            thresholds[at + kind] = Math.round(shot);
          }
        }
      }
    }
  }
  expect(EVENT_KINDS).toBe(6);
  return thresholds;
}

describe('expected shots arithmetic', () => {
  it('stays inside u32 and inside a draw’s counter increment (layout.ts "Shot tables")', () => {
    // A side's expected shots over a match: at most one shot per step.
    const matchShots = STEPS * 2 ** SHOT_FRACTION_BITS;
    // A player's share: weight * R <= the match's shots * 2^SHOT_SHARE_BITS, plus the dither below the shift.
    const playerShift = SHOT_FRACTION_BITS + SHOT_SHARE_BITS - SHOT_COUNTER_BITS;
    expect(matchShots * 2 ** SHOT_SHARE_BITS + 2 ** playerShift).toBeLessThan(2 ** 32);
    // The shift of a segment's shots before the division.
    expect(matchShots * 2 ** SHOT_SHARE_BITS).toBeLessThan(2 ** 32);
    // A draw's shot counters: an expected shot and a goal per step at most.
    expect(2 * STEPS * SHOT_COUNTER_UNIT).toBeLessThanOrEqual(MAX_COUNTER_INCREMENT_PER_DRAW);
    // And the tables keep to the first bound: a shot certain in every step sums to the match's maximum.
    const certain = new Uint32Array(THRESHOLD_WORDS);
    for (let at = 0; at < THRESHOLD_WORDS; at += EVENT_KINDS) {
      for (let kind = EVENT_SHOT_ON_TARGET; kind <= EVENT_SUBSTITUTION; kind++)
        certain[at + kind] = 2 ** 32 - 1;
    }
    const tables = buildEventTables(certain);
    let largest = 0;
    for (let row = 0; row < EVENT_ROWS; row++) {
      largest = Math.max(largest, tables[EVENT_SHOTS_AT + row * SHOT_ROW_WORDS + STEPS]!);
    }
    expect(largest).toBeLessThanOrEqual(matchShots);
    expect(largest).toBeGreaterThan(matchShots - STEPS);
  });
});

describe('expected shots', () => {
  const base = plausibleFixture(
    3,
    { teamId: 1, attack: 0, defence: 0 },
    { teamId: 2, attack: 0, defence: 0 },
  );
  const inputs = { ...base, home: withAnnouncedLineup(base.home), away: withAnnouncedLineup(base.away) };
  const compiled = { ...compileFixture(inputs, defaultModelParams), thresholds: shotsOnlyThresholds() };
  const tables = buildEventTables(compiled.thresholds);
  const counters = new Uint32Array(COUNTER_WORDS);
  simulateRange(compiled, { lo: 77, hi: 78 }, 0, DRAWS, counters);
  finalizeCounters(counters);

  /**
   * A side's expected shots per draw (series 0: all, SHOT_ON_TARGET_OFFSET: saved) over the draws' played
   * steps, from the shot tables and the draws' added minutes. No event ever changes a side's cell (level
   * score, equal players), and every strength bucket has the same rates here, so one row serves. With
   * `unplayed`, the first half's added-time steps count whether played or not (what a wrong skip adds).
   */
  function expectedShots(side: number, series: number, unplayed = false): number {
    const levelCell = 2 * RED_CARD_BUCKETS + 1;
    const row =
      EVENT_SHOTS_AT + (side * STRENGTH_BUCKETS * EVENT_CELLS + levelCell) * SHOT_ROW_WORDS + series;
    let total = 0;
    for (let added = 0; added <= MAX_ADDED_MINUTES; added++) {
      const firstEnd = unplayed ? SECOND_HALF_START : FIRST_HALF_ADDED_START + added;
      total += counters[C_ADDED_TIME + added]! * (tables[row + firstEnd]! - tables[row]!);
      total +=
        counters[C_ADDED_TIME + MAX_ADDED_MINUTES + 1 + added]! *
        (tables[row + SECOND_HALF_ADDED_START + added]! - tables[row + SECOND_HALF_START]!);
    }
    return total / DRAWS / 2 ** SHOT_FRACTION_BITS;
  }

  const mean = (counter: number) => counter / DRAWS / SHOT_COUNTER_UNIT;

  it('adds each side the shot tables’ sum over the steps it played, unplayed added time left out', () => {
    for (const side of [0, 1]) {
      const team = C_TEAM + side * TEAM_COUNTERS;
      const all = expectedShots(side, 0);
      const saved = expectedShots(side, SHOT_ON_TARGET_OFFSET);
      expect(all).toBeGreaterThan(5);
      expect(Math.abs(mean(counters[team + TEAM_SHOTS]!) - all)).toBeLessThan(TOLERANCE);
      expect(Math.abs(mean(counters[team + TEAM_SHOTS_ON_TARGET]!) - saved)).toBeLessThan(TOLERANCE);
      // Counting the first half's added-time steps whether played or not is off by far more.
      expect(Math.abs(mean(counters[team + TEAM_SHOTS]!) - expectedShots(side, 0, true))).toBeGreaterThan(
        0.1,
      );
    }
  });

  it('gives each starter his shot weight’s share of his side’s shots', () => {
    for (const side of [0, 1]) {
      const at = sideBase(side);
      const xi = Array.from({ length: XI_SIZE }, (_, i) => compiled.fixture[at + S_XI + i]!);
      const weights = xi.map((slot) => compiled.fixture[at + S_SHOT_WEIGHT + slot]!);
      const total = weights.reduce((a, b) => a + b, 0);
      const all = expectedShots(side, 0);
      const saved = expectedShots(side, SHOT_ON_TARGET_OFFSET);
      let sum = 0;
      xi.forEach((slot, i) => {
        const player = playerCounterBase(side, slot);
        expect(Math.abs(mean(counters[player + P_SHOTS]!) - (all * weights[i]!) / total)).toBeLessThan(
          TOLERANCE,
        );
        expect(
          Math.abs(mean(counters[player + P_SHOTS_ON_TARGET]!) - (saved * weights[i]!) / total),
        ).toBeLessThan(TOLERANCE);
        sum += mean(counters[player + P_SHOTS]!);
      });
      expect(Math.abs(sum - all)).toBeLessThan(XI_SIZE * TOLERANCE);
    }
  });
});
