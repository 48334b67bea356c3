// Golden documents: SHA-256 digests of the document's wire text (src/engine/job-work.ts finishJob: what
// results store, in its stored form, and responses send) for runs of every kind of lineup, squad and
// model status, recorded from the builder that makes an object tree and JSON.stringify of it, so that a
// document made another way keeps its bytes (docs/decisions.md §6, "Document", tried one). Its bytes may
// change only by a deliberate, versioned change of the document (docs/decisions.md §11). These digests
// must never be edited to make a change pass. They are recorded under the shipped model version
// (RECORDED_UNDER, which the documents name): bits that change under the same version are a change made
// without a new version (docs/decisions.md §13, "Changelog of model versions").
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runWhole } from '../../fallback/cpu-engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import { SAMPLE_PATHS } from '../../src/engine/document.js';
import { finishJob, type HostJob } from '../../src/engine/job-work.js';
import { loadModelStatus, type ModelStatus } from '../../src/engine/model-status.js';
import { documentText } from '../../src/engine/stored-document.js';
import type { EngineSeed } from '../../src/engine-contract/layout.js';
import type { MatchInputs } from '../../src/engine-contract/match-inputs.js';
import {
  defaultModelParams,
  type ModelParams,
  modelParamsSchema,
} from '../../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from './plausible-teams.js';

interface DocumentCase {
  name: string;
  inputs: MatchInputs;
  params: ModelParams;
  draws: number;
  seed: EngineSeed;
  modelStatus: ModelStatus;
  engine: 'cpu' | 'gpu';
}

const base = plausibleFixture(
  31,
  { teamId: 7, attack: 0.12, defence: 0.04 },
  { teamId: 8, attack: -0.05, defence: 0.1 },
);
/** Names that JSON must escape: quotes, a backslash, a control character, non-ASCII letters. */
const escaped: MatchInputs = {
  ...base,
  competition: { ...base.competition, name: 'Liga "Prima" \\ Ünïcödé' },
  home: {
    ...base.home,
    team: { ...base.home.team, name: 'Zoë\'s "Club"\n', short_name: 'ZÖË' },
    players: base.home.players.map((p, i) => (i === 0 ? { ...p, name: 'Ødegaard "Ø"\t\u0001' } : p)),
  },
};
/** A custom XI on both sides with a full bench, one side without labelled positions. */
const custom: MatchInputs = {
  ...base,
  home: {
    ...withAnnouncedLineup(base.home),
    lineup: { ...withAnnouncedLineup(base.home).lineup, source: 'custom', formation: null },
  },
  away: {
    ...withAnnouncedLineup(base.away),
    players: base.away.players.map((p) => ({ ...p, position: null })),
  },
};
const profiled: MatchInputs = {
  ...plausibleFixture(
    32,
    { teamId: 9, attack: 0.4, defence: -0.2 },
    { teamId: 10, attack: -0.3, defence: 0.3 },
  ),
  profile: {
    yellow_per_match: { home: 2.4, away: 2.7 },
    straight_red_per_match: { home: 0.06, away: 0.08 },
    booked_player_factor: 0.5,
    shots: { conversion: 0.105, on_target_share: 0.34 },
  },
};
/** Many goals, cards and substitutions: long sample paths, grids past 10, red-card cells. */
const eventful = modelParamsSchema.parse({
  ...defaultModelParams,
  cards: {
    ...defaultModelParams.cards,
    yellow_per_match: { home: 7, away: 9 },
    straight_red_per_match: { home: 0.9, away: 1.4 },
  },
  substitutions: { ...defaultModelParams.substitutions, expected_per_side: 9 },
});
const goalFest: MatchInputs = {
  ...plausibleFixture(
    33,
    { teamId: 11, attack: 1.6, defence: -1 },
    { teamId: 12, attack: 1.2, defence: -1.2 },
  ),
  params: { intercept: 0.6, home_advantage: 0.3 },
};

const shipped = loadModelStatus(defaultModelParams);
const unqualified: ModelStatus = { status: 'unqualified', calibrated: false, metrics: { reason: 'none' } };
const CASES: DocumentCase[] = [
  {
    name: 'predicted, 125 draws',
    inputs: base,
    params: defaultModelParams,
    draws: 125,
    seed: { lo: 1, hi: 2 },
    modelStatus: shipped,
    engine: 'cpu',
  },
  {
    name: 'predicted, 100 draws, GPU',
    inputs: base,
    params: defaultModelParams,
    draws: 100,
    seed: { lo: 0xffff_ffff, hi: 0 },
    modelStatus: shipped,
    engine: 'gpu',
  },
  {
    name: 'escaped names, 1,000 draws',
    inputs: escaped,
    params: defaultModelParams,
    draws: 1000,
    seed: { lo: 7, hi: 7 },
    modelStatus: unqualified,
    engine: 'cpu',
  },
  {
    name: 'custom and announced, 5,000 draws',
    inputs: custom,
    params: defaultModelParams,
    draws: 5000,
    seed: { lo: 0x5eed, hi: 0xbe7c },
    modelStatus: shipped,
    engine: 'cpu',
  },
  {
    name: 'league profile, 20,000 draws',
    inputs: profiled,
    params: defaultModelParams,
    draws: 20_000,
    seed: { lo: 3, hi: 0x8000_0000 },
    modelStatus: shipped,
    engine: 'cpu',
  },
  {
    name: 'eventful goal fest, 3,000 draws',
    inputs: goalFest,
    params: eventful,
    draws: 3000,
    seed: { lo: 99, hi: 1 },
    modelStatus: unqualified,
    engine: 'cpu',
  },
  {
    name: 'eventful, 137 draws',
    inputs: custom,
    params: eventful,
    draws: 137,
    seed: { lo: 12, hi: 34 },
    modelStatus: { status: 'qualified', calibrated: true },
    engine: 'cpu',
  },
];

/** The shipped model version when the digests below were recorded. */
const RECORDED_UNDER = 'minute-9c1af992c0';

const GOLDEN: Record<string, string> = {
  'predicted, 125 draws': 'ebd53ac183304324a81744a4336f4ed63c6e08a820bcccd0f4eb73fdbc55dab8',
  'predicted, 100 draws, GPU': '532efa74db6d5f4922af8bb7343c5b260a9a6345e5ae10a210daa38867127d8b',
  'escaped names, 1,000 draws': '36953ea14f1b91500f588127d7d41ce6c2c23c9a855af5e0c3f409e3163fa35c',
  'custom and announced, 5,000 draws': 'ad66974302b49e24cbc9d62e2ed9a3af72c6eb4fc73db9f2b7df532f3638eef5',
  'league profile, 20,000 draws': '140d8178dacb547e61998bf4f2b077fb2954db79232e560032c2afdf240aafd7',
  'eventful goal fest, 3,000 draws': '354d1461d6e1aec77fcc6aec71c8d36b19c920e19374e15865e47d3ac2526246',
  'eventful, 137 draws': 'bb538b3db20203135b0d9611f5f2a5978216a6889f58d56a1a732e437e6ef0b5',
};

/**
 * The document as a job thread finishes a run: its sample paths replayed from the first draws (a run
 * counted elsewhere), or, with `recorded`, kept as the whole run counted them (runWholeJob).
 */
function documentOf({ inputs, params, draws, seed, modelStatus, engine }: DocumentCase, recorded = false) {
  const compiled = compileFixture(inputs, params);
  const run = runWhole(compiled, { draws, seed }, 'golden', recorded ? SAMPLE_PATHS : 0);
  const job: HostJob = {
    key: 'golden',
    payloadJson: JSON.stringify({ match: inputs, as_of: '2026-12-01T09:00:00.000Z' }),
    draws,
    seed,
    dataVersion: 'dv_golden',
    queuedMs: 17,
  };
  return finishJob(
    { params, modelStatus },
    job,
    compiled,
    run.counts,
    {
      engine,
      backend: engine === 'gpu' ? 'golden-gpu' : 'golden-cpu',
      runMs: 12.6,
    },
    recorded ? run.samples : undefined,
  );
}

describe('golden documents', () => {
  it('were recorded under the shipped model version', () => {
    expect(
      defaultModelParams.model_version,
      `the model version is now ${defaultModelParams.model_version}: record the golden documents again ` +
        'under it, in the same commit, and set RECORDED_UNDER',
    ).toBe(RECORDED_UNDER);
  });

  it.each(CASES)('$name: the wire text unchanged', (documentCase) => {
    const { document: stored, summary } = documentOf(documentCase);
    const documentJson = documentText(stored);
    const digest = createHash('sha256').update(documentJson).digest('hex');
    expect(
      digest,
      `the document changed under model version ${RECORDED_UNDER}: a change of its bits from the engine or ` +
        'the model is a new model version (docs/decisions.md §13, "Changelog of model versions")',
    ).toBe(GOLDEN[documentCase.name]);
    expect(documentText(documentOf(documentCase, true).document)).toBe(documentJson);
    const document = JSON.parse(documentJson);
    expect(summary).toEqual({
      homeWin: document.result.home_win,
      draw: document.result.draw,
      awayWin: document.result.away_win,
      expectedGoalsHome: document.goals.expected.home,
      expectedGoalsAway: document.goals.expected.away,
    });
  });
});
