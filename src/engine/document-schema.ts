// The simulation document's schema (docs/decisions.md §11, schema `vendor.simulation.v1`): the one
// definition of the document. The API serializes with it and OpenAPI is generated from it; document.ts
// builds documents that follow it field for field, in its order.
import { z } from 'zod';
import { GRID_SIZE, STEPS } from '../engine-contract/layout.js';
import {
  competitionLabelSchema,
  LINEUP_SOURCES,
  PLAYER_POSITIONS,
  teamLabelSchema,
} from '../engine-contract/match-inputs.js';
import { stateSectionSchema } from './document-state.js';
import { calibrationSectionSchema, valueSectionSchema } from './document-value.js';

export const SIMULATION_SCHEMA = 'vendor.simulation.v1';
export const HT_FT_KEYS = ['H/H', 'H/D', 'H/A', 'D/H', 'D/D', 'D/A', 'A/H', 'A/D', 'A/A'] as const;

const probability = z.number().min(0).max(1);
const teamKey = z.enum(['home', 'away']);
const lineupSource = z.enum(LINEUP_SOURCES);
const scoreGridSchema = z.object({
  max: z.literal(GRID_SIZE - 1),
  /** cells[home goals][away goals]; the last row and column hold 10 or more. */
  cells: z.array(z.array(probability)),
});
const resultSchema = z.object({ home_win: probability, draw: probability, away_win: probability });
const lineupPlayerSchema = z.object({
  player_id: z.number().int(),
  name: z.string(),
  position: z.enum(PLAYER_POSITIONS).nullable(),
  /** Probability of starting under the run's lineup (1 or 0 for a fixed lineup). */
  p_start: probability,
});
export const sideLineupSchema = z.object({
  source: lineupSource,
  formation: z.string().nullable(),
  xi: z.array(lineupPlayerSchema),
  bench: z.array(lineupPlayerSchema),
});
/** One value per step played: all STEPS before a match, from the state's step on in play. */
const stepSeries = z.array(z.number().min(0)).min(1).max(STEPS);
const sampleEventSchema = z.object({
  minute_label: z.string(),
  team: teamKey,
  type: z.enum(['goal', 'yellow_card', 'red_card', 'substitution']),
  /** Scorer, booked player or substitute coming on; null when the model credited no player. */
  player_id: z.number().int().nullable(),
  assist_player_id: z.number().int().optional(),
  player_off_id: z.number().int().optional(),
});

export const simulationDocumentSchema = z.object({
  schema: z.literal(SIMULATION_SCHEMA),
  fixture: z.object({
    fixture_id: z.number().int(),
    kickoff: z.string(),
    competition: competitionLabelSchema,
    home: teamLabelSchema,
    away: teamLabelSchema,
  }),
  basis: z.object({
    state: z.string(),
    as_of: z.string(),
    data_version: z.string(),
    lineups: z.string(),
    lineup_sources: z.object({ home: lineupSource, away: lineupSource }),
    draws: z.number().int(),
    /** The run's 64-bit seed as 16 hex digits: the same inputs give the same seed and document. */
    seed: z.string(),
    /**
     * The competition's constants the run used (docs/model.md, "League profiles"): its own card and
     * shot rates (`source: competition`) or the model's global ones (`model`). Absent on documents
     * made before league profiles existed.
     */
    league_profile: z
      .object({
        source: z.enum(['competition', 'model']),
        intercept: z.number(),
        home_advantage: z.number(),
        yellow_per_match: z.object({ home: z.number(), away: z.number() }),
        straight_red_per_match: z.object({ home: z.number(), away: z.number() }),
        shots: z.object({ conversion: z.number(), on_target_share: z.number() }),
      })
      .optional(),
  }),
  result: resultSchema.extend({ calibrated: z.boolean() }),
  goals: z.object({
    expected: z.object({ home: z.number(), away: z.number(), total: z.number() }),
    score_grid: scoreGridSchema,
    distributions: z.object({
      home: z.array(probability).length(GRID_SIZE),
      away: z.array(probability).length(GRID_SIZE),
      total: z.array(probability).length(GRID_SIZE),
    }),
  }),
  markets: z.object({
    scorelines: z.array(z.object({ home: z.number().int(), away: z.number().int(), probability })),
    totals: z.array(z.object({ line: z.number(), over: probability, under: probability })),
    btts: z.object({ yes: probability, no: probability }),
    double_chance: z.object({
      home_or_draw: probability,
      home_or_away: probability,
      draw_or_away: probability,
    }),
    handicaps: z.array(
      z.object({ team: teamKey, line: z.number(), win: probability, push: probability, lose: probability }),
    ),
  }),
  half_time: z.object({
    result: resultSchema,
    score_grid: scoreGridSchema,
    ht_ft: z.object(
      Object.fromEntries(HT_FT_KEYS.map((key) => [key, probability])) as Record<
        (typeof HT_FT_KEYS)[number],
        typeof probability
      >,
    ),
  }),
  timeline: z.object({
    /** STEPS before a match; the steps from the state's on in an in-play run. */
    steps: z.number().int().min(1).max(STEPS),
    minute_label: z.array(z.string()).min(1).max(STEPS),
    home: z.object({ goals: stepSeries, cards: stepSeries }),
    away: z.object({ goals: stepSeries, cards: stepSeries }),
    score_state: z.object({ home_leading: stepSeries, level: stepSeries, away_leading: stepSeries }),
  }),
  goal_events: z.object({
    first_goal: z.object({ home: probability, away: probability, none: probability }),
    /** Unconditional: the bands and first_goal.none sum to 1. */
    first_goal_minute: z.array(z.object({ from: z.number().int(), to: z.number().int(), probability })),
    /** Players with a chance of scoring first, most likely first; with first_goal.none they sum to 1. */
    first_scorer: z.array(z.object({ player_id: z.number().int(), team: teamKey, probability })),
    comeback: z.object({
      home_win_from_behind: probability,
      away_win_from_behind: probability,
      draw_from_behind: probability,
    }),
  }),
  players: z.array(
    z.object({
      player_id: z.number().int(),
      name: z.string(),
      team: teamKey,
      position: z.enum(PLAYER_POSITIONS).nullable(),
      starts: probability,
      /** Probability of playing at all (starting or coming on). */
      appears: probability,
      expected_minutes: z.number().min(0),
      probabilities: z.object({
        anytime_scorer: probability,
        two_plus_goals: probability,
        hat_trick: probability,
        first_scorer: probability,
        assist: probability,
        goal_or_assist: probability,
        yellow_card: probability,
        red_card: probability,
      }),
      box_score: z.object({
        goals: z.number().min(0),
        assists: z.number().min(0),
        shots: z.number().min(0),
        shots_on_target: z.number().min(0),
        yellow_cards: z.number().min(0),
        red_cards: z.number().min(0),
      }),
    }),
  ),
  lineups: z.object({ home: sideLineupSchema, away: sideLineupSchema }),
  samples: z.array(
    z.object({
      index: z.number().int(),
      score: z.object({ home: z.number().int(), away: z.number().int() }),
      half_time: z.object({ home: z.number().int(), away: z.number().int() }),
      events: z.array(sampleEventSchema),
    }),
  ),
  uncertainty: z.object({
    draws: z.number().int(),
    standard_error: z.object({
      home_win: z.number(),
      draw: z.number(),
      away_win: z.number(),
      expected_goals_home: z.number(),
      expected_goals_away: z.number(),
    }),
    // A record, not an object: the backtest's metrics keep their order with `status` after them.
    model_accuracy: z
      .record(z.string(), z.unknown())
      .refine((value) => typeof value.status === 'string', 'model_accuracy.status must be a string')
      .describe('The backtest metrics of the model and its `status`.'),
  }),
  model: z.object({ public_name: z.string(), version: z.string(), status: z.string() }),
  timing: z.object({
    engine: z.enum(['gpu', 'cpu']),
    backend: z.string(),
    queued_ms: z.number().min(0),
    run_ms: z.number().min(0),
  }),
  /** A run fitted to the market (docs/api.md §2.3): what the fit found. Absent for an unfitted run. */
  calibration: calibrationSectionSchema.optional(),
  /** The run's prices against the request's offered_odds, keyed as they were. Absent without offered_odds. */
  value: valueSectionSchema.optional(),
  /** The in-play state the run started from (docs/api.md §2.3). Absent for a pre-match run. */
  state: stateSectionSchema.optional(),
});
export type SimulationDocument = z.infer<typeof simulationDocumentSchema>;

/** The figures of a document that its fixture's summary shows (docs/api.md §2.2). */
export interface DocumentSummary {
  homeWin: number;
  draw: number;
  awayWin: number;
  expectedGoalsHome: number;
  expectedGoalsAway: number;
}

export function documentSummary(document: unknown): DocumentSummary {
  const { result, goals } = document as {
    result: { home_win: number; draw: number; away_win: number };
    goals: { expected: { home: number; away: number } };
  };
  return {
    homeWin: result.home_win,
    draw: result.draw,
    awayWin: result.away_win,
    expectedGoalsHome: goals.expected.home,
    expectedGoalsAway: goals.expected.away,
  };
}

/**
 * The document as the wire carries it: through its schema, which fixes the order of its fields. Results
 * store this text, and responses splice it in unchanged.
 */
export function documentWireText(document: unknown): string {
  return JSON.stringify(simulationDocumentSchema.parse(document));
}
