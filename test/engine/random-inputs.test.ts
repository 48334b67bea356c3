// Property test: any valid MatchInputs (odd squads, unlabelled positions, zero shares, players who
// cannot start, goalkeepers on the bench) compiles, simulates and yields a valid document.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordSamplePaths, simulateRange } from '../../fallback/engine.js';
import { randomInPlayState } from '../../src/cli/gpu-check/in-play-states.js';
import { seededUniform } from '../../src/cli/gpu-check/plausible-teams.js';
import { compileFixture } from '../../src/engine/compile.js';
import { addedTimeModel } from '../../src/engine/compile-rates.js';
import { stateIssues, stepOfMinute } from '../../src/engine/compile-state.js';
import { buildSimulationDocument, simulationDocumentText } from '../../src/engine/document.js';
import { simulationDocumentSchema } from '../../src/engine/document-schema.js';
import {
  C_FT_GRID,
  COUNTER_WORDS,
  finalizeCounters,
  GRID_SIZE,
  P_STARTS,
  playerCounterBase,
  STEPS,
} from '../../src/engine-contract/layout.js';
import {
  type MatchInputs,
  matchInputsSchema,
  PLAYER_POSITIONS,
  type SideInputs,
} from '../../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';

const share = fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1, noNaN: true }));
const player = fc.record({
  name: fc.oneof(fc.constant('P'), fc.string({ unit: 'binary', maxLength: 12 })),
  position: fc.oneof(fc.constant(null), fc.constantFrom(...PLAYER_POSITIONS)),
  goal_share: share,
  assist_share: share,
  shot_share: share,
  card_share: share,
  start_probability: fc.oneof(fc.constant(0), fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
  typical_minutes: fc.integer({ min: 1, max: 90 }),
});

function side(teamId: number): fc.Arbitrary<SideInputs> {
  return fc
    .record({
      players: fc.array(player, { minLength: 11, maxLength: 40 }),
      fixed: fc.boolean(),
      benchSize: fc.integer({ min: 0, max: 12 }),
      attack: fc.double({ min: -0.8, max: 0.8, noNaN: true }),
      defence: fc.double({ min: -0.8, max: 0.8, noNaN: true }),
    })
    .map(({ players, fixed, benchSize, attack, defence }) => {
      const squad = players.map((p, i) => ({ ...p, player_id: teamId * 1000 + i }));
      const ids = squad.map((p) => p.player_id);
      return {
        team: { team_id: teamId, name: `T${teamId}`, short_name: `T${teamId}`, country: 'XX' },
        attack,
        defence,
        players: squad,
        lineup: fixed
          ? {
              source: 'custom' as const,
              xi: ids.slice(0, 11),
              bench: ids.slice(11, 11 + benchSize),
              formation: null,
            }
          : { source: 'predicted' as const, xi: [], bench: [], formation: null },
      };
    });
}

const matchInputs: fc.Arbitrary<MatchInputs> = fc
  .record({ home: side(1), away: side(2) })
  .map(({ home, away }) =>
    matchInputsSchema.parse({
      fixture_id: 1,
      kickoff: '2026-12-05T15:00:00Z',
      state: 'provisional',
      competition: { competition_id: 1, name: 'L', country: 'XX', season: '2026' },
      params: { intercept: 0.15, home_advantage: 0.25 },
      home,
      away,
    }),
  );

describe('random valid inputs', () => {
  it('always compile, simulate and build a valid document with exactly eleven starters a side', () => {
    fc.assert(
      fc.property(matchInputs, fc.integer({ min: 0, max: 0xffffffff }), (inputs, lo) => {
        const draws = 300;
        const seed = { lo, hi: 1 };
        const compiled = compileFixture(inputs, defaultModelParams);
        const counts = new Uint32Array(COUNTER_WORDS);
        simulateRange(compiled, seed, 0, draws, counts);
        finalizeCounters(counts);
        for (const [sideIndex, sideInputs] of [inputs.home, inputs.away].entries()) {
          let starts = 0;
          sideInputs.players.forEach((_, slot) => {
            starts += counts[playerCounterBase(sideIndex, slot) + P_STARTS]!;
          });
          expect(starts).toBe(11 * draws);
        }
        const documentInput = {
          inputs,
          params: defaultModelParams,
          counts,
          samples: recordSamplePaths(compiled, seed, 20),
          draws,
          seed,
          basis: { as_of: '2026-12-01T00:00:00Z', data_version: 'dv' },
          timing: { engine: 'cpu' as const, backend: 'cpu-inline', queued_ms: 0, run_ms: 0 },
          modelStatus: { status: 'unqualified' as const, calibrated: false },
        };
        const document = buildSimulationDocument(documentInput);
        simulationDocumentSchema.parse(document);
        // The job threads' text of it (test/engine/document-text.test.ts).
        expect(simulationDocumentText(documentInput).text).toBe(JSON.stringify(document));
        const result = document.result.home_win + document.result.draw + document.result.away_win;
        expect(Math.abs(result - 1)).toBeLessThan(1e-9);
      }),
      { numRuns: 40, seed: 20_261_121, endOnFailure: true },
    );
  });

  it("from any consistent in-play state: compile, simulate, the state's players on the pitch, its score kept", () => {
    fc.assert(
      fc.property(matchInputs, fc.integer({ min: 0, max: 0xffffffff }), (preMatch, lo) => {
        const state = randomInPlayState(preMatch, seededUniform(lo));
        const inputs = { ...preMatch, from_state: state };
        expect(stateIssues(inputs, defaultModelParams, addedTimeModel(defaultModelParams))).toEqual([]);
        const draws = 200;
        const seed = { lo, hi: 2 };
        const compiled = compileFixture(inputs, defaultModelParams);
        const counts = new Uint32Array(COUNTER_WORDS);
        simulateRange(compiled, seed, 0, draws, counts);
        finalizeCounters(counts);
        for (const [sideIndex, key] of (['home', 'away'] as const).entries()) {
          const sideInputs = inputs[key];
          let starts = 0;
          sideInputs.players.forEach((_, slot) => {
            starts += counts[playerCounterBase(sideIndex, slot) + P_STARTS]!;
          });
          const onPitch = sideInputs.lineup.source === 'predicted' ? 11 : 11 - state.sent_off![key].length;
          expect(starts).toBe(onPitch * draws);
        }
        for (let h = 0; h < GRID_SIZE; h++) {
          for (let a = 0; a < GRID_SIZE; a++) {
            if (h < state.score.home || a < state.score.away)
              expect(counts[C_FT_GRID + h * GRID_SIZE + a]).toBe(0);
          }
        }
        const documentInput = {
          inputs,
          params: defaultModelParams,
          counts,
          samples: recordSamplePaths(compiled, seed, 20),
          draws,
          seed,
          basis: { as_of: '2026-12-01T00:00:00Z', data_version: 'dv' },
          timing: { engine: 'cpu' as const, backend: 'cpu-inline', queued_ms: 0, run_ms: 0 },
          modelStatus: { status: 'unqualified' as const, calibrated: false },
        };
        const document = buildSimulationDocument(documentInput);
        simulationDocumentSchema.parse(document);
        // The job threads' text of it (test/engine/document-text.test.ts).
        expect(simulationDocumentText(documentInput).text).toBe(JSON.stringify(document));
        expect(document.timeline.steps).toBe(STEPS - stepOfMinute(state.minute)!);
      }),
      { numRuns: 40, seed: 20_261_129, endOnFailure: true },
    );
  });
});
