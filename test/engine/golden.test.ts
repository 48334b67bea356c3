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
// The version rule (docs/decisions.md, "Changelog of model versions"): the digests are recorded under a
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
const RECORDED_UNDER = { model_version: 'minute-2cd6e48fd7', engine_stream: 1 };
/** A failed digest under the version the digests were recorded under. */
const UNVERSIONED_CHANGE =
  `bits changed under model version ${RECORDED_UNDER.model_version}: a change of the random stream or the ` +
  'compiled tables is a new model version (bump ENGINE_STREAM in src/engine-contract/rng.ts, version the ' +
  'constants with it, record these digests again: docs/decisions.md, "Changelog of model versions")';

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
    tables: 'd410ae11545e3eab7ddbc091e45a1b9eacfb077a903a9b9e94ca14e58ef3b4dd',
    counters: '419259abc516bf505ac45bad8b8cf9d91065b7b057a78e25c5ed537e5182e9f0',
    samples: '424c4a19fb7fd49844ce2b477bd7be10a844ae75898c6380e0e2f9729df862a2',
  },
  'announced home XI': {
    tables: '4cf7a3c71172c8e7b6fb6ed2f83a36ec0ed82a68bea644ffc3c469a71aebfeef',
    counters: 'be8117afb1845d24b195a51cd20d978e61717b9233b4378def0e2d7adb3a2497',
    samples: '3f9512e7daeec5f6ae1d74cc01b62e12f3e74ce23d8bb63404134ec944be2d8a',
  },
  'mismatch, high seed words': {
    tables: 'f680df6271279933e2d44432a34b9353e4df67b15fb226dd0826c6d3eeebf7fc',
    counters: '1e0d6837cd1560932a6a1d77e00711beee57e5493bb854da849517941d4b6029',
    samples: 'f5f08038c6718965181acc7a7881af7b69d97338b1f86b60256c59b83fbb3301',
  },
  'eventful model, both announced': {
    tables: '3975ca12605dc1d66c921978590898f4598276098cbe71f1627eef21ae48e505',
    counters: 'e229f39d56e74b3530e8f216ca55d7a0cfe2b89771da0ca17bb93374abde3e2f',
    samples: 'bd2c7957709e5f62fd0b4099ab5623fc983474966fbe0ea2241abec87e6cb095',
  },
  'eventful model, goal fest': {
    tables: '09c8ef5aed3bc4d8985053aa5084d1dbf6408bb1a637523a9d92c5d488921f88',
    counters: '0fbe36535b43bba2da9375e01049ce05727562a6ccdc41d60b774e8df6a170cb',
    samples: 'b94c3fa52d89b757a426a70d256a317ffd114c78ff064d2c5982e74bf6772d60',
  },
  'odd squads 0': {
    tables: '45fd071cd9bfc0d3e69e63d491e7e64e0df63e8fbdc9eebd096faaf91ef8036a',
    counters: '69b47e250ed3472a9d12e34cc5faf801e93eb976777c95e464a924b7805ba00f',
    samples: '0828f40e007d02b099d38ea296fad326e3151d2202e03efaacd2ef58125107fb',
  },
  'odd squads 1': {
    tables: '2faeeafff2823b74f826850dcfa6a2c36997459f801b8a1c8c556e917de1a522',
    counters: '1355f6514dab3d6f8af7600fb270b2393df24cf85dc3ce7dfb9315774f072cde',
    samples: '18f927efc22c9c1823b8705f7449bcbf51ae483afecbb11b551d658caa7f0cb4',
  },
  'odd squads 2': {
    tables: 'c855d6a876ae170376d02b0832a6ba20e718dd843f8368686f6b1f043ab1db30',
    counters: 'cf4428c0834627e1bb4a715b67265343c9172a0c0aeb615964507de503900404',
    samples: 'd46bc0026d7bc2826070e3ed7ada9372443b07a250fe8cd54da6b18e7f0ccdb9',
  },
  'odd squads 3': {
    tables: '447113afc9da369de11b7faa3a78e5b2f901a606ec73abea7570f0a5011071a0',
    counters: '57503b920538bff7569e9f58503d13d0e0c65785972bc1f2c592873658c1cd77',
    samples: '0bbaba0aba6efde4e22872ba4d2c41a4f0e83dc4b97e5babf7655ca751bce7e6',
  },
  'odd squads 4': {
    tables: 'cdace4638a76660fadb2dffd568098719fa70e48369f3e75c42906e776778cfa',
    counters: '3917b5392663e2ee3afe300b423c77a4b23c4ddc078a93f97717329b46d581c8',
    samples: '4893c84db2039119936d44bfc722aebbfd032685e995ce40563907dc875f12b9',
  },
  'odd squads 5': {
    tables: '6c40ed4991449d753de9fed79ba038e2c4de25d0acc581889fcfe1765c3ace79',
    counters: 'f4cf6d96e72d3f1af737502375f0161cc4754e0873402bee98e49a06c034be97',
    samples: '820adb370e62d2ffba1523b89abde1499c9ccebd142edc5ddf836c0d576912d2',
  },
  'odd squads 6': {
    tables: '7f45fae5ce6f97bdff01ea3a99527e8b7efaa085954bff1ee5721bdcd9c63ef9',
    counters: '37fbad2058fd4140cb222e0f45424db6c3eb403c20bf26301b3e99c856948d6d',
    samples: '394110769cf7c6b70c22d86c2d3adf6bc464e7d380d0bf35d2287560d6ab93b9',
  },
  'odd squads 7': {
    tables: 'fd78f18f1de8703d99725618a1fa565f1a13cba81208f9a5d79ef73fb6ec573f',
    counters: 'd95d7776ff67b8d4172237e31171ce45d68346e0a46d5fe1d6c1eb525633de62',
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

const FINALIZED_PREDICTED = '45edd7af40bacd6907cd9df538d09cd0dde80944c43fee038642806659e56224';

/**
 * The engine's event-driven sampler (simulateRange) pinned the same way, recorded as the header says:
 * the WGSL port of it must match these counters bit for bit, so an optimisation
 * may change how fast it runs, never which random words it reads or what it counts. The tables digests
 * above already pin the compiler; these pin the event loop on the same cases.
 */
const GOLDEN_EVENTS: Record<string, { counters: string; samples: string }> = {
  'predicted XIs': {
    counters: '31167aaf093bd9d7df67fbfa0e31dbdcdd5c1e3db26b49c38e806e68236a2133',
    samples: 'd2f5970d047e2c0191e37a6f5effbdf21d97b5fd90d393015c2884d2ae59b695',
  },
  'announced home XI': {
    counters: '92f5da8d1a61226a8c0be66f17c50e5680e9057f19a2584d22071f42df1ca2b4',
    samples: '428f2919b3596f69837e19924bffa1d735c9f9125d596b5c33d8dbf421d44856',
  },
  'mismatch, high seed words': {
    counters: '33af5c36b12c75e27d2b37130b717fa6fec1552ed56efca6298f9a097afcf7fb',
    samples: 'ed46e5ed4671344d4a8d3fb33ed2d500eb323058173b74ea7a95dadd4e1b5ca5',
  },
  'eventful model, both announced': {
    counters: '7b0b2d8d71d72fa400df2be7c54d76f04b619f5595db3f17a5fddea46c09024b',
    samples: '0d2deac9228db9406e61000882db71def24131322b656edc918940fed0253cc0',
  },
  'eventful model, goal fest': {
    counters: '6ba95fce4075c29100114953d67711666c0967ba320938d5174a170cf5d82615',
    samples: '1fd5061b22c564ac183042f6e7d5119abe9704e0e36bcb583aaff44626091742',
  },
  'odd squads 0': {
    counters: 'cfde2eeb21ff7887353f38a370b42376574ab9c410b356056447daaffc55d32d',
    samples: '41d762a647f8732338859c57e1d07252b49e4402058816265a8d2306c6e2e414',
  },
  'odd squads 1': {
    counters: '7f11d2b3543f7e325295e274767a8c751c632d89e10f74f907753336bb4d0bb4',
    samples: 'd02fdb577e8684045a7a8cafce147a2a950ec9f1241dcc3d8acdbc6ef567e190',
  },
  'odd squads 2': {
    counters: 'a3800b014fd6bbd10120b02bfae650c3f4112bd48e80a28f3874f24a08becbe3',
    samples: '81d0ef55b6fce88af1a92e11fe12e4c311917257d059b5fac96f97230cb9a4d9',
  },
  'odd squads 3': {
    counters: '83bd185ccba1ae46b1cdcfa37fe57822437cf52a46796be3e08a1104b9283448',
    samples: 'e245b93d6b2ce4232d1b06ee2616724cbda294a236133bb229fc8d95aec89f20',
  },
  'odd squads 4': {
    counters: '46ad059a98b5a59a70d99f9f658ce105f78ada3152bccb96e14fd219bb3e3371',
    samples: '61a573df3900b6d364a63b9110a4ff86384685daa18c89ba903b1a7ffb006892',
  },
  'odd squads 5': {
    counters: '9ed4f1db62ea1d33eb79644da335542d5a32523104146030f1310e932cdd4896',
    samples: '1c6a2f6ad3f4008fd763c43d37a38fc26d0f040c0f5cbdfd04773a9c52af1d01',
  },
  'odd squads 6': {
    counters: '0ae4e4bd0fbe8e746999a47c9282a495349c5582ed273fd07a2cfc9f3a96d6db',
    samples: 'd4e2109f936de3cdd94307f4fb7b11895b9ef1ed80c7ff0a93c3b7a5cba988e5',
  },
  'odd squads 7': {
    counters: '0b8788d1e98e84498b17610b0405b22021257132ae86101d3a84a40c5999cb32',
    samples: 'c069432d2366913f0bfec30aba918dd7f9fee65de279086d648289e14079ceac',
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

const FINALIZED_PREDICTED_EVENTS = '422574cf037bdc5c60526f3ffa250011b7d3ca6c37f4b4000f0327787fe4e751';
