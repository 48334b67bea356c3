// The GPU parity cases: runs of the match kernel whose counters must equal the CPU engine's
// (fallback/engine.ts simulateRange) bit for bit. One module for both users: the vitest suite
// (test/gpu/match-parity.test.ts) and `matchsim gpu-check` (this folder), which runs the same cases on a
// GPU host without vitest; neither the runner nor the engines need them, so they live here. Fixtures cover predicted, announced, custom and unlabelled
// lineups, lopsided ratings, a card-heavy model and a run fitted to market prices; draw counts that are not multiples of the workgroup
// size, draw offsets, 2-D grids, packed dispatches and split draw ranges.
import { simulateRange } from '../../../fallback/engine.js';
import { MATCH_WORKGROUP_SIZE, type MatchRun } from '../../../gpu/match-dispatch.js';
import { compileFixture } from '../../engine/compile.js';
import { COUNTER_WORDS, type CompiledFixture, type EngineSeed } from '../../engine-contract/layout.js';
import type { MatchInputs, SideInputs } from '../../engine-contract/match-inputs.js';
import { defaultModelParams, type ModelParams } from '../../engine-contract/model-params.js';
import { randomInPlayState } from './in-play-states.js';
import { plausibleFixture, seededUniform, withAnnouncedLineup } from './plausible-teams.js';

/** A run of a compiled fixture, with the tables the kernel reads. */
export interface ParityRun extends MatchRun {
  tables: CompiledFixture;
}

export interface ParityCase {
  name: string;
  /** The runs of one dispatch. */
  runs: ParityRun[];
  /** Workgroups per grid row, narrowed to exercise the kernel's 2-D addressing at small draw counts. */
  gridWidth?: number;
  /**
   * The runs are consecutive draw ranges of one fixture and seed: their counters summed must equal the
   * CPU's over the whole range (`[0, 300)` = `[0, 170)` + `[170, 300)`).
   */
  summed?: boolean;
}

/** Raw CPU counters (score states still difference-encoded), as the kernel returns them. */
export function cpuCounters(
  tables: CompiledFixture,
  seed: EngineSeed,
  firstDraw: number,
  drawCount: number,
): Uint32Array {
  const counters = new Uint32Array(COUNTER_WORDS);
  simulateRange(tables, seed, firstDraw, firstDraw + drawCount, counters);
  return counters;
}

/** No labelled positions: predicted XIs are 11 picks over the whole squad. */
function unlabelled(side: SideInputs): SideInputs {
  return { ...side, players: side.players.map((player) => ({ ...player, position: null })) };
}

/** A custom XI with a short bench that starts with a goalkeeper (skipped when substituting). */
function customLineup(side: SideInputs): SideInputs {
  const announced = withAnnouncedLineup(side).lineup;
  const keeperOnBench = side.players.find(
    (player) => player.position === 'goalkeeper' && !announced.xi.includes(player.player_id),
  );
  const bench = [
    keeperOnBench!.player_id,
    ...announced.bench.filter((id) => id !== keeperOnBench!.player_id),
  ];
  return { ...side, lineup: { ...announced, source: 'custom', bench: bench.slice(0, 4) } };
}

/** Cards, red cards and substitutions far more often than in football, to exercise those paths. */
export const eventfulParams: ModelParams = {
  ...defaultModelParams,
  cards: {
    ...defaultModelParams.cards,
    yellow_per_match: { home: 7, away: 8 },
    straight_red_per_match: { home: 1.5, away: 2 },
  },
};

function fixture(id: number, homeAttack: number, awayAttack: number): MatchInputs {
  return plausibleFixture(
    id,
    { teamId: 2 * id, attack: homeAttack, defence: -homeAttack / 2 },
    { teamId: 2 * id + 1, attack: awayAttack, defence: -awayAttack / 2 },
  );
}

export interface ParityFixtures {
  predicted: CompiledFixture;
  announced: CompiledFixture;
  mixed: CompiledFixture;
  unlabelled: CompiledFixture;
  mismatch: CompiledFixture;
  eventful: CompiledFixture;
  /** A run fitted to market prices (src/engine/market-fit.ts): its base goals the fit's, not the ratings'. */
  fitted: CompiledFixture;
  /**
   * In-play runs (match inputs' from_state, docs/model.md "In play"): announced lineups at minute 67
   * with substitutions, a player sent off and players booked; predicted lineups in first-half added time
   * with a red card by count only; the eventful model from the first step and in the last added minute.
   */
  inPlaySecondHalf: CompiledFixture;
  inPlayAddedTime: CompiledFixture;
  inPlayKickOff: CompiledFixture;
  inPlayLastStep: CompiledFixture;
  /** Random consistent in-play states (in-play-states.ts) of the lineup kinds above, cards frequent. */
  inPlayRandom: CompiledFixture[];
}

/** Announced lineups at minute 67, 1-0: two home substitutions, an away player sent off, bookings. */
function secondHalfState(inputs: MatchInputs): MatchInputs {
  const home = withAnnouncedLineup(inputs.home);
  const away = withAnnouncedLineup(inputs.away);
  const [homeXi, awayXi] = [home.lineup.xi, away.lineup.xi];
  return {
    ...inputs,
    home,
    away,
    from_state: {
      minute: '67',
      score: { home: 1, away: 0 },
      sent_off: { home: [], away: [awayXi[4]!] },
      substitutions: {
        home: [
          { off: homeXi[9]!, on: home.lineup.bench[1]! },
          { off: homeXi[10]!, on: home.lineup.bench[3]! },
        ],
        away: [{ off: awayXi[8]!, on: away.lineup.bench[0]! }],
      },
      booked: { home: [homeXi[2]!, home.lineup.bench[1]!], away: [awayXi[3]!, awayXi[4]!] },
      half_time: { home: 0, away: 0 },
    },
  };
}

/** The compiled fixtures of the cases (compiling takes a few milliseconds each). */
export function parityFixtures(): ParityFixtures {
  const even = fixture(1, 0, 0);
  const mismatch = fixture(2, 1.2, -0.8); // many home goals: the 10+ cells and goal squares
  const lineupKinds = fixture(3, 0.3, 0.1);
  return {
    predicted: compileFixture(even, defaultModelParams),
    announced: compileFixture(
      {
        ...lineupKinds,
        home: withAnnouncedLineup(lineupKinds.home),
        away: withAnnouncedLineup(lineupKinds.away),
      },
      defaultModelParams,
    ),
    mixed: compileFixture({ ...lineupKinds, home: customLineup(lineupKinds.home) }, defaultModelParams),
    unlabelled: compileFixture(
      { ...even, home: unlabelled(even.home), away: unlabelled(even.away) },
      defaultModelParams,
    ),
    mismatch: compileFixture(mismatch, defaultModelParams),
    eventful: compileFixture({ ...lineupKinds, away: customLineup(lineupKinds.away) }, eventfulParams),
    fitted: compileFixture(
      {
        ...lineupKinds,
        market: {
          odds: { '1x2': [1.7, 3.9, 5.2], 'total_2.5': [1.8, 2.05] },
          margin_method: 'shin',
          fit: 'exact',
          targets: { home_win: 0.57, draw: 0.24, away_win: 0.19, over_2_5: 0.53 },
        },
      },
      defaultModelParams,
    ),
    ...inPlayFixtures(even, lineupKinds),
  };
}

/** The in-play fixtures (see ParityFixtures). */
function inPlayFixtures(
  even: MatchInputs,
  lineupKinds: MatchInputs,
): Pick<
  ParityFixtures,
  'inPlaySecondHalf' | 'inPlayAddedTime' | 'inPlayKickOff' | 'inPlayLastStep' | 'inPlayRandom'
> {
  const eventful = { ...lineupKinds, away: customLineup(lineupKinds.away) };
  return {
    inPlaySecondHalf: compileFixture(secondHalfState(lineupKinds), defaultModelParams),
    inPlayAddedTime: compileFixture(
      {
        ...even,
        from_state: { minute: '45+2', score: { home: 0, away: 2 }, red_cards: { home: 1, away: 0 } },
      },
      defaultModelParams,
    ),
    inPlayKickOff: compileFixture(
      { ...eventful, from_state: { minute: '1', score: { home: 0, away: 0 } } },
      eventfulParams,
    ),
    inPlayRandom: Array.from({ length: 8 }, (_, i) => {
      const uniform = seededUniform(5200 + i);
      const inputs = [eventful, lineupKinds, even, { ...even, home: withAnnouncedLineup(even.home) }][i % 4]!;
      return compileFixture({ ...inputs, from_state: randomInPlayState(inputs, uniform) }, eventfulParams);
    }),
    inPlayLastStep: compileFixture(
      {
        ...secondHalfState(eventful),
        from_state: {
          ...secondHalfState(eventful).from_state!,
          minute: '90+10',
          score: { home: 2, away: 2 },
        },
      },
      eventfulParams,
    ),
  };
}

function singleCases(f: ParityFixtures): ParityCase[] {
  const single: [string, CompiledFixture, EngineSeed, number, number][] = [
    ['predicted lineups', f.predicted, { lo: 0x12345678, hi: 0x9abcdef0 }, 0, 1000],
    ['announced lineups, from draw 5', f.announced, { lo: 7, hi: 0 }, 5, 777],
    ['custom home lineup, predicted away', f.mixed, { lo: 0xffffffff, hi: 0xffffffff }, 0, 321],
    ['unlabelled goalkeepers', f.unlabelled, { lo: 1, hi: 0 }, 0, MATCH_WORKGROUP_SIZE + 1],
    ['lopsided ratings', f.mismatch, { lo: 99, hi: 3 }, 1_000_000, 300],
    ['frequent cards and red cards', f.eventful, { lo: 5, hi: 8 }, 0, 700],
    ['a single draw', f.predicted, { lo: 2, hi: 2 }, 41, 1],
    ['fitted to market prices', f.fitted, { lo: 53, hi: 0x53 }, 0, 900],
    [
      'in play at 67, substitutions, a player sent off, bookings',
      f.inPlaySecondHalf,
      { lo: 52, hi: 67 },
      0,
      1000,
    ],
    [
      'in play at 45+2, predicted lineups, a red card by count',
      f.inPlayAddedTime,
      { lo: 52, hi: 47 },
      3,
      800,
    ],
    ['in play from the first step, frequent cards', f.inPlayKickOff, { lo: 52, hi: 1 }, 0, 700],
    ['in play at 90+10, frequent cards', f.inPlayLastStep, { lo: 52, hi: 110 }, 0, 600],
  ];
  return single.map(([name, tables, seed, firstDraw, drawCount]) => ({
    name: `${name}: ${drawCount} draws`,
    runs: [{ tables, seed, firstDraw, drawCount }],
  }));
}

function gridCases(f: ParityFixtures): ParityCase[] {
  return [
    {
      name: '2-D grid: 16 workgroups, a full 4 x 4 grid',
      gridWidth: 4,
      runs: [
        { tables: f.predicted, seed: { lo: 31, hi: 0 }, firstDraw: 0, drawCount: 16 * MATCH_WORKGROUP_SIZE },
      ],
    },
    {
      // 2 + 9 + 6 = 17 workgroups: a 4 x 5 grid whose last three workgroups have no run.
      name: '2-D grid: 17 workgroups in rows of 4, the last row overhanging',
      gridWidth: 4,
      runs: [
        { tables: f.announced, seed: { lo: 32, hi: 0 }, firstDraw: 0, drawCount: 100 },
        { tables: f.eventful, seed: { lo: 33, hi: 0 }, firstDraw: 0, drawCount: 9 * MATCH_WORKGROUP_SIZE },
        { tables: f.mixed, seed: { lo: 34, hi: 0 }, firstDraw: 0, drawCount: 5 * MATCH_WORKGROUP_SIZE + 1 },
      ],
    },
  ];
}

function packedCases(f: ParityFixtures): ParityCase[] {
  const seeded = [f.eventful, f.mismatch, f.mixed, f.unlabelled];
  const seed = { lo: 21, hi: 22 };
  return [
    {
      name: 'a batch of fixtures packed into one dispatch',
      runs: [
        { tables: f.predicted, seed: { lo: 11, hi: 0 }, firstDraw: 0, drawCount: 63 },
        { tables: f.announced, seed: { lo: 12, hi: 0 }, firstDraw: 0, drawCount: 64 },
        { tables: f.mismatch, seed: { lo: 13, hi: 0 }, firstDraw: 0, drawCount: 65 },
        { tables: f.eventful, seed: { lo: 14, hi: 0 }, firstDraw: 0, drawCount: 200 },
        { tables: f.predicted, seed: { lo: 15, hi: 0 }, firstDraw: 0, drawCount: 1 },
        { tables: f.unlabelled, seed: { lo: 16, hi: 1 }, firstDraw: 3, drawCount: 150 },
      ],
    },
    {
      name: 'sixteen seeds across the 32-bit range, each its own run in one dispatch',
      runs: Array.from({ length: 16 }, (_, i) => ({
        tables: seeded[i % seeded.length]!,
        // Spread over both words by a multiplicative hash of i (Knuth's 2654435761).
        seed: { lo: Math.imul(i + 1, 0x9e3779b1) >>> 0, hi: Math.imul(i + 7, 0x85ebca6b) >>> 0 },
        firstDraw: i * 1000,
        drawCount: 40 + 7 * i,
      })),
    },
    {
      name: 'eight random in-play states packed into one dispatch',
      runs: f.inPlayRandom.map((tables, i) => ({
        tables,
        seed: { lo: 0x52 + i, hi: 0x5eed },
        firstDraw: 0,
        drawCount: 100 + 37 * i,
      })),
    },
    {
      name: 'draw ranges add up: [0, 300) equals [0, 170) + [170, 300)',
      summed: true,
      runs: [
        { tables: f.eventful, seed, firstDraw: 0, drawCount: 170 },
        { tables: f.eventful, seed, firstDraw: 170, drawCount: 130 },
      ],
    },
  ];
}

/** Every parity case, in the order the suite and gpu-check run them. */
export function parityCases(fixtures: ParityFixtures = parityFixtures()): ParityCase[] {
  return [...singleCases(fixtures), ...packedCases(fixtures), ...gridCases(fixtures)];
}

/** What the kernel's counters must be, one array per run (one in all for a summed case). */
export function expectedCounters(parityCase: ParityCase): Uint32Array[] {
  if (!parityCase.summed) {
    return parityCase.runs.map((run) => cpuCounters(run.tables, run.seed, run.firstDraw, run.drawCount));
  }
  const first = parityCase.runs[0]!;
  const draws = parityCase.runs.reduce((sum, run) => sum + run.drawCount, 0);
  return [cpuCounters(first.tables, first.seed, first.firstDraw, draws)];
}

/** The kernel's counters in the shape of expectedCounters (summed over the runs for a summed case). */
export function comparableCounters(parityCase: ParityCase, counters: readonly Uint32Array[]): Uint32Array[] {
  if (!parityCase.summed) return [...counters];
  const summed = new Uint32Array(COUNTER_WORDS);
  for (const set of counters) {
    for (let i = 0; i < COUNTER_WORDS; i++) summed[i] = (summed[i]! + set[i]!) >>> 0;
  }
  return [summed];
}

/** Counter words that differ between two sets of counter arrays (0: bit for bit equal). */
export function differingWords(actual: readonly Uint32Array[], expected: readonly Uint32Array[]): number {
  if (actual.length !== expected.length) return Number.POSITIVE_INFINITY;
  let differing = 0;
  actual.forEach((set, run) => {
    const other = expected[run]!;
    for (let i = 0; i < COUNTER_WORDS; i++) if (set[i] !== other[i]) differing++;
  });
  return differing;
}
