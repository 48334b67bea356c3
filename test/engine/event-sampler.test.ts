// The event-driven sampler (the engine: fallback/engine.ts simulateRange) against the per-step sampler it
// replaced (test/engine/per-step-reference.ts simulateRangePerStep): the same model, different random words, so the counts must agree in distribution. For 20
// varied fixtures (strong against weak, predicted, announced and custom lineups, card-heavy parameters)
// every statistic below must agree within Monte Carlo error.
//
// Tolerance: |difference| < Z_LIMIT standard errors of the difference, the two runs' standard errors
// combined as if independent (they share the lineup and added-time words of each draw, which only
// correlates them positively, so this overstates the error of the difference and errs on the side of
// passing a true equality, not of hiding a bias). 20 fixtures x 45 statistics = 900 comparisons; with
// Z_LIMIT = 4.5 an exact sampler fails one of them with probability about 900 x 7e-6 = 0.6% (and the
// seeds are fixed, so the test never flakes). Each statistic is also pooled over the 20 fixtures (mean
// z-score x sqrt(20)), which brings a systematic bias of half a standard error per fixture (at these
// draw counts: about 0.3% of shots) to 2.2 standard errors; the pooled limit is POOLED_Z_LIMIT.
//
// Draws: DRAWS per fixture and sampler, 20,000 by default: both samplers run under vitest's module
// transform at several microseconds a draw, and 20 fixtures at 1,000,000 draws would take many minutes
// of a 2-core CI machine. EVENT_SAMPLER_DRAWS raises it (EVENT_SAMPLER_DRAWS=1000000 is the issue's
// full check, run by hand; at 200,000 draws it caught a 0.5% excess of events while the sampler was
// written). The pooled check keeps the default sensitive to a bias shared by the fixtures.
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../fallback/cpu-engine.js';
import { recordSamplePaths, simulateRange } from '../../fallback/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import {
  buildEventTables,
  exponentialBits,
  roundNonNegative,
} from '../../src/engine-contract/event-tables.js';
import {
  AWAY,
  addCounters,
  C_FIRST_GOAL,
  C_FT_GRID,
  C_GOAL_SQUARES,
  C_HT_GRID,
  C_TEAM,
  COUNTER_WORDS,
  type CompiledFixture,
  EVENT_KIND_WORDS,
  EVENT_KINDS_AT,
  EVENT_ROWS,
  finalizeCounters,
  GRID_SIZE,
  HAZARD_FRACTION_BITS,
  HAZARD_ROW_WORDS,
  HOME,
  P_FIRST_SCORER,
  P_GOALS_1,
  P_RED_1,
  P_SHOTS,
  P_SHOTS_ON_TARGET,
  P_YELLOW_1,
  playerCounterBase,
  SHOT_COUNTER_UNIT,
  STEPS,
  TEAM_COUNTERS,
  TEAM_GOALS,
  TEAM_REDS,
  TEAM_SHOTS,
  TEAM_SHOTS_ON_TARGET,
  TEAM_SUBSTITUTIONS,
  TEAM_YELLOWS,
} from '../../src/engine-contract/layout.js';
import type { MatchInputs, SideInputs } from '../../src/engine-contract/match-inputs.js';
import { defaultModelParams, type ModelParams } from '../../src/engine-contract/model-params.js';
import { simulateRangePerStep } from './per-step-reference.js';
import { plausibleFixture, withAnnouncedLineup } from './plausible-teams.js';

const DRAWS = Number(process.env.EVENT_SAMPLER_DRAWS ?? 20_000);
const Z_LIMIT = 4.5;
const POOLED_Z_LIMIT = 4.5;

/** One statistic of a run: a per-draw mean and its standard error. */
interface Estimate {
  mean: number;
  se: number;
}

/** A share of draws (binomial standard error). */
function share(count: number, draws: number): Estimate {
  const p = count / draws;
  return { mean: p, se: Math.sqrt(Math.max(p * (1 - p), 1 / draws) / draws) };
}

/**
 * A per-draw count whose variance the counters do not hold (cards, shots, substitutions): standard error
 * from a Poisson variance (= the mean) doubled, an upper bound for these sums of rare per-step events
 * whose rates vary with the score and the lineup.
 */
function countMean(total: number, draws: number): Estimate {
  const mean = total / draws;
  return { mean, se: Math.sqrt((2 * Math.max(mean, 1 / draws)) / draws) };
}

function gridStats(c: Uint32Array, at: number, draws: number): Record<string, Estimate> {
  let home = 0;
  let draw = 0;
  let over = 0;
  let goals = 0;
  let squares = 0;
  for (let h = 0; h < GRID_SIZE; h++) {
    for (let a = 0; a < GRID_SIZE; a++) {
      const n = c[at + h * GRID_SIZE + a]!;
      if (h > a) home += n;
      if (h === a) draw += n;
      if (h + a > 2) over += n;
      goals += n * (h + a);
      squares += n * (h + a) * (h + a);
    }
  }
  const mean = goals / draws;
  return {
    home: share(home, draws),
    draw: share(draw, draws),
    over25: share(over, draws),
    goals: { mean, se: Math.sqrt(Math.max(squares / draws - mean * mean, 1 / draws) / draws) },
  };
}

/** The statistics compared: results, totals, first half, goals, shots, cards, substitutions, scorers. */
function statistics(c: Uint32Array, draws: number, players: [number, number]): Record<string, Estimate> {
  const stats: Record<string, Estimate> = {};
  const ft = gridStats(c, C_FT_GRID, draws);
  const ht = gridStats(c, C_HT_GRID, draws);
  for (const [name, value] of Object.entries(ft)) stats[`ft ${name}`] = value;
  for (const [name, value] of Object.entries(ht)) stats[`first half ${name}`] = value;
  stats['no goal'] = share(c[C_FIRST_GOAL + 2]!, draws);
  for (const side of [HOME, AWAY]) {
    const team = (k: number) => c[C_TEAM + side * TEAM_COUNTERS + k]!;
    const goals = team(TEAM_GOALS) / draws;
    const squares = c[C_GOAL_SQUARES + side]! / draws;
    stats[`${side} goals`] = { mean: goals, se: Math.sqrt((squares - goals * goals) / draws) };
    // Shot counters are in units of 1 / SHOT_COUNTER_UNIT (the engine adds expected shots; the per-step
    // sampler counts sampled ones in the same units).
    stats[`${side} shots`] = countMean(team(TEAM_SHOTS) / SHOT_COUNTER_UNIT, draws);
    stats[`${side} on target`] = countMean(team(TEAM_SHOTS_ON_TARGET) / SHOT_COUNTER_UNIT, draws);
    stats[`${side} yellows`] = countMean(team(TEAM_YELLOWS), draws);
    stats[`${side} reds`] = countMean(team(TEAM_REDS), draws);
    stats[`${side} substitutions`] = countMean(team(TEAM_SUBSTITUTIONS), draws);
    stats[`${side} first goal`] = share(c[C_FIRST_GOAL + side]!, draws);
    for (let slot = 0; slot < players[side]!; slot++) {
      const at = playerCounterBase(side, slot);
      // Attackers (slots 19-24 of the plausible squads) and the first midfielders: the scorers.
      if (slot >= 11) stats[`${side}:${slot} scores`] = share(c[at + P_GOALS_1]!, draws);
      if (slot >= 19) stats[`${side}:${slot} first scorer`] = share(c[at + P_FIRST_SCORER]!, draws);
      if (slot >= 19 || slot === 3) {
        stats[`${side}:${slot} shots`] = countMean(c[at + P_SHOTS]! / SHOT_COUNTER_UNIT, draws);
        stats[`${side}:${slot} on target`] = countMean(c[at + P_SHOTS_ON_TARGET]! / SHOT_COUNTER_UNIT, draws);
      }
      if (slot === 3 || slot === 11) stats[`${side}:${slot} booked`] = share(c[at + P_YELLOW_1]!, draws);
      if (slot === 3) stats[`${side}:${slot} sent off`] = share(c[at + P_RED_1]!, draws);
    }
  }
  return stats;
}

function run(
  sampler: typeof simulateRange,
  compiled: CompiledFixture,
  seed: { lo: number; hi: number },
  draws: number,
): Uint32Array {
  const counters = new Uint32Array(COUNTER_WORDS);
  sampler(compiled, seed, 0, draws, counters);
  finalizeCounters(counters);
  return counters;
}

/** z-score of every statistic: (event sampler - per-step sampler) / combined standard error. */
function compare(inputs: MatchInputs, params: ModelParams, seed: number, draws: number): Map<string, number> {
  const compiled = compileFixture(inputs, params);
  const players: [number, number] = [inputs.home.players.length, inputs.away.players.length];
  const runSeed = { lo: seed, hi: 0xe7e7 };
  const reference = statistics(run(simulateRangePerStep, compiled, runSeed, draws), draws, players);
  const events = statistics(run(simulateRange, compiled, runSeed, draws), draws, players);
  const z = new Map<string, number>();
  for (const [name, ref] of Object.entries(reference)) {
    const ev = events[name]!;
    const se = Math.hypot(ref.se, ev.se);
    z.set(name, se === 0 ? 0 : (ev.mean - ref.mean) / se);
  }
  return z;
}

/** A custom XI: the side's least likely starters (one goalkeeper, ten outfield), bench the next five. */
function withCustomLineup(side: SideInputs): SideInputs {
  const byLikelihood = [...side.players].sort((a, b) => a.start_probability - b.start_probability);
  const keeper = byLikelihood.find((p) => p.position === 'goalkeeper')!;
  const outfield = byLikelihood.filter((p) => p.position !== 'goalkeeper').slice(0, 10);
  const xi = [keeper, ...outfield].map((p) => p.player_id);
  const bench = byLikelihood
    .filter((p) => !xi.includes(p.player_id) && p.position !== 'goalkeeper')
    .slice(0, 5)
    .map((p) => p.player_id);
  return { ...side, lineup: { source: 'custom', xi, bench, formation: null } };
}

function cardHeavy(): ModelParams {
  const params = structuredClone(defaultModelParams);
  params.cards.yellow_per_match = { home: 4.5, away: 5 };
  params.cards.straight_red_per_match = { home: 0.6, away: 0.8 };
  return params;
}

interface Case {
  name: string;
  inputs: MatchInputs;
  params: ModelParams;
}

const RATINGS: [number, number, number, number][] = [
  [0.5, 0.35, -0.4, -0.3], // strong against weak
  [-0.4, -0.3, 0.5, 0.35], // weak against strong
  [0, 0, 0, 0],
  [0.25, -0.2, 0.2, -0.25], // open
  [-0.2, 0.3, -0.25, 0.25], // tight
];

function cases(): Case[] {
  const all: Case[] = [];
  RATINGS.forEach(([ha, hd, aa, ad], i) => {
    const base = plausibleFixture(
      i + 1,
      { teamId: 1, attack: ha, defence: hd },
      { teamId: 2, attack: aa, defence: ad },
    );
    const announced = { ...base, home: withAnnouncedLineup(base.home), away: withAnnouncedLineup(base.away) };
    const custom = { ...base, home: withCustomLineup(base.home), away: withAnnouncedLineup(base.away) };
    all.push({ name: `predicted ${i}`, inputs: base, params: defaultModelParams });
    all.push({ name: `announced ${i}`, inputs: announced, params: defaultModelParams });
    all.push({ name: `custom ${i}`, inputs: custom, params: defaultModelParams });
    all.push({ name: `card-heavy ${i}`, inputs: i % 2 === 0 ? base : announced, params: cardHeavy() });
  });
  return all;
}

describe('event tables', () => {
  const compiled = compileFixture(cases()[15]!.inputs, cardHeavy());
  const tables = buildEventTables(compiled.thresholds);

  it('draws the hazard budget -log2(w / 2^32) within a few units of 2^-18 bits', () => {
    const unit = 2 ** HAZARD_FRACTION_BITS;
    expect(exponentialBits(tables, 0)).toBe(32 * unit);
    expect(exponentialBits(tables, 0x8000_0000)).toBe(unit);
    for (let i = 1; i < 5000; i++) {
      const w = Math.imul(i, 0x9e37_79b9) >>> 0 || 1;
      expect(Math.abs(exponentialBits(tables, w) - -Math.log2(w / 2 ** 32) * unit)).toBeLessThan(3);
    }
  });

  it('keeps every row of cumulative hazards ascending and each step’s kind words ascending', () => {
    let descending = 0;
    for (let row = 0; row < EVENT_ROWS; row++) {
      for (let step = 0; step < STEPS; step++) {
        const at = row * HAZARD_ROW_WORDS + step;
        if (tables[at + 1]! < tables[at]!) descending++;
        const kinds = EVENT_KINDS_AT + (row * STEPS + step) * EVENT_KIND_WORDS;
        for (let k = 1; k < EVENT_KIND_WORDS; k++)
          if (tables[kinds + k]! < tables[kinds + k - 1]!) descending++;
      }
    }
    expect(descending).toBe(0);
    // Some step has events at all (the tables are not empty).
    expect(tables[HAZARD_ROW_WORDS - 1]!).toBeGreaterThan(0);
  });

  it('rounds its sums as Math.round does, without its branch', () => {
    const below = (x: number) => x - x * 2 ** -53; // the double just below a power of two
    const edges = [0, 2 ** -1074, 0.25, 0.5, 0.49999999999999994, 1, 1.5, 2.5, 1e15 + 0.5, 2 ** 52 - 0.5];
    for (let k = 0; k <= 52; k++) {
      const power = 2 ** k;
      edges.push(power, power - 0.5, below(power), below(power - 0.5), power - 0.5 + power * 2 ** -52);
    }
    let uniform = 0x2545_f491;
    for (let i = 0; i < 200_000; i++) {
      uniform = (Math.imul(uniform, 1_103_515_245) + 12_345) >>> 0;
      // Sums of the tables' size (below 2^32 · 2^18) with every fraction, and halves exactly.
      edges.push((uniform / 2 ** 32) * 2 ** (i % 51), Math.floor(uniform / 2 ** (i % 32)) + 0.5);
    }
    // Beyond 2^52 a double has no fraction and x + 0.5 rounds to even: the tables' sums stay below 2^32.
    // Compared here and asserted once (Object.is, as toEqual compares numbers): 400,000 expect calls took
    // 16 s of a CI run, the comparisons themselves milliseconds.
    const differing = edges
      .filter((x) => x < 2 ** 52)
      .filter((x) => !Object.is(roundNonNegative(x), Math.round(x)))
      .map((x) => [x, roundNonNegative(x), Math.round(x)]);
    expect(differing).toEqual([]);
  });
});

describe('event-driven sampler', () => {
  it('does not depend on how the draws are split into ranges or worker threads', async () => {
    const compiled = compileFixture(cases()[3]!.inputs, defaultModelParams);
    const seed = { lo: 0xabc, hi: 0xdef };
    const whole = run(simulateRange, compiled, seed, 25_000);
    const pieces = new Uint32Array(COUNTER_WORDS);
    for (const [from, to] of [
      [0, 1],
      [1, 9_999],
      [9_999, 25_000],
    ] as const) {
      const part = new Uint32Array(COUNTER_WORDS);
      simulateRange(compiled, seed, from, to, part);
      addCounters(pieces, part);
    }
    finalizeCounters(pieces);
    expect(pieces).toEqual(whole);
    const engine = createCpuEngine({ threads: 2 });
    try {
      expect((await engine.run(compiled, { draws: 25_000, seed })).counts).toEqual(whole);
    } finally {
      await engine.close();
    }
  });

  it('records the same draws as sample paths that it counts', () => {
    const compiled = compileFixture(cases()[12]!.inputs, defaultModelParams);
    const seed = { lo: 5, hi: 6 };
    const paths = recordSamplePaths(compiled, seed, 300);
    const counts = run(simulateRange, compiled, seed, 300);
    let homeGoals = 0;
    let events = 0;
    for (const path of paths) {
      homeGoals += path.score[HOME];
      let last = -1;
      for (const event of path.events) {
        expect(event.step).toBeGreaterThanOrEqual(last);
        last = event.step;
        events++;
      }
    }
    expect(homeGoals).toBe(counts[C_TEAM + HOME * TEAM_COUNTERS + TEAM_GOALS]);
    expect(events).toBeGreaterThan(300 * 10);
  });
});

describe('event-driven sampler against the per-step sampler', () => {
  it('agrees within Monte Carlo error on 20 fixtures, statistic by statistic and pooled', () => {
    const all = cases();
    expect(all).toHaveLength(20);
    const pooled = new Map<string, number>();
    const outliers: string[] = [];
    all.forEach((c, i) => {
      for (const [name, z] of compare(c.inputs, c.params, 1000 + i, DRAWS)) {
        if (Math.abs(z) >= Z_LIMIT) outliers.push(`${c.name} ${name}: z = ${z.toFixed(2)}`);
        pooled.set(name, (pooled.get(name) ?? 0) + z);
      }
    });
    expect(outliers).toEqual([]);
    const pooledOutliers = [...pooled]
      .map(([name, sum]) => [name, sum / Math.sqrt(all.length)] as const)
      .filter(([, z]) => Math.abs(z) >= POOLED_Z_LIMIT);
    expect(pooledOutliers).toEqual([]);
  }, 600_000);
});
