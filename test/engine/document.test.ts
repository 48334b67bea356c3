import { describe, expect, it } from 'vitest';
import { recordSamplePaths, simulateRange } from '../../fallback/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import { buildSimulationDocument, SAMPLE_PATHS, seedToString } from '../../src/engine/document.js';
import { type SimulationDocument, simulationDocumentSchema } from '../../src/engine/document-schema.js';
import { COUNTER_WORDS, finalizeCounters } from '../../src/engine-contract/layout.js';
import type { MatchInputs } from '../../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from './plausible-teams.js';

const seed = { lo: 0xdead_beef, hi: 0x0bad_f00d };
const draws = 8000;
const base = plausibleFixture(
  11,
  { teamId: 3, attack: 0.1, defence: 0.2 },
  { teamId: 4, attack: 0.05, defence: -0.1 },
);
// Home announced (fixed XI and bench), away predicted.
const inputs: MatchInputs = { ...base, home: withAnnouncedLineup(base.home) };

function simulate(matchInputs: MatchInputs): SimulationDocument {
  const compiled = compileFixture(matchInputs, defaultModelParams);
  const counts = new Uint32Array(COUNTER_WORDS);
  simulateRange(compiled, seed, 0, draws, counts);
  finalizeCounters(counts);
  return buildSimulationDocument({
    inputs: matchInputs,
    params: defaultModelParams,
    counts,
    samples: recordSamplePaths(compiled, seed, SAMPLE_PATHS),
    draws,
    seed,
    basis: { as_of: '2026-12-01T09:00:00.000Z', data_version: 'dv_test' },
    timing: { engine: 'cpu', backend: 'cpu-inline', queued_ms: 0, run_ms: 1 },
    modelStatus: { status: 'unqualified', calibrated: false, metrics: { rps: 0.2 } },
  });
}

const doc = simulate(inputs);
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const TOLERANCE = 1e-9;

describe('the simulation document', () => {
  it('matches its schema, field for field', () => {
    expect(() => simulationDocumentSchema.parse(doc)).not.toThrow();
    expect(doc.schema).toBe('vendor.simulation.v1');
    expect(doc.basis).toMatchObject({
      state: 'inputs_final',
      lineups: 'predicted',
      lineup_sources: { home: 'announced', away: 'predicted' },
      draws,
      seed: seedToString(seed),
    });
    expect(doc.basis.seed).toBe('0badf00ddeadbeef');
    expect(doc.timeline.minute_label.slice(44, 47)).toEqual(['45', '45+1', '45+2']);
    expect(doc.timeline.minute_label.slice(54, 56)).toEqual(['45+10', '46']);
    expect(doc.timeline.minute_label.at(-1)).toBe('90+10');
    expect(doc.model).toEqual({
      public_name: defaultModelParams.public_name,
      version: defaultModelParams.model_version,
      status: 'unqualified',
    });
    expect(doc.uncertainty.model_accuracy).toEqual({ rps: 0.2, status: 'unqualified' });
  });

  it('keeps its bytes when serialised through its schema, as every response is', () => {
    // The job threads store JSON.stringify of the built document (src/engine/job-work.ts finishJob):
    // the builder must write every field in the schema's order, for every kind of lineup.
    expect(JSON.stringify(simulationDocumentSchema.parse(doc))).toBe(JSON.stringify(doc));
    const predicted = simulate(base);
    expect(JSON.stringify(simulationDocumentSchema.parse(predicted))).toBe(JSON.stringify(predicted));
    // Inputs read back from the database come with their keys in jsonb's order, not the schema's.
    const reversed = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).reverse()) as T;
    const fromJsonb = simulate({
      ...base,
      competition: reversed(base.competition),
      home: { ...base.home, team: reversed(base.home.team) },
      away: { ...base.away, team: reversed(base.away.team) },
    });
    expect(JSON.stringify(simulationDocumentSchema.parse(fromJsonb))).toBe(JSON.stringify(fromJsonb));
  });

  it('has every distribution summing to 1', () => {
    const distributions: number[][] = [
      Object.values(doc.result).filter((v) => typeof v === 'number'),
      doc.goals.score_grid.cells.flat(),
      doc.goals.distributions.home,
      doc.goals.distributions.away,
      doc.goals.distributions.total,
      Object.values(doc.half_time.result),
      doc.half_time.score_grid.cells.flat(),
      Object.values(doc.half_time.ht_ft),
      Object.values(doc.markets.btts),
      Object.values(doc.goal_events.first_goal),
      [...doc.goal_events.first_goal_minute.map((band) => band.probability), doc.goal_events.first_goal.none],
      [...doc.goal_events.first_scorer.map((entry) => entry.probability), doc.goal_events.first_goal.none],
      ...doc.markets.totals.map((line) => [line.over, line.under]),
      ...doc.markets.handicaps.map((line) => [line.win, line.push, line.lose]),
      ...doc.timeline.score_state.level.map((level, step) => [
        level,
        doc.timeline.score_state.home_leading[step]!,
        doc.timeline.score_state.away_leading[step]!,
      ]),
    ];
    for (const distribution of distributions) expect(Math.abs(sum(distribution) - 1)).toBeLessThan(TOLERANCE);
    for (const player of doc.players) {
      for (const value of Object.values(player.probabilities)) {
        expect(value).toBeGreaterThanOrEqual(0);
        expect(value).toBeLessThanOrEqual(1);
      }
    }
  });

  it('has markets that agree with the score grid', () => {
    const cells = doc.goals.score_grid.cells;
    const gridSum = (test: (home: number, away: number) => boolean) =>
      sum(cells.flatMap((row, home) => row.filter((_, away) => test(home, away))));
    expect(doc.result.home_win).toBeCloseTo(
      gridSum((h, a) => h > a),
      12,
    );
    expect(doc.result.draw).toBeCloseTo(
      gridSum((h, a) => h === a),
      12,
    );
    for (const { line, over } of doc.markets.totals)
      expect(over).toBeCloseTo(
        gridSum((h, a) => h + a > line),
        12,
      );
    expect(doc.markets.btts.yes).toBeCloseTo(
      gridSum((h, a) => h > 0 && a > 0),
      12,
    );
    expect(doc.markets.double_chance.home_or_draw).toBeCloseTo(doc.result.home_win + doc.result.draw, 12);
    const handicap = (team: 'home' | 'away', line: number) =>
      doc.markets.handicaps.find((entry) => entry.team === team && entry.line === line)!;
    expect(doc.markets.handicaps).toHaveLength(22);
    expect(handicap('home', 0).push).toBeCloseTo(doc.result.draw, 12);
    expect(handicap('home', -0.5).win).toBeCloseTo(doc.result.home_win, 12);
    expect(handicap('home', 0.5).win).toBeCloseTo(doc.result.home_win + doc.result.draw, 12);
    expect(handicap('away', -1.5).win).toBeCloseTo(
      gridSum((h, a) => a - h >= 2),
      12,
    );
    expect(handicap('home', -1).push).toBeCloseTo(
      gridSum((h, a) => h - a === 1),
      12,
    );
    expect(handicap('away', 2).push).toBeCloseTo(
      gridSum((h, a) => h - a === 2),
      12,
    );
    expect(handicap('home', 1.5).push).toBe(0);
    const top = doc.markets.scorelines;
    expect(top).toHaveLength(20);
    expect(top[0]!.probability).toBeCloseTo(Math.max(...cells.flat()), 12);
    for (const { home, away, probability } of top) expect(probability).toBe(cells[home]![away]);
    expect(doc.goals.expected.total).toBeCloseTo(doc.goals.expected.home + doc.goals.expected.away, 12);
    expect(sum(doc.timeline.home.goals)).toBeCloseTo(doc.goals.expected.home, 9);
  });

  it('is identical for identical inputs and seed', () => {
    expect(simulate(structuredClone(inputs))).toEqual(doc);
  });

  it('gives a player who never plays zero probabilities and zero box score', () => {
    const named = new Set([...inputs.home.lineup.xi, ...inputs.home.lineup.bench]);
    const absent = doc.players.filter((player) => player.team === 'home' && !named.has(player.player_id));
    expect(absent.length).toBeGreaterThan(0);
    for (const player of absent) {
      expect(player.starts).toBe(0);
      expect(player.expected_minutes).toBe(0);
      expect(Object.values(player.probabilities).every((value) => value === 0)).toBe(true);
      expect(Object.values(player.box_score).every((value) => value === 0)).toBe(true);
      expect(doc.goal_events.first_scorer.some((entry) => entry.player_id === player.player_id)).toBe(false);
    }
    const starters = doc.players.filter((player) => inputs.home.lineup.xi.includes(player.player_id));
    expect(starters.every((player) => player.starts === 1)).toBe(true);
  });

  it('lists lineups: the fixed XI as given, the predicted XI with one goalkeeper', () => {
    expect(doc.lineups.home.xi.map((player) => player.player_id)).toEqual(inputs.home.lineup.xi);
    expect(doc.lineups.home.source).toBe('announced');
    expect(doc.lineups.away.xi).toHaveLength(11);
    expect(doc.lineups.away.xi.filter((player) => player.position === 'goalkeeper')).toHaveLength(1);
    expect(doc.lineups.away.bench.length).toBeGreaterThan(0);
  });

  it('carries 20 sample matches whose events add up to their scores', () => {
    expect(doc.samples).toHaveLength(SAMPLE_PATHS);
    const labels = new Set(doc.timeline.minute_label);
    for (const sample of doc.samples) {
      const goals = { home: 0, away: 0 };
      for (const event of sample.events) {
        expect(labels.has(event.minute_label)).toBe(true);
        if (event.type === 'goal') goals[event.team]++;
        if (event.type === 'substitution') expect(event.player_off_id).toBeDefined();
      }
      expect(goals).toEqual(sample.score);
      expect(sample.half_time.home).toBeLessThanOrEqual(sample.score.home);
    }
    expect(doc.samples.map((sample) => sample.index)).toEqual([...Array(SAMPLE_PATHS).keys()]);
  });

  it('reports Monte Carlo standard errors that shrink with the draws', () => {
    const { standard_error } = doc.uncertainty;
    expect(standard_error.home_win).toBeCloseTo(
      Math.sqrt((doc.result.home_win * (1 - doc.result.home_win)) / draws),
      12,
    );
    expect(standard_error.expected_goals_home).toBeGreaterThan(0.005);
    expect(standard_error.expected_goals_home).toBeLessThan(0.03);
  });
});
