// Runs from an in-play state (match inputs' from_state, docs/model.md "In play"): the CPU engine starts at
// the state's step with its score, red cards, players and bookings. The GPU kernel's counters equal these
// bit for bit (the in-play parity cases, src/cli/gpu-check/parity-cases.ts).
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../fallback/cpu-engine.js';
import { recordSamplePaths, simulateRange } from '../../fallback/engine.js';
import { eventfulParams } from '../../src/cli/gpu-check/parity-cases.js';
import { compileFixture } from '../../src/engine/compile.js';
import {
  compilePath,
  type PathEvent,
  pathEventIssue,
  pathEventSteps,
  pathStates,
} from '../../src/engine/compile-path.js';
import { addedTimeModel } from '../../src/engine/compile-rates.js';
import { stateIssues, stepOfMinute } from '../../src/engine/compile-state.js';
import { buildSimulationDocument, SAMPLE_PATHS } from '../../src/engine/document.js';
import { type SimulationDocument, simulationDocumentSchema } from '../../src/engine/document-schema.js';
import {
  C_ADDED_TIME,
  C_FT_GRID,
  C_HT_GRID,
  C_STEP_STATE,
  COUNTER_WORDS,
  type EngineSeed,
  finalizeCounters,
  GRID_SIZE,
  MAX_ADDED_MINUTES,
  minuteLabel,
  P_APPEARANCES,
  P_MINUTES,
  P_REDS,
  P_STARTS,
  P_YELLOWS,
  playerCounterBase,
  STATE_HOME_LEADING,
  STATE_LEVEL,
  STEPS,
} from '../../src/engine-contract/layout.js';
import type { FromState, MatchInputs } from '../../src/engine-contract/match-inputs.js';
import { defaultModelParams, type ModelParams } from '../../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from './plausible-teams.js';

const seed: EngineSeed = { lo: 0x52, hi: 0x1052 };

function counts(inputs: MatchInputs, draws: number, params: ModelParams = defaultModelParams): Uint32Array {
  const counters = new Uint32Array(COUNTER_WORDS);
  simulateRange(compileFixture(inputs, params), seed, 0, draws, counters);
  finalizeCounters(counters);
  return counters;
}

const predicted = plausibleFixture(
  52,
  { teamId: 104, attack: 0.2, defence: -0.1 },
  { teamId: 105, attack: 0, defence: 0 },
);
const announced: MatchInputs = {
  ...predicted,
  home: withAnnouncedLineup(predicted.home),
  away: withAnnouncedLineup(predicted.away),
};
const [homeXi, awayXi] = [announced.home.lineup.xi, announced.away.lineup.xi];
const [homeBench, awayBench] = [announced.home.lineup.bench, announced.away.lineup.bench];

/** 67th minute, 1-0: two home substitutions, an away player sent off, players booked on both sides. */
const at67: FromState = {
  minute: '67',
  score: { home: 1, away: 0 },
  sent_off: { home: [], away: [awayXi[4]!] },
  substitutions: {
    home: [
      { off: homeXi[9]!, on: homeBench[1]! },
      { off: homeXi[10]!, on: homeBench[3]! },
    ],
    away: [{ off: awayXi[8]!, on: awayBench[0]! }],
  },
  booked: { home: [homeXi[2]!, homeBench[1]!], away: [awayXi[3]!] },
};

function resultOf(counters: Uint32Array, draws: number): [number, number, number] {
  const result: [number, number, number] = [0, 0, 0];
  for (let home = 0; home < GRID_SIZE; home++) {
    for (let away = 0; away < GRID_SIZE; away++) {
      const n = counters[C_FT_GRID + home * GRID_SIZE + away]!;
      result[home > away ? 0 : home === away ? 1 : 2] += n / draws;
    }
  }
  return result;
}

describe('a run from an in-play state', () => {
  it('from the first step with nothing happened gives the pre-match counters bit for bit', () => {
    const state: FromState = { minute: '1', score: { home: 0, away: 0 } };
    for (const inputs of [predicted, announced]) {
      expect(counts({ ...inputs, from_state: state }, 2000)).toEqual(counts(inputs, 2000));
    }
  });

  it('from the first step, by another seed, gives the pre-match result within Monte Carlo error', () => {
    const draws = 40_000;
    const before = resultOf(counts(announced, draws), draws);
    const counters = new Uint32Array(COUNTER_WORDS);
    const compiled = compileFixture(
      { ...announced, from_state: { minute: '1', score: { home: 0, away: 0 } } },
      defaultModelParams,
    );
    simulateRange(compiled, { lo: 7, hi: 52 }, 0, draws, counters);
    const after = resultOf(counters, draws);
    for (let i = 0; i < 3; i++) {
      const standardError = Math.sqrt((before[i]! * (1 - before[i]!) * 2) / draws);
      expect(Math.abs(after[i]! - before[i]!)).toBeLessThan(4 * standardError);
    }
  });

  it('at the last step keeps its score but for a goal a side may still score in it', () => {
    const draws = 5000;
    const state: FromState = { minute: '90+10', score: { home: 2, away: 1 } };
    const counters = counts({ ...predicted, from_state: state }, draws);
    let kept = 0;
    for (let home = 0; home < GRID_SIZE; home++) {
      for (let away = 0; away < GRID_SIZE; away++) {
        const n = counters[C_FT_GRID + home * GRID_SIZE + away]!;
        if (n === 0) continue;
        expect([2, 3]).toContain(home);
        expect([1, 2]).toContain(away);
        if (home === 2 && away === 1) kept = n;
      }
    }
    // One minute has a few percent of a goal in it.
    expect(kept / draws).toBeGreaterThan(0.9);
    expect(kept).toBeLessThan(draws);
    // The state's step is played in every draw: ten added minutes.
    expect(counters[C_ADDED_TIME + MAX_ADDED_MINUTES + 1 + MAX_ADDED_MINUTES]).toBe(draws);
  });

  it('takes the half-time score a state in the second half gives, else its score, for the half-time figures', () => {
    const draws = 1000;
    for (const [halfTime, expected] of [
      [{ home: 1, away: 0 }, [1, 0]],
      [undefined, [2, 1]],
    ] as const) {
      const counters = counts(
        {
          ...predicted,
          from_state: {
            minute: '67',
            score: { home: 2, away: 1 },
            ...(halfTime ? { half_time: halfTime } : {}),
          },
        },
        draws,
      );
      expect(counters[C_HT_GRID + expected[0] * GRID_SIZE + expected[1]]).toBe(draws);
    }
    // A state in the first half: the half-time score is the draws' own.
    const early = counts({ ...predicted, from_state: { minute: '30', score: { home: 0, away: 0 } } }, draws);
    expect(early[C_HT_GRID]).toBeLessThan(draws);
  });

  it('in added time draws at least the state minute of added time', () => {
    const draws = 3000;
    const counters = counts(
      { ...predicted, from_state: { minute: '45+3', score: { home: 0, away: 0 } } },
      draws,
    );
    let atLeastThree = 0;
    for (let added = 0; added <= MAX_ADDED_MINUTES; added++) {
      const n = counters[C_ADDED_TIME + added]!;
      if (added < 3) expect(n).toBe(0);
      else atLeastThree += n;
    }
    expect(atLeastThree).toBe(draws);
  });

  it('counts the score state from its step on, the score in it', () => {
    const draws = 2000;
    const counters = counts({ ...announced, from_state: at67 }, draws);
    const step = stepOfMinute('67')!;
    for (let s = 0; s < step; s++) {
      expect(counters[C_STEP_STATE + STATE_HOME_LEADING * STEPS + s]).toBe(0);
      expect(counters[C_STEP_STATE + STATE_LEVEL * STEPS + s]).toBe(0);
    }
    // 1-0 at the state: home leading in every draw until a goal comes in the step.
    expect(counters[C_STEP_STATE + STATE_HOME_LEADING * STEPS + step]).toBeGreaterThan(0.95 * draws);
    for (let away = 0; away < GRID_SIZE; away++) expect(counters[C_FT_GRID + away]).toBe(0);
  });

  it("puts the state's players on the pitch: who left never plays, who came on stays on, a booked player's next yellow is red", () => {
    const draws = 4000;
    const counters = counts({ ...announced, from_state: at67 }, draws, eventfulParams);
    const player = (side: number, id: number, counter: number) => {
      const slot = announced[side === 0 ? 'home' : 'away'].players.findIndex((p) => p.player_id === id);
      return counters[playerCounterBase(side, slot) + counter]!;
    };
    for (const [side, id] of [
      [0, homeXi[9]!],
      [0, homeXi[10]!],
      [1, awayXi[4]!],
      [1, awayXi[8]!],
    ] as const) {
      expect(player(side, id, P_APPEARANCES)).toBe(0);
    }
    // On the pitch at the state in every draw, for at most the 24 minutes left (66 played).
    for (const [side, id] of [
      [0, homeBench[1]!],
      [0, homeXi[0]!],
      [1, awayBench[0]!],
    ] as const) {
      expect(player(side, id, P_STARTS)).toBe(draws);
      expect(player(side, id, P_MINUTES)).toBeLessThanOrEqual(24 * draws);
    }
    // Came on: never taken off again, so only a red card shortens his 24 minutes.
    expect(player(0, homeBench[1]!, P_MINUTES)).toBeGreaterThan(20 * draws);
    // Booked before: every yellow is his second, so a red card too.
    for (const [side, id] of [
      [0, homeXi[2]!],
      [0, homeBench[1]!],
      [1, awayXi[3]!],
    ] as const) {
      expect(player(side, id, P_YELLOWS)).toBeGreaterThan(0);
      expect(player(side, id, P_REDS)).toBeGreaterThanOrEqual(player(side, id, P_YELLOWS));
    }
    // Not booked: most yellows are first ones.
    expect(player(0, homeXi[3]!, P_YELLOWS)).toBeGreaterThan(player(0, homeXi[3]!, P_REDS));
  });
});

describe('an in-play state checked against its fixture', () => {
  const added = addedTimeModel(defaultModelParams);
  const issues = (inputs: MatchInputs, state: Partial<FromState>) =>
    stateIssues(
      { ...inputs, from_state: { minute: '60', score: { home: 0, away: 0 }, ...state } },
      defaultModelParams,
      added,
    ).map((issue) => issue.path);

  it('names the minute, the player or the count that makes it impossible', () => {
    expect(issues(announced, {})).toEqual([]);
    expect(issues(announced, at67)).toEqual([]);
    expect(issues(announced, { minute: '91' })).toEqual(['from_state.minute']);
    expect(issues(announced, { minute: '45+11' })).toEqual(['from_state.minute']);
    expect(issues(announced, { minute: '60+1' })).toEqual(['from_state.minute']);
    expect(issues(announced, { minute: '0' })).toEqual(['from_state.minute']);
    // An added minute the model gives no chance: here no first half runs past 45+3.
    const shortFirstHalves = {
      ...defaultModelParams,
      added_time: { ...defaultModelParams.added_time, first_half: [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0] },
    };
    const atMinute = (minute: string) =>
      stateIssues(
        { ...announced, from_state: { minute, score: { home: 0, away: 0 } } },
        shortFirstHalves,
        addedTimeModel(shortFirstHalves),
      ).map((issue) => issue.message);
    expect(atMinute('45+3')).toEqual([]);
    expect(atMinute('45+4')).toEqual(['the model gives this much added time no chance']);
    // A player who came on twice.
    expect(
      issues(announced, {
        substitutions: {
          home: [
            { off: homeXi[9]!, on: homeBench[1]! },
            { off: homeXi[8]!, on: homeBench[1]! },
          ],
          away: [],
        },
      }),
    ).toEqual(['from_state.substitutions.home.1.on']);
    // Taken off twice, or never on.
    expect(
      issues(announced, {
        substitutions: {
          home: [
            { off: homeXi[9]!, on: homeBench[1]! },
            { off: homeXi[9]!, on: homeBench[2]! },
          ],
          away: [],
        },
      }),
    ).toEqual(['from_state.substitutions.home.1.off']);
    // More substitutions than allowed.
    const six = homeXi.slice(5, 11).map((off, i) => ({ off, on: homeBench[i]! }));
    expect(issues(announced, { substitutions: { home: six, away: [] } })).toContain(
      'from_state.substitutions.home',
    );
    // A fifth red card, and a player not in the lineup sent off.
    expect(issues(announced, { red_cards: { home: 0, away: 5 } })).toEqual(['from_state.red_cards.away']);
    expect(issues(announced, { sent_off: { home: [homeBench[0]!], away: [] } })).toEqual([
      'from_state.sent_off.home.0',
    ]);
    expect(issues(announced, { sent_off: { home: [homeXi[1]!, homeXi[1]!], away: [] } })).toEqual([
      'from_state.sent_off.home.1',
    ]);
    expect(issues(announced, { booked: { home: [], away: [homeXi[1]!] } })).toEqual([
      'from_state.booked.away.0',
    ]);
    // Players named for a side whose XI is not known.
    expect(issues(predicted, { booked: { home: [homeXi[1]!], away: [] } })).toEqual([
      'from_state.booked.home',
    ]);
    expect(issues(predicted, { red_cards: { home: 1, away: 0 } })).toEqual([]);
    // A half-time score: with a minute in the second half, no more goals than the score.
    expect(issues(announced, { minute: '30', half_time: { home: 0, away: 0 } })).toEqual([
      'from_state.half_time',
    ]);
    expect(
      issues(announced, { minute: '70', score: { home: 1, away: 0 }, half_time: { home: 2, away: 0 } }),
    ).toEqual(['from_state.half_time.home']);
  });

  it('refuses to compile an impossible state', () => {
    expect(() =>
      compileFixture(
        { ...announced, from_state: { minute: '95', score: { home: 0, away: 0 } } },
        defaultModelParams,
      ),
    ).toThrow(/from_state.minute/);
  });
});

function documentOf(inputs: MatchInputs, draws: number): SimulationDocument {
  const compiled = compileFixture(inputs, defaultModelParams);
  const counters = new Uint32Array(COUNTER_WORDS);
  simulateRange(compiled, seed, 0, draws, counters);
  finalizeCounters(counters);
  return buildSimulationDocument({
    inputs,
    params: defaultModelParams,
    counts: counters,
    samples: recordSamplePaths(compiled, seed, SAMPLE_PATHS),
    draws,
    seed,
    basis: { as_of: '2026-12-01T09:00:00.000Z', data_version: 'dv_test' },
    timing: { engine: 'cpu', backend: 'cpu-inline', queued_ms: 0, run_ms: 1 },
    modelStatus: { status: 'unqualified', calibrated: false },
  });
}

describe('the document of an in-play run', () => {
  const draws = 4000;
  const doc = documentOf({ ...announced, from_state: at67 }, draws);

  it('describes the end of the match from the state: final score with the goals scored, the timeline from its step', () => {
    expect(() => simulationDocumentSchema.parse(doc)).not.toThrow();
    expect(doc.state).toMatchObject({
      minute: '67',
      step: stepOfMinute('67'),
      score: { home: 1, away: 0 },
      red_cards: { home: 0, away: 1 },
      sent_off: { home: [], away: [awayXi[4]] },
      booked: at67.booked,
      substitutions: at67.substitutions,
    });
    const toCome = doc.state!.goals_to_come;
    expect(toCome.total).toBeGreaterThan(0.2);
    expect(toCome.total).toBeLessThan(1.5);
    expect(doc.goals.expected.home).toBeCloseTo(1 + toCome.home, 12);
    expect(doc.goals.expected.away).toBeCloseTo(toCome.away, 12);
    // The home side leads 1-0 against ten men with 24 minutes left.
    expect(doc.result.home_win).toBeGreaterThan(0.75);
    expect(doc.goals.score_grid.cells[0]!.every((cell) => cell === 0)).toBe(true);
    expect(doc.timeline.steps).toBe(STEPS - stepOfMinute('67')!);
    expect(doc.timeline.minute_label[0]).toBe('67');
    expect(doc.timeline.score_state.home_leading[0]).toBeGreaterThan(0.95);
    for (const sample of doc.samples) {
      expect(sample.score.home).toBeGreaterThanOrEqual(1);
      for (const event of sample.events) expect(stepOfMinute(event.minute_label)).toBeGreaterThanOrEqual(66);
    }
  });

  it('is absent before a match', () => {
    const before = documentOf(announced, 500);
    expect(before.state).toBeUndefined();
    expect(Object.keys(before)).not.toContain('state');
    expect(before.timeline.steps).toBe(STEPS);
  });
});

describe('the win-probability path', () => {
  const events: PathEvent[] = [
    { minute: '30', type: 'goal', team: 'home', player_id: homeXi[10]! },
    { minute: '38', type: 'yellow_card', team: 'away', player_id: awayXi[3]! },
    {
      minute: '45+1',
      type: 'substitution',
      team: 'home',
      player_id: homeBench[1]!,
      player_off_id: homeXi[9]!,
    },
    { minute: '70', type: 'yellow_card', team: 'away', player_id: awayXi[3]! },
    { minute: '80', type: 'goal', team: 'away' },
  ];
  const steps = pathEventSteps(events) as number[];
  const states = pathStates(events, steps, STEPS - 1);

  it('has the state at the start of every step: the events of the steps before it, a second yellow a red card', () => {
    expect(states).toHaveLength(STEPS);
    expect(states[stepOfMinute('30')!]!.score).toEqual({ home: 0, away: 0 });
    expect(states[stepOfMinute('31')!]!.score).toEqual({ home: 1, away: 0 });
    expect(states[stepOfMinute('45+2')!]!.substitutions!.home).toEqual([
      { off: homeXi[9], on: homeBench[1] },
    ]);
    expect(states[stepOfMinute('70')!]!.booked!.away).toEqual([awayXi[3]]);
    const at71 = states[stepOfMinute('71')!]!;
    expect([at71.booked!.away, at71.sent_off!.away, at71.red_cards]).toEqual([
      [],
      [awayXi[3]],
      { home: 0, away: 1 },
    ]);
    expect(states.at(-1)!.score).toEqual({ home: 1, away: 1 });
    // From the second half on, the first half's goals are the half-time score.
    expect(states[stepOfMinute('45+10')!]!.half_time).toBeUndefined();
    expect(states[stepOfMinute('46')!]!.half_time).toEqual({ home: 1, away: 0 });
    expect(states.at(-1)!.half_time).toEqual({ home: 1, away: 0 });
    expect(pathEventSteps([{ minute: '46+1', type: 'goal', team: 'home' }])).toEqual({
      path: 'events.0.minute',
      message: 'not a minute of the timeline',
    });
  });

  it('reads a minute only as the timeline labels it, so one state has one seed', () => {
    for (let step = 0; step < STEPS; step++) expect(stepOfMinute(minuteLabel(step))).toBe(step);
    for (const other of ['01', '07', '45+01', '090+4', '0', '45+0', '+1', '45+', ' 45']) {
      expect(stepOfMinute(other), other).toBeNull();
    }
  });

  it('finds the first event, in the order of the match, that cannot have happened', () => {
    const max = defaultModelParams.substitutions.max_per_side;
    const issue = (
      more: PathEvent[],
      lastStep = STEPS - 1,
      final: { home: number; away: number } | null = null,
    ) => {
      const all = [...events, ...more];
      return pathEventIssue(all, pathEventSteps(all) as number[], lastStep, announced, max, final);
    };
    expect(issue([])).toBeNull();
    // awayXi[3] is sent off at 70 for his second yellow card (events.3).
    expect(issue([{ minute: '75', type: 'yellow_card', team: 'away', player_id: awayXi[3]! }])).toEqual({
      index: 5,
      message: `a third yellow card for player ${awayXi[3]}, sent off at his second (events.3)`,
    });
    expect(issue([{ minute: '75', type: 'goal', team: 'away', player_id: awayXi[3]! }])!.message).toBe(
      `player ${awayXi[3]} was sent off at 70 (events.3)`,
    );
    // The first in the match's order, not in the list's.
    expect(
      issue([
        { minute: '85', type: 'goal', team: 'home', player_id: homeXi[9]! },
        { minute: '20', type: 'red_card', team: 'home', player_id: homeBench[2]! },
      ]),
    ).toEqual({ index: 6, message: `player ${homeBench[2]} is on the bench and has not come on` });
    expect(issue([], stepOfMinute('75')!)).toEqual({
      index: 4,
      message: 'after `through` (75), where the path ends',
    });
    expect(issue([], STEPS - 1, { home: 1, away: 0 })!.index).toBe(4);
  });

  it("compiles once: each step's tables are the single in-play run's, the threshold table shared", () => {
    const compiled = compilePath(announced, defaultModelParams, states);
    for (const step of [0, 30, 46, 76, 109]) {
      const single = compileFixture({ ...announced, from_state: states[step]! }, defaultModelParams);
      expect(compiled[step]!.fixture).toEqual(single.fixture);
      expect(compiled[step]!.thresholds).toEqual(single.thresholds);
      expect(compiled[step]!.thresholds).toBe(compiled[0]!.thresholds);
    }
    // The worm: the home goal lifts the home side's chance; the away red card too; the equaliser cuts it.
    const homeWin = (step: number) => {
      const counters = new Uint32Array(COUNTER_WORDS);
      simulateRange(compiled[step]!, seed, 0, 3000, counters);
      return resultOf(counters, 3000)[0];
    };
    expect(homeWin(stepOfMinute('31')!)).toBeGreaterThan(homeWin(stepOfMinute('30')!) + 0.1);
    expect(homeWin(stepOfMinute('81')!)).toBeLessThan(homeWin(stepOfMinute('80')!) - 0.2);
  });

  it("runs the path's minutes on the worker pool, sharing their threshold table, as on this thread", async () => {
    const compiled = compilePath(announced, defaultModelParams, states);
    const engine = createCpuEngine({ threads: 2 });
    try {
      const minutes = [0, 30, 31, 80, 81, 109];
      const pooled = await Promise.all(
        minutes.map((step) => engine.run(compiled[step]!, { draws: 3000, seed })),
      );
      minutes.forEach((step, i) => {
        const counters = new Uint32Array(COUNTER_WORDS);
        simulateRange(compiled[step]!, seed, 0, 3000, counters);
        finalizeCounters(counters);
        expect(pooled[i]!.counts).toEqual(counters);
      });
    } finally {
      await engine.close();
    }
  });
});
