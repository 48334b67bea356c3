// Golden counts: SHA-256 digests of the CPU engine's counters and sample paths (the event-driven sampler,
// recorded when it added expected shots instead of sampling them, src/engine-contract/layout.ts "Shot
// tables", and carried a first-half hazard budget over to the second half) and of the per-step reference
// it replaced (test/engine/per-step-reference.ts, recorded from the per-step engine before its speed
// work; its counters were recorded again when the shot counters became units of 1 / SHOT_COUNTER_UNIT,
// and divided back by that unit they gave its old digests). The GPU kernel reproduces the engine's
// counters bit for bit, so an optimisation of fallback/engine.ts may change how fast the draws run, never
// what they count. These digests must never be edited to make a change pass; a real model change gets
// new digests on purpose.
// The model parameters are frozen here (not the shipped, refittable ones), and the compiled tables are
// digested too, so a failure says whether the compiler or the per-draw loop moved.
// All were recorded again for model minute-9c1af992c0 (docs/decisions.md §13: random stream 2, a goal's
// assist from its search's words; the calibration's forward pass clamped, which moved the tables' digests
// and with them some of the per-step reference's counters).
// The version rule (docs/decisions.md §13, "Changelog of model versions"): the digests are recorded under a
// model version and its engine stream (RECORDED_UNDER). Bits that change under the same version are a
// stream or compile change made without a new version; a new version records them again, in its commit.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../fallback/cpu-engine.js';
import { recordSamplePaths, simulateRange } from '../../fallback/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import {
  COUNTER_WORDS,
  type CompiledFixture,
  type EngineSeed,
  FX_STATE,
  finalizeCounters,
} from '../../src/engine-contract/layout.js';
import {
  type MatchInputs,
  matchInputsSchema,
  PLAYER_POSITIONS,
  type PlayerProfile,
  type SideInputs,
} from '../../src/engine-contract/match-inputs.js';
import {
  defaultModelParams,
  engineStreamOf,
  type ModelParams,
  modelParamsSchema,
} from '../../src/engine-contract/model-params.js';
import { recordSamplePathsPerStep, simulateRangePerStep } from './per-step-reference.js';
import { plausibleFixture, seededUniform, withAnnouncedLineup } from './plausible-teams.js';

/** The shipped parameters of model minute-cec1d25d88 (league profiles left out: the engine ignores them). */
const frozenParams: ModelParams = modelParamsSchema.parse({
  model_version: 'minute-cec1d25d88',
  public_name: 'matchsim minute model',
  goal_band_weights: [0.757, 0.8616, 1.0457, 0.9715, 0.9909, 1.3733],
  score_state_multipliers: [1.1139, 1.1444, 1, 0.9611, 0.8934],
  red_card_multipliers: { side_down: 0.5888, side_up: 1.5573 },
  lineup_strength_elasticity: 0.5,
  shots: { conversion: 0.1117, on_target_share: 0.3576 },
  cards: {
    yellow_per_match: { home: 1.9143, away: 2.1485 },
    straight_red_per_match: { home: 0.027, away: 0.0345 },
    band_weights: [0.35, 0.7, 0.95, 1.05, 1.3, 1.65],
    booked_player_factor: 0.4,
  },
  added_time: {
    first_half: [0.02, 0.27, 0.3, 0.2, 0.11, 0.05, 0.025, 0.015, 0.006, 0.003, 0.001],
    second_half: [0, 0.01, 0.05, 0.14, 0.21, 0.21, 0.16, 0.1, 0.07, 0.04, 0.01],
  },
  substitutions: {
    expected_per_side: 5.4,
    max_per_side: 5,
    half_time_share: 0.15,
    band_weights: [0.02, 0.03, 0.05, 0.55, 1.6, 1.5],
  },
  assisted_share: 0.76,
});

/** Rare paths made common: many goals (grids past 10), red cards, second yellows, every substitution. */
const eventfulParams: ModelParams = modelParamsSchema.parse({
  ...frozenParams,
  cards: {
    ...frozenParams.cards,
    yellow_per_match: { home: 7, away: 9 },
    straight_red_per_match: { home: 0.9, away: 1.4 },
    booked_player_factor: 0.9,
  },
  substitutions: { ...frozenParams.substitutions, expected_per_side: 9 },
});

/** A squad with odd shapes: unlabelled positions, zero shares, players who cannot start, 11 to 40 players. */
function oddSide(teamId: number, uniform: () => number, fixed: boolean, labelled: boolean): SideInputs {
  const size = 11 + Math.floor(uniform() * 30);
  const share = () => (uniform() < 0.2 ? 0 : uniform());
  const players: PlayerProfile[] = Array.from({ length: size }, (_, i) => ({
    player_id: teamId * 1000 + i,
    name: `P${i}`,
    position: labelled ? PLAYER_POSITIONS[Math.floor(uniform() * PLAYER_POSITIONS.length)]! : null,
    goal_share: share(),
    assist_share: share(),
    shot_share: share(),
    card_share: share(),
    start_probability: uniform() < 0.15 ? 0 : uniform() < 0.2 ? 1 : uniform(),
    typical_minutes: 1 + Math.floor(uniform() * 90),
  }));
  const ids = players.map((p) => p.player_id);
  const benchSize = Math.min(size - 11, Math.floor(uniform() * 13));
  return {
    team: { team_id: teamId, name: `T${teamId}`, short_name: `T${teamId}`, country: 'XX' },
    attack: uniform() * 1.6 - 0.8,
    defence: uniform() * 1.6 - 0.8,
    players,
    lineup: fixed
      ? { source: 'custom', xi: ids.slice(0, 11), bench: ids.slice(11, 11 + benchSize), formation: null }
      : { source: 'predicted', xi: [], bench: [], formation: null },
  };
}

function oddFixture(index: number): MatchInputs {
  const uniform = seededUniform(7000 + index);
  return matchInputsSchema.parse({
    fixture_id: 100 + index,
    kickoff: '2026-12-05T15:00:00Z',
    state: 'provisional',
    competition: { competition_id: 1, name: 'L', country: 'XX', season: '2026' },
    params: { intercept: 0.15, home_advantage: 0.25 },
    home: oddSide(1, uniform, index % 2 === 0, index % 3 !== 0),
    away: oddSide(2, uniform, index % 4 === 1, index % 3 !== 1),
  });
}

interface GoldenCase {
  name: string;
  inputs: MatchInputs;
  params: ModelParams;
  seed: EngineSeed;
  draws: number;
}

const plausible = plausibleFixture(
  1,
  { teamId: 1, attack: 0.1, defence: 0.05 },
  { teamId: 2, attack: 0, defence: 0 },
);
const CASES: GoldenCase[] = [
  {
    name: 'predicted XIs',
    inputs: plausible,
    params: frozenParams,
    seed: { lo: 0x5eed, hi: 0xbe7c },
    draws: 20_000,
  },
  {
    name: 'announced home XI',
    inputs: { ...plausible, home: withAnnouncedLineup(plausible.home) },
    params: frozenParams,
    seed: { lo: 0xdead_beef, hi: 0x0bad_f00d },
    draws: 12_000,
  },
  {
    name: 'mismatch, high seed words',
    inputs: plausibleFixture(
      2,
      { teamId: 3, attack: 0.9, defence: 0.6 },
      { teamId: 4, attack: -0.7, defence: -0.5 },
    ),
    params: frozenParams,
    seed: { lo: 0xffff_ffff, hi: 0xffff_ffff },
    draws: 8000,
  },
  {
    name: 'eventful model, both announced',
    inputs: {
      ...plausible,
      home: withAnnouncedLineup(plausible.home),
      away: withAnnouncedLineup(plausible.away),
    },
    params: eventfulParams,
    seed: { lo: 1, hi: 0 },
    draws: 8000,
  },
  {
    name: 'eventful model, goal fest',
    inputs: {
      ...plausibleFixture(
        3,
        { teamId: 5, attack: 1.6, defence: -1 },
        { teamId: 6, attack: 1.2, defence: -1.2 },
      ),
      params: { intercept: 0.6, home_advantage: 0.3 },
    },
    params: eventfulParams,
    seed: { lo: 0x8000_0000, hi: 0x7fff_ffff },
    draws: 6000,
  },
  ...Array.from({ length: 8 }, (_, index) => ({
    name: `odd squads ${index}`,
    inputs: oddFixture(index),
    params: index % 2 === 0 ? frozenParams : eventfulParams,
    seed: { lo: 0x9e37_79b9 * (index + 1), hi: index },
    draws: 3000,
  })),
];

/** The shipped model version and its engine stream when the digests below were recorded. */
const RECORDED_UNDER = { model_version: 'minute-9c1af992c0', engine_stream: 2 };
/** A failed digest under the version the digests were recorded under. */
const UNVERSIONED_CHANGE =
  `bits changed under model version ${RECORDED_UNDER.model_version}: a change of the random stream or the ` +
  'compiled tables is a new model version (bump ENGINE_STREAM in src/engine-contract/rng.ts, version the ' +
  'constants with it, record these digests again: docs/decisions.md §13)';

describe('golden digests', () => {
  it('were recorded under the shipped model version', () => {
    expect(
      { model_version: defaultModelParams.model_version, engine_stream: engineStreamOf(defaultModelParams) },
      `the model version is now ${defaultModelParams.model_version}: record the golden digests again under ` +
        'it, in the same commit, and set RECORDED_UNDER',
    ).toEqual(RECORDED_UNDER);
  });
});

const GOLDEN: Record<string, { tables: string; counters: string; samples: string }> = {
  'predicted XIs': {
    tables: 'f4ae463f4b02409d264e475212ed72fcfb71156ccb7acbd6b5dd3fa218a563c6',
    counters: '34e35b7e639e4e39356da13a5861a40aa1337edde19c916361d9c6aebdbaa6ef',
    samples: '424c4a19fb7fd49844ce2b477bd7be10a844ae75898c6380e0e2f9729df862a2',
  },
  'announced home XI': {
    tables: '26b0fecbf3c8c63952449107ee7170b38f3e49b47c7faff767aaeb97a7c9c79c',
    counters: 'be8117afb1845d24b195a51cd20d978e61717b9233b4378def0e2d7adb3a2497',
    samples: '3f9512e7daeec5f6ae1d74cc01b62e12f3e74ce23d8bb63404134ec944be2d8a',
  },
  'mismatch, high seed words': {
    tables: 'a393d6f257ae9494de2ca4af6ae4c59d507000202da010a090e55e508b039cdd',
    counters: 'fda57de10d70cd01693f7662d5e76116b1e4c27647dcc150347c0d9f28f0811c',
    samples: 'f5f08038c6718965181acc7a7881af7b69d97338b1f86b60256c59b83fbb3301',
  },
  'eventful model, both announced': {
    tables: 'a4cf3d66e563a84341e0a59b82d3ebc3777362cf51dcc194fc08a5d964cd4d4a',
    counters: '662bab39e50f5976c53c2b7f0fb62a2c96f0aed299c3367d0c20ab619ddd7a65',
    samples: '68e90a1600ba12909181332e86000ace6a75cf946a0c9366338f1bd7ec81b742',
  },
  'eventful model, goal fest': {
    tables: '183e574798baaeb7600e5a4328f57af983f54ee84fbf3ca4b97bdde3f692b4f5',
    counters: '0fbe36535b43bba2da9375e01049ce05727562a6ccdc41d60b774e8df6a170cb',
    samples: 'b94c3fa52d89b757a426a70d256a317ffd114c78ff064d2c5982e74bf6772d60',
  },
  'odd squads 0': {
    tables: 'f4ebabde321db6141c226df8bda73b1e7dbf4f71bb6d214664f7faf4519895a8',
    counters: '69b47e250ed3472a9d12e34cc5faf801e93eb976777c95e464a924b7805ba00f',
    samples: '0828f40e007d02b099d38ea296fad326e3151d2202e03efaacd2ef58125107fb',
  },
  'odd squads 1': {
    tables: '5962783e69481fff1552bfa50a74651271d742019ceb04aee40a4ff5d51030e9',
    counters: '9b720e263898aaf97272f21a6e12d52bcd66b620307e9191b3da81f7de9f4d95',
    samples: '923b0a81fcbf962caa65e60a1b618697c22f8c27c520c08428a8cbf98583fcca',
  },
  'odd squads 2': {
    tables: 'dce29d0f835fbb26254a8fb4ebee286ef0b263efdee0fa1fe6cda055f899800e',
    counters: 'cf4428c0834627e1bb4a715b67265343c9172a0c0aeb615964507de503900404',
    samples: 'd46bc0026d7bc2826070e3ed7ada9372443b07a250fe8cd54da6b18e7f0ccdb9',
  },
  'odd squads 3': {
    tables: '73ad8a3dace60717b4a74a00aa1ceae3f2f9e95561dcf9778b952fe5ce54e090',
    counters: '4b0cfe62904207c6e25c8a5e9007255386020af7389e8011cbcb03655ec4ab38',
    samples: 'e72f70e400666f4197787af1a7b5d7653e835df1526a6e2bd3a04b566b178035',
  },
  'odd squads 4': {
    tables: '0586709e80ccf38c975a49781c707e310deaeda0ffc1fcf0de4d71d29986ecd7',
    counters: '3917b5392663e2ee3afe300b423c77a4b23c4ddc078a93f97717329b46d581c8',
    samples: '4893c84db2039119936d44bfc722aebbfd032685e995ce40563907dc875f12b9',
  },
  'odd squads 5': {
    tables: '8441343b4d0a159bad072d91473597f41316a8b2ae5a1fe8fdc48c3b5c8bedf9',
    counters: '8a36927a59a0588877aa09107876353b617e160677e838dcc7ba71feb96014a6',
    samples: 'e0ab53db5ac4e68d5dbc084ad066af0ceb214f8da751e33b22287db743465e3a',
  },
  'odd squads 6': {
    tables: '6d7d7c63851977fe37b7833900963a71bbc05c752f604b6a1d81174d330a8c87',
    counters: '37fbad2058fd4140cb222e0f45424db6c3eb403c20bf26301b3e99c856948d6d',
    samples: '394110769cf7c6b70c22d86c2d3adf6bc464e7d380d0bf35d2287560d6ab93b9',
  },
  'odd squads 7': {
    tables: 'e0e476b49a1db748dd28d52587179182a4fb5fb62200079a7d759f72ed224b6a',
    counters: '3c8b77f5df201acd306e1c63bb62a63a51b0cde3c0cb54fa4a63e267e0808b35',
    samples: '54b44fd1ca822ebbaf3bdcf35124ece3f4b32dd2b85979bbe64d8d334e2340fb',
  },
};

function digest(data: Uint32Array | string): string {
  const hash = createHash('sha256');
  hash.update(
    typeof data === 'string' ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  );
  return hash.digest('hex');
}

/**
 * The fixture table's words before the in-play state block (src/engine-contract/layout.ts FX_STATE, added
 * after these digests were recorded, all 0 before a match: checked here) and the threshold table.
 */
function tablesDigest(compiled: CompiledFixture): string {
  expect(compiled.fixture.subarray(FX_STATE).every((word) => word === 0)).toBe(true);
  return digest(`${digest(compiled.fixture.subarray(0, FX_STATE))}:${digest(compiled.thresholds)}`);
}

describe('golden counts of the per-step reference', () => {
  const actual: Record<string, { tables: string; counters: string; samples: string }> = {};

  it.each(CASES)(
    '$name: tables, counters and sample paths unchanged',
    ({ name, inputs, params, seed, draws }) => {
      const compiled = compileFixture(inputs, params);
      const counters = new Uint32Array(COUNTER_WORDS);
      simulateRangePerStep(compiled, seed, 0, draws, counters);
      const samples = recordSamplePathsPerStep(compiled, seed, 50);
      actual[name] = {
        tables: tablesDigest(compiled),
        counters: digest(counters),
        samples: digest(JSON.stringify(samples)),
      };
      expect(actual[name], UNVERSIONED_CHANGE).toEqual(GOLDEN[name]);
    },
  );

  it('gives the finalized counts the per-step engine gave', () => {
    const { inputs, params, seed, draws } = CASES[0]!;
    const counters = new Uint32Array(COUNTER_WORDS);
    simulateRangePerStep(compileFixture(inputs, params), seed, 0, draws, counters);
    finalizeCounters(counters);
    expect(digest(counters), UNVERSIONED_CHANGE).toBe(FINALIZED_PREDICTED);
  });
});

const FINALIZED_PREDICTED = '845129ac0951d838afdf50a2f61a43507b1ef3527a58377fc4cc6def74fea9d4';

/**
 * The engine's event-driven sampler (simulateRange) pinned the same way, recorded as the header says:
 * the WGSL port of it must match these counters bit for bit, so an optimisation
 * may change how fast it runs, never which random words it reads or what it counts. The tables digests
 * above already pin the compiler; these pin the event loop on the same cases.
 */
const GOLDEN_EVENTS: Record<string, { counters: string; samples: string }> = {
  'predicted XIs': {
    counters: '70a7f0833650a06b1205cf3b2a51862d7d7bf17eb9dbc2659bfc24fcf80eab44',
    samples: '38e083960b5c75e4b5a1cb27d26c5166d96977e2db5da09e16aefc86d9ca17fe',
  },
  'announced home XI': {
    counters: 'ac47367717bddf3124d7e9a47487787c16019094af175974cd4ca5e3eacf84cc',
    samples: '45d686a50547211d1fd424991c54998411e52e9f45fc60912171f5ad1007aaa2',
  },
  'mismatch, high seed words': {
    counters: 'a1ddaf2a4265d1041a70827ede871b4b92a51889de99fc62f063db033f75d934',
    samples: 'ec809eafadf7f1cc8265dbf70b562813aa60a30bf5939519355880de7d1ddf1d',
  },
  'eventful model, both announced': {
    counters: '587e8e07c78f6fa12e228c69105696f5d38cf3069333ca696a6d90975fc51c8a',
    samples: '5ebcf3a90e89cfa6d99f02eb4b3fcaba69e1ce934cf7241e812057e3b0cd4a92',
  },
  'eventful model, goal fest': {
    counters: 'be677051fdec837629442c0368733fd7492819a23a23b8241190ca74823b4540',
    samples: 'ae67d0633a83768bbb21df478342d0f58562e972a726f2d82f573a76b5c27cb2',
  },
  'odd squads 0': {
    counters: '971a230a85aac328f9570353bddb3bb079806b60e46f4b7493faf72e49d958cc',
    samples: '500ad4e00f2b609d8576e6457064e66c2fc4ca4e34a2e1b7c660ed49e052c6a8',
  },
  'odd squads 1': {
    counters: 'd8c6e48e1945ac243f33b20c66a53972d8709bcf219c640f9ff32732e7b87aae',
    samples: '56e985de504910454f644bfb480687251019f6608595715de3787c70b52b4ea0',
  },
  'odd squads 2': {
    counters: '815861d5834df2f54a5e12770974ac6c5cb1f1d43376c3bae499f667ba1896eb',
    samples: '94dd1fe1f9f88486631834ddd9eafe23dc719b012da5291f12faccaa8d4d4ba3',
  },
  'odd squads 3': {
    counters: 'c8403a8642c70f01f8688ff6a65ff7e28d8e46d75e1c1b6fda85e5bb895e969c',
    samples: '1fcfdbe2f3ca51013a5b4d96875e793ad5f6cb5e3685565b3bab5db333f6cb4e',
  },
  'odd squads 4': {
    counters: 'a4db64ca237923f0c0c70e388359df370020fa825473f4527c693f204497a6ca',
    samples: '04a455e46a2dbcd97fab74eb94d0c1db42958ce315a9796d68672585c29dde6b',
  },
  'odd squads 5': {
    counters: 'a0119174283e35600f65740c4372b0641ba5a0e8eeff227e264532695fec4f74',
    samples: 'f7f1b107c7df3c921c36d0608ea3ed9d4bb59b5085749fed4885da6bb2b09754',
  },
  'odd squads 6': {
    counters: '63d1c56641e40eddeea40f3c82442e2e440da3d8f287b413b8a899b9c7681966',
    samples: '6c77f7a04aa10d264524b5bbadcd4139b1c36d515425d9bab49323e39ee0f98a',
  },
  'odd squads 7': {
    counters: 'baf30ec9d329ede0946f3715e2de6b8e248a172ec4a2e0482d8ac9c6e90c91ef',
    samples: 'ae82d1e423d06c51f2ed1136df34dda20f71c50f97f5ec973414d40ab569c474',
  },
};

describe('golden counts of the CPU engine (event-driven sampler)', () => {
  const actual: Record<string, { counters: string; samples: string }> = {};

  it.each(CASES)('$name: counters and sample paths unchanged', ({ name, inputs, params, seed, draws }) => {
    const compiled = compileFixture(inputs, params);
    const counters = new Uint32Array(COUNTER_WORDS);
    simulateRange(compiled, seed, 0, draws, counters);
    const samples = recordSamplePaths(compiled, seed, 50);
    actual[name] = { counters: digest(counters), samples: digest(JSON.stringify(samples)) };
    expect(actual[name], UNVERSIONED_CHANGE).toEqual(GOLDEN_EVENTS[name]);
  });

  it('gives the same finalized counts through the engine, inline and on worker threads', async () => {
    const { inputs, params, seed, draws } = CASES[0]!;
    const compiled = compileFixture(inputs, params);
    const inline = createCpuEngine({ threads: 0 });
    const pool = createCpuEngine({ threads: 2 });
    try {
      const inlineRun = await inline.run(compiled, { draws, seed });
      const poolRun = await pool.run(compiled, { draws, seed });
      expect(digest(inlineRun.counts), UNVERSIONED_CHANGE).toBe(FINALIZED_PREDICTED_EVENTS);
      expect(digest(poolRun.counts), UNVERSIONED_CHANGE).toBe(FINALIZED_PREDICTED_EVENTS);
    } finally {
      await Promise.all([inline.close(), pool.close()]);
    }
  });
});

const FINALIZED_PREDICTED_EVENTS = 'ad1e655f8ec7972acd11abb43125f8b4cfdc9b8301617663c0e07f84131c01dc';
