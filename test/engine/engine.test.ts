import { describe, expect, it } from 'vitest';
import {
  createCpuEngine,
  runCpuEngine,
  runWhole,
  spreadOf,
  WHOLE_RUN_MAX_DRAWS,
} from '../../fallback/cpu-engine.js';
import { recordSamplePaths, simulateRange } from '../../fallback/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import {
  AWAY,
  addCounters,
  C_FT_GRID,
  C_HT_GRID,
  C_STEP_GOALS,
  C_STEP_STATE,
  C_TEAM,
  COUNTER_WORDS,
  type CompiledFixture,
  EVENT_GOAL,
  FX_MAX_SUBSTITUTIONS,
  finalizeCounters,
  GRID_SIZE,
  HOME,
  P_APPEARANCES,
  P_STARTS,
  PLAYER_COUNTERS,
  PLAYER_SLOTS,
  playerCounterBase,
  RED_CARD_BUCKETS,
  SECOND_HALF_ADDED_START,
  SECOND_HALF_START,
  STATE_HOME_LEADING,
  STATE_LEVEL,
  STEPS,
  TEAM_COUNTERS,
  TEAM_GOALS,
  TEAM_SUBSTITUTIONS,
  thresholdIndex,
} from '../../src/engine-contract/layout.js';
import type { MatchInputs } from '../../src/engine-contract/match-inputs.js';
import {
  defaultModelParams,
  type ModelParams,
  modelParamsSchema,
} from '../../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from './plausible-teams.js';

const seed = { lo: 0x1234_5678, hi: 0x9abc_def0 };
const inputs = plausibleFixture(
  7,
  { teamId: 1, attack: 0.15, defence: 0.05 },
  { teamId: 2, attack: -0.05, defence: 0 },
);
const compiled = compileFixture(inputs, defaultModelParams);

function counts(fixture: CompiledFixture, draws: number, runSeed = seed): Uint32Array {
  const counters = new Uint32Array(COUNTER_WORDS);
  simulateRange(fixture, runSeed, 0, draws, counters);
  finalizeCounters(counters);
  return counters;
}

const team = (counters: Uint32Array, side: number, counter: number) =>
  counters[C_TEAM + side * TEAM_COUNTERS + counter]!;

describe('determinism', () => {
  it('gives identical counts for identical inputs and seed, different counts for another seed', () => {
    const first = counts(compileFixture(inputs, defaultModelParams), 3000);
    const second = counts(compileFixture(structuredClone(inputs), defaultModelParams), 3000);
    expect(second).toEqual(first);
    expect(counts(compiled, 3000, { lo: seed.lo + 1, hi: seed.hi })).not.toEqual(first);
  });

  it('does not depend on how the draws are split into ranges', () => {
    const whole = counts(compiled, 5000);
    const pieces = new Uint32Array(COUNTER_WORDS);
    for (const [from, to] of [
      [0, 1],
      [1, 1234],
      [1234, 4999],
      [4999, 5000],
    ] as const) {
      const part = new Uint32Array(COUNTER_WORDS);
      simulateRange(compiled, seed, from, to, part);
      addCounters(pieces, part);
    }
    finalizeCounters(pieces);
    expect(pieces).toEqual(whole);
  });

  it('gives the same counts on worker threads as on the calling thread', async () => {
    const draws = 20_000; // two ranges of 10,000
    const inline = await runCpuEngine(compiled, { draws, seed, threads: 0 });
    let progress = 0;
    const pooled = await runCpuEngine(compiled, {
      draws,
      seed,
      threads: 2,
      onProgress: (done) => {
        progress = done;
      },
    });
    expect(pooled.counts).toEqual(inline.counts);
    expect(progress).toBe(draws);
    expect(pooled.backend).toBe('cpu-workers-2');
  });

  it('counts a run it spreads whole on the calling thread as its pool counts it', async () => {
    expect(spreadOf(WHOLE_RUN_MAX_DRAWS)).toBe('whole');
    expect(spreadOf(WHOLE_RUN_MAX_DRAWS + 1)).toBe('pool');
    const engine = createCpuEngine({ threads: 2 });
    try {
      expect(engine.spreadOf(100)).toBe('whole');
      let progress = 0;
      const whole = runWhole(compiled, { draws: 12_345, seed, onProgress: (done) => (progress = done) }, 'x');
      expect(whole).toMatchObject({ engine: 'cpu', backend: 'x' });
      expect(progress).toBe(12_345);
      expect((await engine.run(compiled, { draws: 12_345, seed })).counts).toEqual(whole.counts);
      expect(whole.counts).toEqual(counts(compiled, 12_345));
    } finally {
      await engine.close();
    }
  });

  it('leaves the calling thread’s event loop free while workers simulate', async () => {
    const engine = createCpuEngine({ threads: 1 });
    try {
      await engine.run(compiled, { draws: 100, seed }); // worker started
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      let finished = false;
      const run = engine.run(compiled, { draws: 30_000, seed }).then(() => {
        finished = true;
      });
      // A blocked event loop could not run this timer before the run ends.
      while (!finished && ticks < 3) await new Promise((resolve) => setTimeout(resolve, 1));
      expect(finished).toBe(false);
      await run;
      clearInterval(timer);
    } finally {
      await engine.close();
    }
  });
});

describe('bookkeeping', () => {
  const draws = 6000;
  const result = counts(compiled, draws);

  it('puts every draw in one score-grid cell and sums step goals to team goals', () => {
    let grid = 0;
    let halfTime = 0;
    for (let i = 0; i < GRID_SIZE * GRID_SIZE; i++) {
      grid += result[C_FT_GRID + i]!;
      halfTime += result[C_HT_GRID + i]!;
    }
    expect(grid).toBe(draws);
    expect(halfTime).toBe(draws);
    for (const side of [HOME, AWAY]) {
      let perStep = 0;
      for (let step = 0; step < STEPS; step++) perStep += result[C_STEP_GOALS + side * STEPS + step]!;
      expect(perStep).toBe(team(result, side, TEAM_GOALS));
    }
  });

  it('carries each draw’s last score state through steps it did not play', () => {
    const gridSum = (at: number, test: (home: number, away: number) => boolean) => {
      let sum = 0;
      for (let h = 0; h < GRID_SIZE; h++) {
        for (let a = 0; a < GRID_SIZE; a++) if (test(h, a)) sum += result[at + h * GRID_SIZE + a]!;
      }
      return sum;
    };
    const state = (row: number, step: number) => result[C_STEP_STATE + row * STEPS + step]!;
    // The last step of each half's added time is rarely played: its state is the half's final score.
    expect(state(STATE_HOME_LEADING, SECOND_HALF_START - 1)).toBe(gridSum(C_HT_GRID, (h, a) => h > a));
    expect(state(STATE_LEVEL, SECOND_HALF_START - 1)).toBe(gridSum(C_HT_GRID, (h, a) => h === a));
    expect(state(STATE_HOME_LEADING, STEPS - 1)).toBe(gridSum(C_FT_GRID, (h, a) => h > a));
    expect(state(STATE_LEVEL, STEPS - 1)).toBe(gridSum(C_FT_GRID, (h, a) => h === a));
    for (let step = 0; step < STEPS; step++) {
      expect(state(STATE_HOME_LEADING, step) + state(STATE_LEVEL, step)).toBeLessThanOrEqual(draws);
    }
    expect(state(STATE_LEVEL, 0)).toBeGreaterThan(draws * 0.95);
  });

  it('keeps each side’s expected goals at the ratings’ figure despite the in-match dynamics', () => {
    const many = counts(compiled, 20_000);
    for (const [side, rated] of [
      [HOME, compiled.ratedGoals.home],
      [AWAY, compiled.ratedGoals.away],
    ] as const) {
      const mean = team(many, side, TEAM_GOALS) / 20_000;
      // The standard error of a mean of about 1.5 goals over 20,000 draws is about 0.009.
      expect(Math.abs(mean - rated)).toBeLessThan(0.03);
    }
  });
});

describe('lineups', () => {
  it('draws predicted XIs with one goalkeeper and ten outfield players, following start probabilities', () => {
    const draws = 20_000;
    const result = counts(compiled, draws);
    for (const [side, sideInputs] of [
      [HOME, inputs.home],
      [AWAY, inputs.away],
    ] as const) {
      let starters = 0;
      let keepers = 0;
      const outfieldTotal = sideInputs.players
        .filter((p) => p.position !== 'goalkeeper')
        .reduce((sum, p) => sum + p.start_probability, 0);
      const keeperTotal = sideInputs.players
        .filter((p) => p.position === 'goalkeeper')
        .reduce((sum, p) => sum + p.start_probability, 0);
      sideInputs.players.forEach((player, slot) => {
        const starts = result[playerCounterBase(side, slot) + P_STARTS]!;
        starters += starts;
        const keeper = player.position === 'goalkeeper';
        if (keeper) keepers += starts;
        // The plan scales start probabilities to one goalkeeper and ten outfield players.
        const expected = keeper
          ? player.start_probability / keeperTotal
          : Math.min(1, (player.start_probability * 10) / outfieldTotal);
        expect(Math.abs(starts / draws - expected)).toBeLessThan(0.012);
      });
      expect(starters).toBe(11 * draws);
      expect(keepers).toBe(draws);
    }
  });

  it('never plays a player outside a fixed XI and bench, and always starts the XI', () => {
    const fixed: MatchInputs = { ...inputs, home: withAnnouncedLineup(inputs.home) };
    const result = counts(compileFixture(fixed, defaultModelParams), 4000);
    const named = new Set([...fixed.home.lineup.xi, ...fixed.home.lineup.bench]);
    fixed.home.players.forEach((player, slot) => {
      const base = playerCounterBase(HOME, slot);
      const playerCounts = Array.from(result.subarray(base, base + PLAYER_COUNTERS));
      if (!named.has(player.player_id)) expect(playerCounts.every((count) => count === 0)).toBe(true);
      if (fixed.home.lineup.xi.includes(player.player_id)) expect(result[base + P_STARTS]).toBe(4000);
      if (fixed.home.lineup.bench.includes(player.player_id)) expect(result[base + P_STARTS]).toBe(0);
    });
    for (let slot = fixed.home.players.length; slot < PLAYER_SLOTS; slot++) {
      expect(result[playerCounterBase(HOME, slot) + P_APPEARANCES]).toBe(0);
    }
  });

  it('scores less with a weaker XI (the attackers benched)', () => {
    const best = withAnnouncedLineup(inputs.home);
    const attackers = new Set(
      inputs.home.players.filter((p) => p.position === 'attacker').map((p) => p.player_id),
    );
    const spareDefenders = inputs.home.players
      .filter((p) => p.position === 'defender' && !best.lineup.xi.includes(p.player_id))
      .map((p) => p.player_id);
    const weakXi = best.lineup.xi.map((id) => (attackers.has(id) ? spareDefenders.pop()! : id));
    const weak = {
      ...best,
      lineup: {
        ...best.lineup,
        source: 'custom' as const,
        xi: weakXi,
        bench: best.lineup.bench.filter((id) => !weakXi.includes(id)),
      },
    };
    const goals = (home: typeof best) =>
      team(counts(compileFixture({ ...inputs, home }, defaultModelParams), 8000), HOME, TEAM_GOALS) / 8000;
    const ratio = goals(weak) / goals(best);
    // Without its attackers the XI holds well under 80% of the expected goal weight: the lowest
    // strength bucket, 0.72 ^ 0.5 = 0.85 of the goals (standard error of the ratio about 0.02).
    expect(ratio).toBeLessThan(0.92);
  });

  it('substitutes at most five times per side, bench players on, never a goalkeeper off', () => {
    const fixed: MatchInputs = { ...inputs, home: withAnnouncedLineup(inputs.home) };
    const fixture = compileFixture(fixed, defaultModelParams);
    const keepers = new Set(
      fixed.home.players.flatMap((p, slot) => (p.position === 'goalkeeper' ? [slot] : [])),
    );
    const bench = new Set(
      fixed.home.lineup.bench.map((id) => fixed.home.players.findIndex((p) => p.player_id === id)),
    );
    let substitutions = 0;
    for (const path of recordSamplePaths(fixture, seed, 2000)) {
      const subs = path.events.filter((event) => event.type === 'substitution');
      for (const side of [HOME, AWAY])
        expect(subs.filter((e) => e.side === side).length).toBeLessThanOrEqual(5);
      for (const event of subs.filter((e) => e.side === HOME)) {
        expect(bench.has(event.slot)).toBe(true);
        expect(keepers.has(event.offSlot!)).toBe(false);
        substitutions++;
      }
    }
    // Modern top-flight sides make about four substitutions a match.
    expect(substitutions / 2000).toBeGreaterThan(3.5);
    expect(substitutions / 2000).toBeLessThan(5);
    const result = counts(fixture, 2000);
    expect(team(result, HOME, TEAM_SUBSTITUTIONS)).toBe(substitutions);
  });

  it('refuses a table allowing more substitutions than its substitute lists hold (the parameters allow 5)', () => {
    const table = compileFixture(inputs, defaultModelParams);
    const six = { ...table, fixture: table.fixture.slice() };
    six.fixture[FX_MAX_SUBSTITUTIONS] = 6;
    expect(() => counts(six, 10)).toThrow(/at most 5 substitutions/);
    expect(() =>
      modelParamsSchema.parse({
        ...defaultModelParams,
        substitutions: { ...defaultModelParams.substitutions, max_per_side: 6 },
      }),
    ).toThrow();
  });
});

describe('red cards', () => {
  it('lower the scoring rate of the side a man down and raise its opponent’s (table and simulation)', () => {
    // Thresholds: same side, step and score state; red bucket 0 = fewer players, 1 = equal, 2 = more.
    const goalThreshold = (red: number) =>
      compiled.thresholds[thresholdIndex(HOME, 2, 70, 2, red) + EVENT_GOAL]!;
    expect(goalThreshold(0)).toBeLessThan(goalThreshold(1));
    expect(goalThreshold(2)).toBeGreaterThan(goalThreshold(1));
    expect(RED_CARD_BUCKETS).toBe(3);

    // Simulation: many red cards (one straight red per side and match), then compare goals per minute
    // played a man down with goals per minute at equal numbers, from the recorded event paths.
    const params: ModelParams = {
      ...defaultModelParams,
      cards: { ...defaultModelParams.cards, straight_red_per_match: { home: 1, away: 1 } },
    };
    const fixture = compileFixture(inputs, params);
    const minutes = { down: 0, even: 0, up: 0 };
    const goals = { down: 0, even: 0, up: 0 };
    for (const path of recordSamplePaths(fixture, seed, 6000)) {
      const played = (step: number) =>
        step < 45 + path.addedMinutes[0] ||
        (step >= SECOND_HALF_START && step < SECOND_HALF_ADDED_START + path.addedMinutes[1]);
      const sentOff = [0, 0];
      let next = 0;
      for (let step = 0; step < STEPS; step++) {
        if (!played(step)) continue;
        const state =
          sentOff[HOME]! > sentOff[AWAY]! ? 'down' : sentOff[HOME] === sentOff[AWAY] ? 'even' : 'up';
        minutes[state]++;
        while (next < path.events.length && path.events[next]!.step === step) {
          const event = path.events[next++]!;
          if (event.type === 'goal' && event.side === HOME) goals[state]++;
          if (event.type === 'red_card') sentOff[event.side]!++;
        }
      }
    }
    const rate = (state: keyof typeof goals) => goals[state] / minutes[state];
    expect(minutes.down).toBeGreaterThan(20_000);
    expect(rate('down')).toBeLessThan(rate('even') * 0.9);
    expect(rate('up')).toBeGreaterThan(rate('even') * 1.1);
  });
});

describe('compile', () => {
  it('writes every threshold row in ascending cumulative order', () => {
    const th = compiled.thresholds;
    let disordered = 0;
    for (let at = 0; at < th.length; at += 6) {
      for (let k = 1; k < 6; k++) if (th[at + k]! < th[at + k - 1]!) disordered++;
    }
    expect(disordered).toBe(0);
    expect(th.every((threshold) => threshold < 2 ** 32)).toBe(true);
  });

  it('uses a whole-squad plan when no goalkeeper is labelled', () => {
    const unlabelled: MatchInputs = {
      ...inputs,
      away: { ...inputs.away, players: inputs.away.players.map((p) => ({ ...p, position: null })) },
    };
    const result = counts(compileFixture(unlabelled, defaultModelParams), 2000);
    let starters = 0;
    for (let slot = 0; slot < unlabelled.away.players.length; slot++)
      starters += result[playerCounterBase(AWAY, slot) + P_STARTS]!;
    expect(starters).toBe(11 * 2000);
  });
});
