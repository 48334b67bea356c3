// Golden counts: SHA-256 digests of the CPU engine's counters and sample paths (the event-driven sampler,
// recorded from it as it stood before its speed work) and of the per-step reference it replaced
// (test/engine/per-step-reference.ts, recorded from the per-step engine before its speed work). The GPU
// kernel reproduces the engine's counters bit for bit, so an optimisation of fallback/engine.ts may change
// how fast the draws run, never what they count. These digests must never be edited to make a change
// pass; a real model change gets new digests on purpose.
// The model parameters are frozen here (not the shipped, refittable ones), and the compiled tables are
// digested too, so a failure says whether the compiler or the per-draw loop moved.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../fallback/cpu-engine.js';
import { recordSamplePaths, simulateRange } from '../../fallback/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import {
  COUNTER_WORDS,
  type CompiledFixture,
  type EngineSeed,
  finalizeCounters,
} from '../../src/engine/contract/layout.js';
import {
  type MatchInputs,
  matchInputsSchema,
  PLAYER_POSITIONS,
  type PlayerProfile,
  type SideInputs,
} from '../../src/engine/contract/match-inputs.js';
import { type ModelParams, modelParamsSchema } from '../../src/engine/contract/model-params.js';
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

const GOLDEN: Record<string, { tables: string; counters: string; samples: string }> = {
  'predicted XIs': {
    tables: 'd410ae11545e3eab7ddbc091e45a1b9eacfb077a903a9b9e94ca14e58ef3b4dd',
    counters: 'd07243596e5f5df62ff771093b78a9b12f37ec5b4d049b2f835aba202a75b7e0',
    samples: '424c4a19fb7fd49844ce2b477bd7be10a844ae75898c6380e0e2f9729df862a2',
  },
  'announced home XI': {
    tables: '4cf7a3c71172c8e7b6fb6ed2f83a36ec0ed82a68bea644ffc3c469a71aebfeef',
    counters: '9ad5db337c4b1f21777ad5a922a2c34c893bc03376b3ad8bc5447d7d39180118',
    samples: '3f9512e7daeec5f6ae1d74cc01b62e12f3e74ce23d8bb63404134ec944be2d8a',
  },
  'mismatch, high seed words': {
    tables: 'f680df6271279933e2d44432a34b9353e4df67b15fb226dd0826c6d3eeebf7fc',
    counters: '8fbdb7527acb20b48bcb6b8561611ccbef8c2d12ab7bd547a0833278c4f0a95b',
    samples: 'f5f08038c6718965181acc7a7881af7b69d97338b1f86b60256c59b83fbb3301',
  },
  'eventful model, both announced': {
    tables: '3975ca12605dc1d66c921978590898f4598276098cbe71f1627eef21ae48e505',
    counters: '2dd422c5e2590c6afcf99b19285c87b4d70e8ed6b8ffa8ead290c820e8c60172',
    samples: 'bd2c7957709e5f62fd0b4099ab5623fc983474966fbe0ea2241abec87e6cb095',
  },
  'eventful model, goal fest': {
    tables: '09c8ef5aed3bc4d8985053aa5084d1dbf6408bb1a637523a9d92c5d488921f88',
    counters: '2579aa6ef5746bce8b8dcc1fd9ae909a6bfc27164ae81578711fb2d191a76a6d',
    samples: 'b94c3fa52d89b757a426a70d256a317ffd114c78ff064d2c5982e74bf6772d60',
  },
  'odd squads 0': {
    tables: '45fd071cd9bfc0d3e69e63d491e7e64e0df63e8fbdc9eebd096faaf91ef8036a',
    counters: '79d60f11904a22964944fc826406b5193baa3cc144270cbdd0434c315eed9cbb',
    samples: '0828f40e007d02b099d38ea296fad326e3151d2202e03efaacd2ef58125107fb',
  },
  'odd squads 1': {
    tables: '2faeeafff2823b74f826850dcfa6a2c36997459f801b8a1c8c556e917de1a522',
    counters: '27b2469dbe2bf5e3a14064905db870d409a774dbe648a0434a1ac6f789c00148',
    samples: '18f927efc22c9c1823b8705f7449bcbf51ae483afecbb11b551d658caa7f0cb4',
  },
  'odd squads 2': {
    tables: 'c855d6a876ae170376d02b0832a6ba20e718dd843f8368686f6b1f043ab1db30',
    counters: '8feabab503cadec35be76275010772f1ce5388797bd47cd593e03dac8811057e',
    samples: 'd46bc0026d7bc2826070e3ed7ada9372443b07a250fe8cd54da6b18e7f0ccdb9',
  },
  'odd squads 3': {
    tables: '447113afc9da369de11b7faa3a78e5b2f901a606ec73abea7570f0a5011071a0',
    counters: 'd0b0ea2c220ba77f64ed0c00d50916667f3f4f33ec7341f3c944a909c70009b2',
    samples: '0bbaba0aba6efde4e22872ba4d2c41a4f0e83dc4b97e5babf7655ca751bce7e6',
  },
  'odd squads 4': {
    tables: 'cdace4638a76660fadb2dffd568098719fa70e48369f3e75c42906e776778cfa',
    counters: 'eba6c770c8c281e0ffe405fc4ac4704f1b6796d6276314e273b2eb006c62ed23',
    samples: '4893c84db2039119936d44bfc722aebbfd032685e995ce40563907dc875f12b9',
  },
  'odd squads 5': {
    tables: '6c40ed4991449d753de9fed79ba038e2c4de25d0acc581889fcfe1765c3ace79',
    counters: '3c61bdaa3e7ec8cc342b8d9ffa8a7d4086ae5937a2433b7b2295763a276e5eae',
    samples: '820adb370e62d2ffba1523b89abde1499c9ccebd142edc5ddf836c0d576912d2',
  },
  'odd squads 6': {
    tables: '7f45fae5ce6f97bdff01ea3a99527e8b7efaa085954bff1ee5721bdcd9c63ef9',
    counters: 'a9589fb272b72759e0fa88b67ee74b5d5badac85d57f6314509a63e66f3d222e',
    samples: '394110769cf7c6b70c22d86c2d3adf6bc464e7d380d0bf35d2287560d6ab93b9',
  },
  'odd squads 7': {
    tables: 'fd78f18f1de8703d99725618a1fa565f1a13cba81208f9a5d79ef73fb6ec573f',
    counters: 'c3078ff025a86123c03928d9763a88b75ea0ae8aa0b634cb8b0fd2c90199d1d5',
    samples: '9bee4560e5cf1ff029c839ef1bf554aee7ba049ff5d3063e5465420b1fd8efd1',
  },
};

function digest(data: Uint32Array | string): string {
  const hash = createHash('sha256');
  hash.update(
    typeof data === 'string' ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  );
  return hash.digest('hex');
}

function tablesDigest(compiled: CompiledFixture): string {
  return digest(`${digest(compiled.fixture)}:${digest(compiled.thresholds)}`);
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
      expect(actual[name]).toEqual(GOLDEN[name]);
    },
  );

  it('gives the finalized counts the per-step engine gave', () => {
    const { inputs, params, seed, draws } = CASES[0]!;
    const counters = new Uint32Array(COUNTER_WORDS);
    simulateRangePerStep(compileFixture(inputs, params), seed, 0, draws, counters);
    finalizeCounters(counters);
    expect(digest(counters)).toBe(FINALIZED_PREDICTED);
  });
});

const FINALIZED_PREDICTED = '374b6e957ffb0ea8b016d210753d29fd15dfc74bfe10288ef354258ece294258';

/**
 * The engine's event-driven sampler (simulateRange) pinned the same way, recorded from it as it stood
 * before its speed work: the WGSL port of it must match these counters bit for bit, so an optimisation
 * may change how fast it runs, never which random words it reads or what it counts. The tables digests
 * above already pin the compiler; these pin the event loop on the same cases.
 */
const GOLDEN_EVENTS: Record<string, { counters: string; samples: string }> = {
  'predicted XIs': {
    counters: 'c7af6e6dab8bb58fb9e0c65bbabef912163035474dfe57eae32bfca6ca839433',
    samples: 'e77cf3fed4a9a1a2ba717506ff6b5c55c63148bf1b5a6ef5c065febb6822e22b',
  },
  'announced home XI': {
    counters: 'b6a2edd3b44627db3a70cd109f2ea89d1c4b519472a965dada7577c9de0ac4bb',
    samples: 'e5293f7e302a1f97a2c3c1d5a03cee7f349d62996f16356d1a09e673b3e20804',
  },
  'mismatch, high seed words': {
    counters: 'a77990a94374b950280b9aa7f1e3a0c3362a7c0f82f706ab8e10807c112b5d43',
    samples: '002d5d952f709826bc4b1ac65f355d74155732f74979495628688e92f1f07166',
  },
  'eventful model, both announced': {
    counters: '463b38a90bae8d432f88517a0ddac99baf8ea9706eaa6cb70ffe7e1250ce4be4',
    samples: '032ba297d1ecd5446c281d3f72d43df2caddef69389e42f38f562b787097253a',
  },
  'eventful model, goal fest': {
    counters: 'b7114a031f6d71365507497f6de291b6afff6b116cc2de25619be77fb8453aa2',
    samples: '6462b785aa7de67ee38c41a7420e59a303b4a7231beabeff86f06582b7a83092',
  },
  'odd squads 0': {
    counters: '567be11b84480f5e539c74ee41bec714972eb6c10168ac4aadaa6d1bae64557f',
    samples: '49e2a886d1212df0c52fba348cc1aa846655809e461f332c3eed019379205598',
  },
  'odd squads 1': {
    counters: 'f9fbeb434b271839ad7b2fc291b4bfc36e528021f13fb4263e6bbbcffe9d4278',
    samples: '250c497ff8687b027361bd17f92e5d9591b2a54cee9908aac5ff8db92c862e2f',
  },
  'odd squads 2': {
    counters: '3346a05f593b8e591deae3048b481bbb5b93560a5e0098073172ce43d5ed0e1f',
    samples: '3ed132e501e9b17e753e97c1522d5d857159ecde50045bc5de89bc4ad873d2e3',
  },
  'odd squads 3': {
    counters: '7faaef0b2c8030272e34ccfea5b27bb160d86ace5c4600dbf255fe09085b7dd7',
    samples: 'b0da6228e941fdd37a373227640a2a24746f18d4a9c12f6c0a7e59feb3289adc',
  },
  'odd squads 4': {
    counters: 'fcfacda976aff8a585c1c7f7aafaa1d658ec1dbebef34cea78d66ee5418680ff',
    samples: '4c22c5b3697a879941e668268ef04fa0829ff93bd14af46cba12a246ce4f3721',
  },
  'odd squads 5': {
    counters: '33d8a1d2738936c2978ecc852fe20c53f40581cff1e7a84ffa0f07a3fa4c462f',
    samples: '6010c92c80bbdbde7023e28251c6b08e9839f9c7438bb10b4f0844bebf643b6a',
  },
  'odd squads 6': {
    counters: 'd63f5a44f25f530418bdb9531880f4362f56b64c6565153a493a34d3cc5f5adf',
    samples: 'f3c1e1ac57be9f507e140200ab5cb926dade20e0bb1776214564e5c61faaef8e',
  },
  'odd squads 7': {
    counters: '8ffa2f72605bc4c1cbff645e69dbad02b394d65e9c74ac41470f99827cff1c6f',
    samples: '6e007a75adb65f56303b611e830092bac3dd6ade8c5f84787af73318be52926e',
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
    expect(actual[name]).toEqual(GOLDEN_EVENTS[name]);
  });

  it('gives the same finalized counts through the engine, inline and on worker threads', async () => {
    const { inputs, params, seed, draws } = CASES[0]!;
    const compiled = compileFixture(inputs, params);
    const inline = createCpuEngine({ threads: 0 });
    const pool = createCpuEngine({ threads: 2 });
    try {
      const inlineRun = await inline.run(compiled, { draws, seed });
      const poolRun = await pool.run(compiled, { draws, seed });
      expect(digest(inlineRun.counts)).toBe(FINALIZED_PREDICTED_EVENTS);
      expect(digest(poolRun.counts)).toBe(FINALIZED_PREDICTED_EVENTS);
    } finally {
      await Promise.all([inline.close(), pool.close()]);
    }
  });
});

const FINALIZED_PREDICTED_EVENTS = '7415ccdffd0f5ee4e6f53dbef3bd6f87306e7d06d9ce3a622405c2a1ee6ddbf0';
