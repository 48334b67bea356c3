// The document's text as the job threads write it (src/engine/document.ts simulationDocumentText: the
// timeline, players and samples written straight from counts and paths) is JSON.stringify of the built
// document, byte for byte, for every kind of run: pre-match with announced and predicted lineups, draw
// counts whose probabilities have long decimals, fitted to a market, with offered odds, in play, and
// names that JSON must escape. test/engine/random-inputs.test.ts checks it on random inputs too.
import { describe, expect, it } from 'vitest';
import { recordSamplePaths, simulateRange } from '../../fallback/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import {
  buildSimulationDocument,
  SAMPLE_PATHS,
  type SimulationDocumentInput,
  simulationDocumentText,
} from '../../src/engine/document.js';
import { documentSummary } from '../../src/engine/document-schema.js';
import { COUNTER_WORDS, finalizeCounters } from '../../src/engine-contract/layout.js';
import type { MatchInputs } from '../../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from './plausible-teams.js';

const base = plausibleFixture(
  21,
  { teamId: 5, attack: 0.25, defence: 0.1 },
  { teamId: 6, attack: -0.1, defence: -0.2 },
);

function documentInput(
  inputs: MatchInputs,
  draws: number,
  extra: Partial<SimulationDocumentInput> = {},
): SimulationDocumentInput {
  const seed = { lo: 0x1234_5678, hi: draws };
  const compiled = compileFixture(inputs, defaultModelParams);
  const counts = new Uint32Array(COUNTER_WORDS);
  simulateRange(compiled, seed, 0, draws, counts);
  finalizeCounters(counts);
  return {
    inputs,
    params: defaultModelParams,
    counts,
    samples: recordSamplePaths(compiled, seed, Math.min(SAMPLE_PATHS, draws)),
    draws,
    seed,
    basis: { as_of: '2026-12-07T10:00:00.000Z', data_version: 'dv_text' },
    timing: { engine: 'cpu', backend: 'cpu-inline', queued_ms: 3, run_ms: 7 },
    modelStatus: { status: 'unqualified', calibrated: false, metrics: { rps: 0.2 } },
    ...(compiled.marketFit ? { marketFit: compiled.marketFit } : {}),
    ...extra,
  };
}

function expectTextOfBuilt(input: SimulationDocumentInput): void {
  const built = buildSimulationDocument(input);
  const { text, summary } = simulationDocumentText(input);
  expect(text).toBe(JSON.stringify(built));
  expect(summary).toEqual(documentSummary(built));
}

const escapedNames: MatchInputs = {
  ...base,
  home: {
    ...base.home,
    players: base.home.players.map((player, i) =>
      i < 4
        ? { ...player, name: ['Zoë "Ace" O\'Neil', 'back\\slash', 'tab\there', 'Ødegaard \u2028 ☃'][i]! }
        : player,
    ),
  },
};

describe('the document written as text', () => {
  it('is the built document stringified: predicted and announced lineups, any draw count', () => {
    // 10,001: past FRACTION_TEXTS_MAX_DRAWS, whose fractions are formatted as they come.
    for (const draws of [100, 137, 2001, 10_001]) {
      expectTextOfBuilt(documentInput(base, draws));
      expectTextOfBuilt(documentInput({ ...base, home: withAnnouncedLineup(base.home) }, draws));
    }
  });

  it('escapes what JSON escapes in player names', () => {
    const input = documentInput(escapedNames, 500);
    expectTextOfBuilt(input);
    const players = (JSON.parse(simulationDocumentText(input).text) as { players: { name: string }[] })
      .players;
    expect(players.slice(0, 4).map((player) => player.name)).toEqual(
      escapedNames.home.players.slice(0, 4).map((player) => player.name),
    );
  });

  it('with a market fit and offered odds', () => {
    const fitted: MatchInputs = {
      ...base,
      market: {
        odds: { '1x2': [1.8, 3.6, 4.8] },
        margin_method: 'shin',
        fit: 'exact',
        targets: { home_win: 0.53, draw: 0.26, away_win: 0.21 },
      },
    };
    const input = documentInput(fitted, 300, { offeredOdds: { home_win: 1.9, draw: 3.5, over_2_5: 1.85 } });
    expect(input.marketFit).toBeDefined();
    expectTextOfBuilt(input);
    const document = JSON.parse(simulationDocumentText(input).text) as Record<string, unknown>;
    expect(Object.keys(document).slice(-2)).toEqual(['calibration', 'value']);
  });

  it('in play, from the first and the second half, with a player sent off', () => {
    const announced = { ...base, home: withAnnouncedLineup(base.home) };
    const xi = announced.home.lineup.source === 'predicted' ? [] : announced.home.lineup.xi;
    for (const from_state of [
      { minute: '30', score: { home: 0, away: 1 } },
      { minute: '45+2', score: { home: 1, away: 1 } },
      { minute: '71', score: { home: 2, away: 1 }, sent_off: { home: [xi[3]!], away: [] } },
    ]) {
      const input = documentInput({ ...announced, from_state }, 400);
      expectTextOfBuilt(input);
      expect(Object.keys(JSON.parse(simulationDocumentText(input).text) as object).at(-1)).toBe('state');
    }
  });
});
