// A side's lineup and player weights in the fixture table (compile.ts compileFixture): who starts, who
// comes on, and each player's share of goals, assists, shots and cards, as integer sampling tables; and
// the strength bucket of an XI as the engines read it from there (the in-play state and the market fit).
import * as layout from '../engine-contract/layout.js';
import {
  type PlayerProfile,
  PREDICTED_BENCH_SIZE,
  type SideInputs,
} from '../engine-contract/match-inputs.js';

/** Below this a start probability is treated as zero (it would round to no sampling ticks anyway). */
const MIN_START_PROBABILITY = 1e-6;
const OUTFIELD_ORDER: Record<string, number> = { defender: 0, midfielder: 1, attacker: 2 };
/**
 * Strength buckets: the XI's summed goal weight over the squad's expected sum, cut at these ratios;
 * each bucket's rate multiplier is its representative ratio ^ lineup_strength_elasticity.
 */
const STRENGTH_EDGE_RATIOS = [0.8, 0.93, 1.07, 1.2] as const;

/**
 * The strength bucket of an XI whose goal weights sum to `strength`, as the engines read it (setUpDraw:
 * the edges at or below the sum), from the side's edges at `base` in the fixture table.
 */
export function strengthBucketOf(fixture: Uint32Array, base: number, strength: number): number {
  let bucket = 0;
  while (
    bucket < layout.STRENGTH_BUCKETS - 1 &&
    fixture[base + layout.S_STRENGTH_EDGES + bucket]! <= strength
  )
    bucket++;
  return bucket;
}

/** The summed goal weight of the side's fixed XI (S_XI) at `base` in the fixture table. */
export function fixedXiStrength(fixture: Uint32Array, base: number): number {
  let strength = 0;
  for (let i = 0; i < layout.XI_SIZE; i++)
    strength += fixture[base + layout.S_GOAL_WEIGHT + fixture[base + layout.S_XI + i]!]!;
  return strength;
}

export function compileSide(
  fixture: Uint32Array,
  base: number,
  side: SideInputs,
  bookedFactor: number,
): void {
  const players = side.players;
  fixture[base + layout.S_PLAYER_COUNT] = players.length;
  const slotOf = new Map(players.map((p, slot) => [p.player_id, slot]));

  const goal = quantizeWeights(players.map((p) => p.goal_share));
  const assist = quantizeWeights(players.map((p) => p.assist_share));
  const shot = quantizeWeights(players.map((p) => p.shot_share));
  const card = quantizeWeights(players.map((p) => p.card_share));
  players.forEach((player, slot) => {
    const keeper = player.position === 'goalkeeper';
    fixture[base + layout.S_GOAL_WEIGHT + slot] = goal[slot]!;
    fixture[base + layout.S_ASSIST_WEIGHT + slot] = assist[slot]!;
    fixture[base + layout.S_SHOT_WEIGHT + slot] = shot[slot]!;
    fixture[base + layout.S_CARD_WEIGHT + slot] = card[slot]!;
    // A player expected to play 60 minutes is taken off far more often than one expected to play 90.
    fixture[base + layout.S_SUB_OFF_WEIGHT + slot] = keeper ? 0 : Math.round(96 - player.typical_minutes);
    fixture[base + layout.S_IS_KEEPER + slot] = keeper ? 1 : 0;
    fixture[base + layout.S_BOOKED_CARD_WEIGHT + slot] = Math.round(card[slot]! * bookedFactor);
  });

  // The predicted-XI sampling plan; also the baseline of the strength buckets for fixed lineups.
  const plan = predictedPlan(players);
  fixture[base + layout.S_KEEPER_COUNT] = plan.keepers.length;
  writeSystematic(fixture, base + layout.S_KEEPER_ORDER, base + layout.S_KEEPER_CUM, plan.keepers);
  fixture[base + layout.S_OUTFIELD_COUNT] = plan.outfield.length;
  fixture[base + layout.S_OUTFIELD_PICKS] = plan.outfieldPicks;
  writeSystematic(fixture, base + layout.S_OUTFIELD_ORDER, base + layout.S_OUTFIELD_CUM, plan.outfield);

  let expectedStrength = 0;
  for (const { slot, inclusion } of [...plan.keepers, ...plan.outfield]) {
    expectedStrength += inclusion * goal[slot]!;
  }
  STRENGTH_EDGE_RATIOS.forEach((ratio, i) => {
    fixture[base + layout.S_STRENGTH_EDGES + i] = Math.ceil(expectedStrength * ratio);
  });

  if (side.lineup.source === 'predicted') {
    fixture[base + layout.S_LINEUP_MODE] =
      plan.keepers.length > 0 ? layout.LINEUP_MODE_PREDICTED : layout.LINEUP_MODE_PREDICTED_UNLABELLED;
    const order = players
      .map((player, slot) => ({ player, slot }))
      .filter(({ player }) => player.start_probability >= MIN_START_PROBABILITY)
      .sort((a, b) => b.player.start_probability - a.player.start_probability || a.slot - b.slot);
    fixture[base + layout.S_BENCH_COUNT] = order.length;
    fixture[base + layout.S_BENCH_LIMIT] = PREDICTED_BENCH_SIZE;
    order.forEach(({ slot }, i) => {
      fixture[base + layout.S_BENCH_ORDER + i] = slot;
    });
  } else {
    fixture[base + layout.S_LINEUP_MODE] = layout.LINEUP_MODE_FIXED;
    side.lineup.xi.forEach((id, i) => {
      fixture[base + layout.S_XI + i] = slotOf.get(id)!;
    });
    fixture[base + layout.S_BENCH_COUNT] = side.lineup.bench.length;
    fixture[base + layout.S_BENCH_LIMIT] = side.lineup.bench.length;
    side.lineup.bench.forEach((id, i) => {
      fixture[base + layout.S_BENCH_ORDER + i] = slotOf.get(id)!;
    });
  }
}

/** Shares as integers 0..WEIGHT_MAX relative to the side's largest; a positive share never rounds to 0. */
function quantizeWeights(shares: readonly number[]): number[] {
  const max = Math.max(0, ...shares);
  if (max === 0) return shares.map(() => 1); // no information: everyone equally likely
  return shares.map((s) => (s > 0 ? Math.max(1, Math.round((s / max) * layout.WEIGHT_MAX)) : 0));
}

interface Candidate {
  slot: number;
  /** Probability of being in the XI under the sampling plan. */
  inclusion: number;
  ticks: number;
}

interface PredictedPlan {
  keepers: Candidate[];
  outfield: Candidate[];
  outfieldPicks: number;
}

/**
 * One goalkeeper from the labelled goalkeepers, ten outfield players from the rest, each with inclusion
 * probability proportional to its start probability, capped at 1 and summing to the picks. Without a
 * labelled goalkeeper (or too few outfield players) the XI is 11 picks over the whole squad.
 */
function predictedPlan(players: readonly PlayerProfile[]): PredictedPlan {
  const all = players.map((player, slot) => ({ player, slot }));
  const keepers = all.filter(({ player }) => player.position === 'goalkeeper');
  const outfield = all.filter(({ player }) => player.position !== 'goalkeeper');
  const byLine = (a: (typeof all)[number], b: (typeof all)[number]) =>
    (OUTFIELD_ORDER[a.player.position ?? ''] ?? 3) - (OUTFIELD_ORDER[b.player.position ?? ''] ?? 3) ||
    b.player.start_probability - a.player.start_probability ||
    a.slot - b.slot;
  if (keepers.length === 0 || outfield.length < layout.XI_SIZE - 1) {
    return {
      keepers: [],
      outfield: inclusionPlan([...all].sort(byLine), layout.XI_SIZE),
      outfieldPicks: layout.XI_SIZE,
    };
  }
  return {
    keepers: inclusionPlan(keepers, 1),
    outfield: inclusionPlan([...outfield].sort(byLine), layout.XI_SIZE - 1),
    outfieldPicks: layout.XI_SIZE - 1,
  };
}

function inclusionPlan(candidates: { player: PlayerProfile; slot: number }[], picks: number): Candidate[] {
  // Start probabilities below MIN_START_PROBABILITY count as none; players with no chance still get a
  // sliver when the squad cannot otherwise fill the picks.
  const chance = (player: PlayerProfile) =>
    player.start_probability >= MIN_START_PROBABILITY ? player.start_probability : 0;
  const positive = candidates.filter(({ player }) => chance(player) > 0).length;
  const raw = candidates.map(
    ({ player }) => chance(player) || (positive < picks ? MIN_START_PROBABILITY : 0),
  );
  const inclusion = capAtOne(raw, picks);
  const ticks = inclusion.map((p) => Math.round(p * layout.SAMPLING_UNIT));
  // Make the ticks sum to exactly picks * SAMPLING_UNIT without any interval passing one unit.
  let drift = picks * layout.SAMPLING_UNIT - ticks.reduce((a, b) => a + b, 0);
  let idle = 0; // candidates visited since the last change: a full lap without one means no room
  for (let i = 0; drift !== 0 && idle < ticks.length; i = (i + 1) % ticks.length) {
    idle++;
    if (drift > 0 && ticks[i]! < layout.SAMPLING_UNIT && raw[i]! > 0) {
      ticks[i]!++;
      drift--;
      idle = 0;
    } else if (drift < 0 && ticks[i]! > 0) {
      ticks[i]!--;
      drift++;
      idle = 0;
    }
  }
  if (drift !== 0) throw new RangeError(`cannot pick ${picks} starters from ${candidates.length} candidates`);
  return candidates.map(({ slot }, i) => ({
    slot,
    inclusion: ticks[i]! / layout.SAMPLING_UNIT,
    ticks: ticks[i]!,
  }));
}

/** Scales weights to sum to `total` with none above 1 (iteratively fixing the capped ones). */
function capAtOne(weights: readonly number[], total: number): number[] {
  const result = [...weights];
  const capped = new Array<boolean>(weights.length).fill(false);
  for (let round = 0; round < weights.length + 1; round++) {
    let free = 0;
    let fixed = 0;
    for (let i = 0; i < weights.length; i++) {
      if (capped[i]) fixed += 1;
      else free += weights[i]!;
    }
    if (free <= 0) break;
    const scale = (total - fixed) / free;
    let changed = false;
    weights.forEach((w, i) => {
      if (capped[i]) return;
      const scaled = w * scale;
      if (scaled > 1) {
        capped[i] = true;
        changed = true;
      }
      result[i] = Math.min(1, scaled);
    });
    if (!changed) break;
  }
  return result.map((w, i) => (capped[i] ? 1 : w));
}

function writeSystematic(
  fixture: Uint32Array,
  orderAt: number,
  cumAt: number,
  candidates: Candidate[],
): void {
  let cumulative = 0;
  candidates.forEach(({ slot, ticks }, i) => {
    cumulative += ticks;
    fixture[orderAt + i] = slot;
    fixture[cumAt + i] = cumulative;
  });
}
