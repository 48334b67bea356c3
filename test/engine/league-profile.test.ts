// League profiles (docs/model.md, "League profiles"): a competition's own card and shot rates reach the
// compiler through MatchInputs.profile; without one, a fixture compiles exactly as before.
import { describe, expect, it } from 'vitest';
import { recordSamplePaths, simulateRange } from '../../fallback/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import { buildSimulationDocument, SAMPLE_PATHS } from '../../src/engine/document.js';
import { COUNTER_WORDS, finalizeCounters } from '../../src/engine-contract/layout.js';
import {
  type CompetitionProfile,
  fittedCompetitionProfile,
  type MatchInputs,
  matchInputsSchema,
  paramsForFixture,
} from '../../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { plausibleFixture } from './plausible-teams.js';

const seed = { lo: 0x1234_5678, hi: 0x0bad_f00d };
const draws = 4000;
const base = plausibleFixture(
  21,
  { teamId: 3, attack: 0.1, defence: 0.2 },
  { teamId: 4, attack: 0.05, defence: -0.1 },
);

/** The global constants written as a profile: the same numbers, carried by the inputs. */
const globalAsProfile: CompetitionProfile = {
  yellow_per_match: { ...defaultModelParams.cards.yellow_per_match },
  straight_red_per_match: { ...defaultModelParams.cards.straight_red_per_match },
  shots: { ...defaultModelParams.shots },
};

function simulate(inputs: MatchInputs) {
  const compiled = compileFixture(inputs, defaultModelParams);
  const counts = new Uint32Array(COUNTER_WORDS);
  simulateRange(compiled, seed, 0, draws, counts);
  finalizeCounters(counts);
  return buildSimulationDocument({
    inputs,
    params: defaultModelParams,
    counts,
    samples: recordSamplePaths(compiled, seed, SAMPLE_PATHS),
    draws,
    seed,
    basis: { as_of: '2026-12-01T09:00:00.000Z', data_version: 'dv_test' },
    timing: { engine: 'cpu', backend: 'cpu-inline', queued_ms: 0, run_ms: 1 },
    modelStatus: { status: 'unqualified', calibrated: false, metrics: {} },
  });
}

const total = (doc: ReturnType<typeof simulate>, figure: 'yellow_cards' | 'shots') =>
  doc.players.reduce((s, p) => s + p.box_score[figure], 0);

describe('league profiles', () => {
  it('leave the constants untouched without a profile', () => {
    expect(paramsForFixture(defaultModelParams, undefined)).toBe(defaultModelParams);
  });

  it('compile to the same tables when the profile repeats the global rates', () => {
    const plain = compileFixture(base, defaultModelParams);
    const profiled = compileFixture(
      matchInputsSchema.parse({ ...base, profile: globalAsProfile }),
      defaultModelParams,
    );
    expect(profiled.fixture).toEqual(plain.fixture);
  });

  it('give the engine the competition’s card and shot rates and show them in the basis', () => {
    const plain = simulate(base);
    expect(plain.basis.league_profile).toEqual({
      source: 'model',
      intercept: base.params.intercept,
      home_advantage: base.params.home_advantage,
      ...globalAsProfile,
    });
    const busy: CompetitionProfile = {
      yellow_per_match: { home: 3, away: 3.4 },
      straight_red_per_match: globalAsProfile.straight_red_per_match,
      shots: { conversion: 0.09, on_target_share: 0.33 },
    };
    const profiled = simulate(matchInputsSchema.parse({ ...base, profile: busy }));
    expect(profiled.basis.league_profile).toMatchObject({ source: 'competition', ...busy });
    // 6.4 yellows a match instead of about 4.1 (less the second yellows that become reds).
    expect(total(profiled, 'yellow_cards')).toBeGreaterThan(total(plain, 'yellow_cards') * 1.4);
    // Same goals from a lower conversion: more shots.
    expect(total(profiled, 'shots')).toBeGreaterThan(total(plain, 'shots') * 1.1);
    expect(profiled.goals.expected.total).toBeCloseTo(plain.goals.expected.total, 1);
  });

  it('are shipped for the five fitted leagues, La Liga with more yellows than the Premier League', () => {
    for (const league of ['bundesliga', 'la-liga', 'ligue-1', 'premier-league', 'serie-a']) {
      expect(fittedCompetitionProfile(defaultModelParams, league)).toBeDefined();
    }
    const yellows = (league: string) => {
      const p = fittedCompetitionProfile(defaultModelParams, league)!;
      return p.yellow_per_match.home + p.yellow_per_match.away;
    };
    expect(yellows('la-liga')).toBeGreaterThan(yellows('premier-league') + 1);
    expect(fittedCompetitionProfile(defaultModelParams, 'no-such-league')).toBeUndefined();
  });
});
