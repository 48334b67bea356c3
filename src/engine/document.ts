// Counts -> the simulation document (docs/decisions.md §11, schema `vendor.simulation.v1`, defined in
// document-schema.ts). Probabilities are counts / draws, unrounded, so every distribution sums to 1 up to
// float error.
import type { z } from 'zod';
import type { EngineSeed } from '../engine-contract/layout.js';
import * as layout from '../engine-contract/layout.js';
import {
  competitionLabelSchema,
  type MatchInputs,
  type PlayerProfile,
  paramsForFixture,
  type SideInputs,
  teamLabelSchema,
} from '../engine-contract/match-inputs.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import type { SamplePath } from '../engine-contract/sample-path.js';
import {
  countGrid,
  goalDistributions,
  halfTime,
  markets,
  resultOf,
  toProbabilities,
} from './document-markets.js';
import { SIMULATION_SCHEMA, type SimulationDocument, type sideLineupSchema } from './document-schema.js';
import { startStepOf, stateSection } from './document-state.js';
import { calibrationSection, valueSection } from './document-value.js';
import type { MarketFit } from './market-fit.js';
import type { ModelStatus } from './model-status.js';

export const SAMPLE_PATHS = 20;
/** The 15-minute bands of first_goal_minute; bands ending at 45 and 90 include that half's added time. */
const GOAL_BANDS = [
  { from: 1, to: 15 },
  { from: 16, to: 30 },
  { from: 31, to: 45 },
  { from: 46, to: 60 },
  { from: 61, to: 75 },
  { from: 76, to: 90 },
];

export interface SimulationDocumentInput {
  inputs: MatchInputs;
  params: ModelParams;
  /** Finalized counters of the run (src/engine-contract/layout.ts layout). */
  counts: Uint32Array;
  /** Event paths of draws 0..19 (recordSamplePaths, or recorded as a whole run counts them: runWhole). */
  samples: readonly SamplePath[];
  draws: number;
  seed: EngineSeed;
  basis: { as_of: string; data_version: string; lineups?: string };
  timing: { engine: 'gpu' | 'cpu'; backend: string; queued_ms: number; run_ms: number };
  modelStatus: ModelStatus;
  /** The compile's market fit, for a run whose inputs carry a market (market-fit.ts). */
  marketFit?: MarketFit | undefined;
  /** The request's offered_odds (document-value.ts VALUE_KEYS). */
  offeredOdds?: Record<string, number> | undefined;
}

export function seedToString(seed: EngineSeed): string {
  return (seed.hi >>> 0).toString(16).padStart(8, '0') + (seed.lo >>> 0).toString(16).padStart(8, '0');
}

/** basis.lineups: custom if a side is custom, announced if both are, otherwise predicted. */
function lineupBasis(inputs: MatchInputs): string {
  const sources = [inputs.home.lineup.source, inputs.away.lineup.source];
  if (sources.includes('custom')) return 'custom';
  if (sources.every((source) => source === 'announced')) return 'announced';
  return 'predicted';
}

export function buildSimulationDocument(input: SimulationDocumentInput): SimulationDocument {
  const { inputs, params, counts, draws } = input;
  // Every aggregate is summed in whole counts and divided once, so probabilities stay inside [0, 1]
  // and complementary ones (over/under, yes/no) sum to 1 exactly.
  const ftCounts = countGrid(counts, layout.C_FT_GRID);
  const htCounts = countGrid(counts, layout.C_HT_GRID);
  const result = resultOf(ftCounts, draws);
  // In play: the state's score and the goals still to come (the engines count goals from the state).
  const scored = inputs.from_state?.score ?? { home: 0, away: 0 };
  const expectedHome =
    scored.home + counts[layout.C_TEAM + layout.HOME * layout.TEAM_COUNTERS + layout.TEAM_GOALS]! / draws;
  const expectedAway =
    scored.away + counts[layout.C_TEAM + layout.AWAY * layout.TEAM_COUNTERS + layout.TEAM_GOALS]! / draws;
  const players = playerSummaries(inputs, counts, draws);
  const marketSection = markets(ftCounts, draws);
  const halfTimeSection = halfTime(counts, htCounts, draws);
  return {
    schema: SIMULATION_SCHEMA,
    fixture: {
      fixture_id: inputs.fixture_id,
      kickoff: inputs.kickoff,
      // Labels as the inputs carry them come in any key order (a jsonb column sorts keys): written in the
      // schema's, so the built document's JSON is its wire text (job-work.ts finishJob relies on it).
      competition: competitionLabelSchema.parse(inputs.competition),
      home: teamLabelSchema.parse(inputs.home.team),
      away: teamLabelSchema.parse(inputs.away.team),
    },
    basis: basisOf(input),
    result: { ...result, calibrated: input.modelStatus.calibrated },
    goals: {
      expected: { home: expectedHome, away: expectedAway, total: expectedHome + expectedAway },
      score_grid: { max: layout.GRID_SIZE - 1, cells: toProbabilities(ftCounts, draws) },
      distributions: goalDistributions(ftCounts, draws),
    },
    markets: marketSection,
    half_time: halfTimeSection,
    timeline: timeline(counts, draws, startStepOf(inputs.from_state)),
    goal_events: goalEvents(counts, draws, players),
    players,
    lineups: {
      home: lineupSummary(
        inputs.home,
        players.filter((player) => player.team === 'home'),
      ),
      away: lineupSummary(
        inputs.away,
        players.filter((player) => player.team === 'away'),
      ),
    },
    samples: samplePaths(inputs, input.samples.slice(0, SAMPLE_PATHS)),
    uncertainty: uncertainty(input, result, expectedHome, expectedAway),
    model: {
      public_name: params.public_name,
      version: params.model_version,
      status: input.modelStatus.status,
    },
    timing: input.timing,
    ...(inputs.market && input.marketFit
      ? { calibration: calibrationSection(inputs.market, input.marketFit) }
      : {}),
    ...(input.offeredOdds
      ? {
          value: valueSection(
            input.offeredOdds,
            { result, ...marketSection, half_time: halfTimeSection.result },
            draws,
          ),
        }
      : {}),
    ...(inputs.from_state ? { state: stateSection(inputs.from_state, counts, draws) } : {}),
  };
}

function basisOf(input: SimulationDocumentInput): SimulationDocument['basis'] {
  const { inputs } = input;
  return {
    state: inputs.state,
    as_of: input.basis.as_of,
    data_version: input.basis.data_version,
    lineups: input.basis.lineups ?? lineupBasis(inputs),
    lineup_sources: { home: inputs.home.lineup.source, away: inputs.away.lineup.source },
    draws: input.draws,
    seed: seedToString(input.seed),
    league_profile: leagueProfileBasis(inputs, input.params),
  };
}

/** basis.league_profile: the per-competition constants the engine compiled this fixture with. */
function leagueProfileBasis(
  inputs: MatchInputs,
  params: ModelParams,
): NonNullable<SimulationDocument['basis']['league_profile']> {
  const used = paramsForFixture(params, inputs.profile);
  return {
    source: inputs.profile ? 'competition' : 'model',
    intercept: inputs.params.intercept,
    home_advantage: inputs.params.home_advantage,
    yellow_per_match: { ...used.cards.yellow_per_match },
    straight_red_per_match: { ...used.cards.straight_red_per_match },
    shots: { ...used.shots },
  };
}

/** Every step's minute label, made once: each document's timeline lists all 110. */
const MINUTE_LABELS: readonly string[] = Array.from({ length: layout.STEPS }, (_, step) =>
  layout.minuteLabel(step),
);

/** The timeline from step `from` on (0 before a match; an in-play run's state step). */
function timeline(counts: Uint32Array, draws: number, from: number): SimulationDocument['timeline'] {
  // Plain loops: Array.from({ length }, f) walks its array-like through the generic path, and a
  // document has seven of these series (docs/decisions.md §6, "What a job costs the host").
  const length = layout.STEPS - from;
  const series = (at: number) => {
    const values = new Array<number>(length);
    for (let step = 0; step < length; step++) values[step] = counts[at + from + step]! / draws;
    return values;
  };
  const homeLeading = series(layout.C_STEP_STATE + layout.STATE_HOME_LEADING * layout.STEPS);
  const level = series(layout.C_STEP_STATE + layout.STATE_LEVEL * layout.STEPS);
  // Away leading is what remains; computed from counts so the three sum to 1 exactly in count space.
  const awayLeading = new Array<number>(length);
  for (let step = 0; step < length; step++) {
    awayLeading[step] =
      (draws -
        counts[layout.C_STEP_STATE + layout.STATE_HOME_LEADING * layout.STEPS + from + step]! -
        counts[layout.C_STEP_STATE + layout.STATE_LEVEL * layout.STEPS + from + step]!) /
      draws;
  }
  return {
    steps: length,
    minute_label: MINUTE_LABELS.slice(from),
    home: {
      goals: series(layout.C_STEP_GOALS + layout.HOME * layout.STEPS),
      cards: series(layout.C_STEP_CARDS + layout.HOME * layout.STEPS),
    },
    away: {
      goals: series(layout.C_STEP_GOALS + layout.AWAY * layout.STEPS),
      cards: series(layout.C_STEP_CARDS + layout.AWAY * layout.STEPS),
    },
    score_state: { home_leading: homeLeading, level, away_leading: awayLeading },
  };
}

function goalEvents(
  counts: Uint32Array,
  draws: number,
  players: readonly PlayerSummary[],
): SimulationDocument['goal_events'] {
  const p = (count: number) => count / draws;
  const firstScorers = players
    .filter((player) => player.probabilities.first_scorer > 0)
    .map((player) => ({
      player_id: player.player_id,
      team: player.team,
      probability: player.probabilities.first_scorer,
    }))
    .sort((a, b) => b.probability - a.probability || a.player_id - b.player_id);
  return {
    first_goal: {
      home: p(counts[layout.C_FIRST_GOAL]!),
      away: p(counts[layout.C_FIRST_GOAL + 1]!),
      none: p(counts[layout.C_FIRST_GOAL + 2]!),
    },
    first_goal_minute: GOAL_BANDS.map((band, i) => ({
      ...band,
      probability: p(counts[layout.C_FIRST_GOAL_BAND + i]!),
    })),
    first_scorer: firstScorers,
    comeback: {
      home_win_from_behind: p(counts[layout.C_COMEBACK]!),
      away_win_from_behind: p(counts[layout.C_COMEBACK + 1]!),
      draw_from_behind: p(counts[layout.C_COMEBACK + 2]!),
    },
  };
}

function uncertainty(
  input: SimulationDocumentInput,
  result: { home_win: number; draw: number; away_win: number },
  expectedHome: number,
  expectedAway: number,
): SimulationDocument['uncertainty'] {
  const { counts, draws } = input;
  const squares = [counts[layout.C_GOAL_SQUARES]!, counts[layout.C_GOAL_SQUARES + 1]!];
  const meanStandardError = (mean: number, sumSquares: number) =>
    Math.sqrt(Math.max(0, sumSquares / draws - mean * mean) / draws);
  const proportionStandardError = (q: number) => Math.sqrt((q * (1 - q)) / draws);
  return {
    draws,
    standard_error: {
      home_win: proportionStandardError(result.home_win),
      draw: proportionStandardError(result.draw),
      away_win: proportionStandardError(result.away_win),
      expected_goals_home: meanStandardError(expectedHome, squares[0]!),
      expected_goals_away: meanStandardError(expectedAway, squares[1]!),
    },
    model_accuracy: { ...(input.modelStatus.metrics ?? {}), status: input.modelStatus.status },
  };
}

function playerSummaries(inputs: MatchInputs, counts: Uint32Array, draws: number): PlayerSummary[] {
  const sides = [
    { key: 'home' as const, side: layout.HOME, inputs: inputs.home },
    { key: 'away' as const, side: layout.AWAY, inputs: inputs.away },
  ];
  return sides.flatMap(({ key, side, inputs: sideInputs }) =>
    sideInputs.players.map((player, slot) => playerSummary(counts, draws, key, side, slot, player)),
  );
}

function playerSummary(
  counts: Uint32Array,
  draws: number,
  team: 'home' | 'away',
  side: number,
  slot: number,
  player: PlayerProfile,
) {
  const base = layout.playerCounterBase(side, slot);
  const p = (offset: number) => counts[base + offset]! / draws;
  return {
    player_id: player.player_id,
    name: player.name,
    team,
    position: player.position,
    starts: p(layout.P_STARTS),
    appears: p(layout.P_APPEARANCES),
    expected_minutes: p(layout.P_MINUTES),
    probabilities: {
      anytime_scorer: p(layout.P_GOALS_1),
      two_plus_goals: p(layout.P_GOALS_2),
      hat_trick: p(layout.P_GOALS_3),
      first_scorer: p(layout.P_FIRST_SCORER),
      assist: p(layout.P_ASSIST_1),
      goal_or_assist: p(layout.P_GOAL_OR_ASSIST_1),
      yellow_card: p(layout.P_YELLOW_1),
      red_card: p(layout.P_RED_1),
    },
    box_score: {
      goals: p(layout.P_GOALS),
      assists: p(layout.P_ASSISTS),
      // The shot counters count 1 / SHOT_COUNTER_UNIT shots (expected shots: src/engine-contract/layout.ts "Shot tables").
      shots: p(layout.P_SHOTS) / layout.SHOT_COUNTER_UNIT,
      shots_on_target: p(layout.P_SHOTS_ON_TARGET) / layout.SHOT_COUNTER_UNIT,
      yellow_cards: p(layout.P_YELLOWS),
      red_cards: p(layout.P_REDS),
    },
  };
}

type PlayerSummary = ReturnType<typeof playerSummary>;

/** Fixed lineups as given; predicted ones as the most likely XI (one goalkeeper) and the next nine. */
function lineupSummary(side: SideInputs, summaries: PlayerSummary[]): z.infer<typeof sideLineupSchema> {
  const byId = new Map(summaries.map((summary) => [summary.player_id, summary]));
  const entry = (summary: PlayerSummary) => ({
    player_id: summary.player_id,
    name: summary.name,
    position: summary.position,
    p_start: summary.starts,
  });
  const { lineup } = side;
  if (lineup.source !== 'predicted') {
    return {
      source: lineup.source,
      formation: lineup.formation,
      xi: lineup.xi.map((id) => entry(byId.get(id)!)),
      bench: lineup.bench.map((id) => entry(byId.get(id)!)),
    };
  }
  const ranked = [...summaries].sort((a, b) => b.starts - a.starts || a.player_id - b.player_id);
  const keeper = ranked.find((summary) => summary.position === 'goalkeeper');
  const xi = keeper
    ? [keeper, ...ranked.filter((summary) => summary.position !== 'goalkeeper').slice(0, 10)]
    : ranked.slice(0, 11);
  const bench = ranked.filter((summary) => !xi.includes(summary) && summary.appears > 0).slice(0, 9);
  return { source: 'predicted', formation: lineup.formation, xi: xi.map(entry), bench: bench.map(entry) };
}

function samplePaths(inputs: MatchInputs, paths: readonly SamplePath[]): SimulationDocument['samples'] {
  const ids = [inputs.home.players.map((p) => p.player_id), inputs.away.players.map((p) => p.player_id)];
  return paths.map((path) => samplePath(ids, path));
}

function samplePath(ids: number[][], path: SamplePath): SimulationDocument['samples'][number] {
  const idOf = (side: number, slot: number | undefined) =>
    slot === undefined || slot < 0 ? null : ids[side]![slot]!;
  return {
    index: path.draw,
    score: { home: path.score[0], away: path.score[1] },
    half_time: { home: path.halfTime[0], away: path.halfTime[1] },
    events: path.events.map((event) => {
      const assist = idOf(event.side, event.assistSlot);
      const off = idOf(event.side, event.offSlot);
      // Optional fields assigned after the others (the same key order as spreading them in, without a
      // spread's copy of a fresh object for every event).
      const written: SimulationDocument['samples'][number]['events'][number] = {
        minute_label: MINUTE_LABELS[event.step]!,
        team: event.side === layout.HOME ? 'home' : 'away',
        type: event.type,
        player_id: idOf(event.side, event.slot),
      };
      if (assist !== null) written.assist_player_id = assist;
      if (off !== null) written.player_off_id = off;
      return written;
    }),
  };
}
