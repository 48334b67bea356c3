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
import {
  type DocumentSummary,
  documentSummary,
  SIMULATION_SCHEMA,
  type SimulationDocument,
  type sideLineupSchema,
} from './document-schema.js';
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

/**
 * A document's sections but the three written from counts and paths (timeline, players, samples), in the
 * schema's order around them: the object and the text builders below assemble the same parts.
 */
interface DocumentParts {
  head: Pick<
    SimulationDocument,
    'schema' | 'fixture' | 'basis' | 'result' | 'goals' | 'markets' | 'half_time'
  >;
  goalEvents: SimulationDocument['goal_events'];
  lineups: SimulationDocument['lineups'];
  tail: Pick<SimulationDocument, 'uncertainty' | 'model' | 'timing' | 'calibration' | 'value' | 'state'>;
}

function documentParts(input: SimulationDocumentInput, players: readonly PlayerFacts[]): DocumentParts {
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
  const marketSection = markets(ftCounts, draws);
  const halfTimeSection = halfTime(counts, htCounts, draws);
  return {
    head: {
      schema: SIMULATION_SCHEMA,
      fixture: {
        fixture_id: inputs.fixture_id,
        kickoff: inputs.kickoff,
        // Labels as the inputs carry them come in any key order (a jsonb column sorts keys): written in
        // the schema's, so the built document's JSON is its wire text (job-work.ts finishJob relies on it).
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
    },
    goalEvents: goalEvents(counts, draws, players),
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
    tail: {
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
    },
  };
}

/** The document as an object (operator runs, tests); its JSON is simulationDocumentText's text. */
export function buildSimulationDocument(input: SimulationDocumentInput): SimulationDocument {
  const { inputs, counts, draws } = input;
  const parts = documentParts(input, playerFacts(inputs, counts, draws));
  return {
    ...parts.head,
    timeline: timeline(counts, draws, startStepOf(inputs.from_state)),
    goal_events: parts.goalEvents,
    players: playerSummaries(inputs, counts, draws),
    lineups: parts.lineups,
    samples: samplePaths(inputs, input.samples.slice(0, SAMPLE_PATHS)),
    ...parts.tail,
  };
}

/**
 * The document's JSON text, as JSON.stringify(buildSimulationDocument(input)) writes it (key order,
 * numbers and strings alike: test/engine/document-text.test.ts), and its summary. The timeline, the
 * players and the samples, some four fifths of its bytes, are written straight from the counts and the
 * paths: no object per player and per event built and then walked again by JSON.stringify, which took
 * some 40% of a small job's document (docs/decisions.md §6, "A document written as text"). The rest is
 * built and stringified section by section.
 */
export function simulationDocumentText(input: SimulationDocumentInput): {
  text: string;
  summary: DocumentSummary;
} {
  const { inputs, counts, draws } = input;
  const parts = documentParts(input, playerFacts(inputs, counts, draws));
  // One set of fraction texts for the timeline and the players.
  const fraction = fractionTexts(draws);
  const head = JSON.stringify(parts.head);
  const tail = JSON.stringify(parts.tail);
  const text =
    `${head.slice(0, -1)},"timeline":${timelineText(counts, draws, fraction, startStepOf(inputs.from_state))}` +
    `,"goal_events":${JSON.stringify(parts.goalEvents)},"players":${playersText(inputs, counts, draws, fraction)}` +
    `,"lineups":${JSON.stringify(parts.lineups)}` +
    `,"samples":${samplesText(inputs, input.samples.slice(0, SAMPLE_PATHS))},${tail.slice(1)}`;
  return { text, summary: documentSummary(parts.head) };
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

/** Each step's minute label as JSON text from that step on, made once: `"1","2",…,"90+10"`. */
const MINUTE_LABELS_TEXT: readonly string[] = MINUTE_LABELS.map((_, from) =>
  MINUTE_LABELS.slice(from)
    .map((label) => JSON.stringify(label))
    .join(','),
);

const HOME_LEADING_AT = layout.C_STEP_STATE + layout.STATE_HOME_LEADING * layout.STEPS;
const LEVEL_AT = layout.C_STEP_STATE + layout.STATE_LEVEL * layout.STEPS;

/** Away leading at a step is what remains: from counts, so the three states sum to 1 exactly in count space. */
function awayLeadingAt(counts: Uint32Array, draws: number, step: number): number {
  return (draws - counts[HOME_LEADING_AT + step]! - counts[LEVEL_AT + step]!) / draws;
}

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
  const awayLeading = new Array<number>(length);
  for (let step = 0; step < length; step++) awayLeading[step] = awayLeadingAt(counts, draws, from + step);
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
    score_state: {
      home_leading: series(HOME_LEADING_AT),
      level: series(LEVEL_AT),
      away_leading: awayLeading,
    },
  };
}

/** timeline's JSON text, written from the counts. */
function timelineText(counts: Uint32Array, draws: number, fraction: FractionText, from: number): string {
  const series = (at: number) => {
    let text = `[${fraction(counts[at + from]!)}`;
    for (let step = from + 1; step < layout.STEPS; step++) text += `,${fraction(counts[at + step]!)}`;
    return `${text}]`;
  };
  // awayLeadingAt's count, whose fraction is the same double.
  const awayLeading = (step: number) =>
    fraction(draws - counts[HOME_LEADING_AT + step]! - counts[LEVEL_AT + step]!);
  let awayLeadingText = `[${awayLeading(from)}`;
  for (let step = from + 1; step < layout.STEPS; step++) awayLeadingText += `,${awayLeading(step)}`;
  return (
    `{"steps":${layout.STEPS - from},"minute_label":[${MINUTE_LABELS_TEXT[from]}]` +
    `,"home":{"goals":${series(layout.C_STEP_GOALS + layout.HOME * layout.STEPS)}` +
    `,"cards":${series(layout.C_STEP_CARDS + layout.HOME * layout.STEPS)}}` +
    `,"away":{"goals":${series(layout.C_STEP_GOALS + layout.AWAY * layout.STEPS)}` +
    `,"cards":${series(layout.C_STEP_CARDS + layout.AWAY * layout.STEPS)}}` +
    `,"score_state":{"home_leading":${series(HOME_LEADING_AT)},"level":${series(LEVEL_AT)}` +
    `,"away_leading":${awayLeadingText}]}}`
  );
}

/** count / draws as JSON writes it (fractionTexts). */
type FractionText = (count: number) => string;

/** Runs of at most this many draws keep their fractions' texts (fractionTexts). */
const FRACTION_TEXTS_MAX_DRAWS = 10_000;

/**
 * count / draws as JSON writes it, each count from 0 to draws formatted once per document: a small run's
 * counters repeat few values (a 125-draw run's at most 126), and a double's shortest text, some 140 ns,
 * was most of the cost of writing a small job's document (docs/decisions.md §6, "A document written as
 * text"). A larger run's fractions are formatted as they come.
 */
function fractionTexts(draws: number): FractionText {
  if (draws > FRACTION_TEXTS_MAX_DRAWS) return (count) => `${count / draws}`;
  const texts = new Array<string | undefined>(draws + 1);
  return (count) => {
    if (count > draws) return `${count / draws}`;
    let text = texts[count];
    if (text === undefined) {
      text = `${count / draws}`;
      texts[count] = text;
    }
    return text;
  };
}

function goalEvents(
  counts: Uint32Array,
  draws: number,
  players: readonly PlayerFacts[],
): SimulationDocument['goal_events'] {
  const p = (count: number) => count / draws;
  const firstScorers = players
    .filter((player) => player.firstScorer > 0)
    .map((player) => ({
      player_id: player.player_id,
      team: player.team,
      probability: player.firstScorer,
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

/** Each player of both squads with his side's key and slot, home first, in squad order. */
function* squadPlayers(inputs: MatchInputs) {
  for (const [team, side, sideInputs] of [
    ['home', layout.HOME, inputs.home],
    ['away', layout.AWAY, inputs.away],
  ] as const) {
    for (let slot = 0; slot < sideInputs.players.length; slot++) {
      yield { team, side, slot, player: sideInputs.players[slot]! };
    }
  }
}

/** What goal_events and lineups read of a player: who he is, and three of his figures. */
interface PlayerFacts {
  player_id: number;
  name: string;
  team: 'home' | 'away';
  position: PlayerProfile['position'];
  starts: number;
  appears: number;
  firstScorer: number;
}

function playerFacts(inputs: MatchInputs, counts: Uint32Array, draws: number): PlayerFacts[] {
  const facts: PlayerFacts[] = [];
  for (const { team, side, slot, player } of squadPlayers(inputs)) {
    const base = layout.playerCounterBase(side, slot);
    facts.push({
      player_id: player.player_id,
      name: player.name,
      team,
      position: player.position,
      starts: counts[base + layout.P_STARTS]! / draws,
      appears: counts[base + layout.P_APPEARANCES]! / draws,
      firstScorer: counts[base + layout.P_FIRST_SCORER]! / draws,
    });
  }
  return facts;
}

function playerSummaries(inputs: MatchInputs, counts: Uint32Array, draws: number): PlayerSummary[] {
  const summaries: PlayerSummary[] = [];
  for (const { team, side, slot, player } of squadPlayers(inputs)) {
    summaries.push(playerSummary(counts, draws, team, side, slot, player));
  }
  return summaries;
}

/**
 * A player's figures in the document's order: probabilities (8), then box score (6), each a counter
 * over the draws; the box score's shots are in 1 / SHOT_COUNTER_UNIT shots (expected shots:
 * src/engine-contract/layout.ts "Shot tables").
 */
const PROBABILITY_COUNTERS = [
  ['anytime_scorer', layout.P_GOALS_1],
  ['two_plus_goals', layout.P_GOALS_2],
  ['hat_trick', layout.P_GOALS_3],
  ['first_scorer', layout.P_FIRST_SCORER],
  ['assist', layout.P_ASSIST_1],
  ['goal_or_assist', layout.P_GOAL_OR_ASSIST_1],
  ['yellow_card', layout.P_YELLOW_1],
  ['red_card', layout.P_RED_1],
] as const;
const BOX_SCORE_COUNTERS = [
  ['goals', layout.P_GOALS, 1],
  ['assists', layout.P_ASSISTS, 1],
  ['shots', layout.P_SHOTS, layout.SHOT_COUNTER_UNIT],
  ['shots_on_target', layout.P_SHOTS_ON_TARGET, layout.SHOT_COUNTER_UNIT],
  ['yellow_cards', layout.P_YELLOWS, 1],
  ['red_cards', layout.P_REDS, 1],
] as const;
type ProbabilityKey = (typeof PROBABILITY_COUNTERS)[number][0];
type BoxScoreKey = (typeof BOX_SCORE_COUNTERS)[number][0];

/** A box-score figure: the counter's mean, in whole units (shots: a counter / draws / the unit, as ever). */
function boxScoreFigure(
  counts: Uint32Array,
  base: number,
  draws: number,
  offset: number,
  unit: number,
): number {
  const mean = counts[base + offset]! / draws;
  return unit === 1 ? mean : mean / unit;
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
  const probabilities = {} as Record<ProbabilityKey, number>;
  for (const [key, offset] of PROBABILITY_COUNTERS) probabilities[key] = counts[base + offset]! / draws;
  const boxScore = {} as Record<BoxScoreKey, number>;
  for (const [key, offset, unit] of BOX_SCORE_COUNTERS) {
    boxScore[key] = boxScoreFigure(counts, base, draws, offset, unit);
  }
  return {
    player_id: player.player_id,
    name: player.name,
    team,
    position: player.position,
    starts: counts[base + layout.P_STARTS]! / draws,
    appears: counts[base + layout.P_APPEARANCES]! / draws,
    expected_minutes: counts[base + layout.P_MINUTES]! / draws,
    probabilities,
    box_score: boxScore,
  };
}

type PlayerSummary = ReturnType<typeof playerSummary>;

/** The players section's JSON text, written from the counts: playerSummaries' objects, stringified. */
function playersText(
  inputs: MatchInputs,
  counts: Uint32Array,
  draws: number,
  fraction: FractionText,
): string {
  let text = '[';
  for (const { team, side, slot, player } of squadPlayers(inputs)) {
    const base = layout.playerCounterBase(side, slot);
    if (text.length > 1) text += ',';
    text +=
      `{"player_id":${player.player_id},"name":${JSON.stringify(player.name)},"team":"${team}"` +
      `,"position":${JSON.stringify(player.position)},"starts":${fraction(counts[base + layout.P_STARTS]!)}` +
      `,"appears":${fraction(counts[base + layout.P_APPEARANCES]!)}` +
      `,"expected_minutes":${counts[base + layout.P_MINUTES]! / draws},"probabilities":{`;
    for (let i = 0; i < PROBABILITY_COUNTERS.length; i++) {
      const [key, offset] = PROBABILITY_COUNTERS[i]!;
      text += `${i === 0 ? '' : ','}"${key}":${fraction(counts[base + offset]!)}`;
    }
    text += '},"box_score":{';
    for (let i = 0; i < BOX_SCORE_COUNTERS.length; i++) {
      const [key, offset, unit] = BOX_SCORE_COUNTERS[i]!;
      const figure =
        unit === 1
          ? fraction(counts[base + offset]!)
          : `${boxScoreFigure(counts, base, draws, offset, unit)}`;
      text += `${i === 0 ? '' : ','}"${key}":${figure}`;
    }
    text += '}}';
  }
  return `${text}]`;
}

/** Fixed lineups as given; predicted ones as the most likely XI (one goalkeeper) and the next nine. */
function lineupSummary(side: SideInputs, summaries: PlayerFacts[]): z.infer<typeof sideLineupSchema> {
  const byId = new Map(summaries.map((summary) => [summary.player_id, summary]));
  const entry = (summary: PlayerFacts) => ({
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

/** Each side's player ids by slot, for the sample paths. */
function squadIds(inputs: MatchInputs): number[][] {
  return [inputs.home.players.map((p) => p.player_id), inputs.away.players.map((p) => p.player_id)];
}

/** A slot's player id; null for no player (-1) and an absent slot. */
function idOf(ids: number[][], side: number, slot: number | undefined): number | null {
  return slot === undefined || slot < 0 ? null : ids[side]![slot]!;
}

function samplePaths(inputs: MatchInputs, paths: readonly SamplePath[]): SimulationDocument['samples'] {
  const ids = squadIds(inputs);
  return paths.map((path) => samplePath(ids, path));
}

function samplePath(ids: number[][], path: SamplePath): SimulationDocument['samples'][number] {
  return {
    index: path.draw,
    score: { home: path.score[0], away: path.score[1] },
    half_time: { home: path.halfTime[0], away: path.halfTime[1] },
    events: path.events.map((event) => {
      const assist = idOf(ids, event.side, event.assistSlot);
      const off = idOf(ids, event.side, event.offSlot);
      // Optional fields assigned after the others (the same key order as spreading them in, without a
      // spread's copy of a fresh object for every event).
      const written: SimulationDocument['samples'][number]['events'][number] = {
        minute_label: MINUTE_LABELS[event.step]!,
        team: event.side === layout.HOME ? 'home' : 'away',
        type: event.type,
        player_id: idOf(ids, event.side, event.slot),
      };
      if (assist !== null) written.assist_player_id = assist;
      if (off !== null) written.player_off_id = off;
      return written;
    }),
  };
}

/** The samples section's JSON text, written from the paths: samplePaths' objects, stringified. */
function samplesText(inputs: MatchInputs, paths: readonly SamplePath[]): string {
  const ids = squadIds(inputs);
  let text = '[';
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i]!;
    text +=
      `${i === 0 ? '' : ','}{"index":${path.draw},"score":{"home":${path.score[0]},"away":${path.score[1]}}` +
      `,"half_time":{"home":${path.halfTime[0]},"away":${path.halfTime[1]}},"events":[`;
    for (let j = 0; j < path.events.length; j++) {
      const event = path.events[j]!;
      const assist = idOf(ids, event.side, event.assistSlot);
      const off = idOf(ids, event.side, event.offSlot);
      text +=
        `${j === 0 ? '' : ','}{"minute_label":"${MINUTE_LABELS[event.step]}"` +
        `,"team":"${event.side === layout.HOME ? 'home' : 'away'}","type":"${event.type}"` +
        `,"player_id":${idOf(ids, event.side, event.slot)}`;
      if (assist !== null) text += `,"assist_player_id":${assist}`;
      if (off !== null) text += `,"player_off_id":${off}`;
      text += '}';
    }
    text += ']}';
  }
  return `${text}]`;
}
