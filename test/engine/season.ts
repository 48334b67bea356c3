// A simulated season of plausible teams, summarised in the reference figures of the football data
// (test/football-data/README.md).

import { simulateRange } from '../../fallback/engine.js';
import { compileFixture } from '../../src/engine/compile.js';
import {
  AWAY,
  C_FT_GRID,
  C_HT_FT,
  C_HT_GRID,
  C_TEAM,
  COUNTER_WORDS,
  finalizeCounters,
  GRID_SIZE,
  HOME,
  SHOT_COUNTER_UNIT,
  TEAM_COUNTERS,
  TEAM_GOALS,
  TEAM_REDS,
  TEAM_SHOTS,
  TEAM_SHOTS_ON_TARGET,
  TEAM_YELLOWS,
} from '../../src/engine-contract/layout.js';
import type { ModelParams } from '../../src/engine-contract/model-params.js';
import { plausibleFixture, seededUniform } from './plausible-teams.js';

const RATING_SD = 0.25;

export interface SeasonFigures {
  goalsPerMatch: number;
  homeGoals: number;
  awayGoals: number;
  homeWin: number;
  draw: number;
  awayWin: number;
  over25: number;
  btts: number;
  nilNil: number;
  firstHalfShare: number;
  /** Outcomes for the side leading at half-time. */
  halfTimeLeaderWins: number;
  halfTimeLeaderDraws: number;
  halfTimeLeaderLoses: number;
  yellowsPerMatch: number;
  redsPerMatch: number;
  shotsPerMatch: number;
  onTargetShare: number;
  conversion: number;
}

/**
 * Every pairing of `teams` teams home and away, `drawsPerFixture` draws each. Ratings: attack and
 * defence with standard deviation RATING_SD, roughly the spread of fitted top-flight ratings.
 */
export function simulateSeason(params: ModelParams, teams: number, drawsPerFixture: number): SeasonFigures {
  const uniform = seededUniform(20_261_121);
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  // Standardised draws: a league's ratings are centred, and a few teams must still have the spread.
  const standardised = () => {
    const values = Array.from({ length: teams }, normal);
    const mean = values.reduce((a, b) => a + b, 0) / teams;
    const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / teams);
    return values.map((value) => (RATING_SD * (value - mean)) / sd);
  };
  const attack = standardised();
  const defence = standardised();
  const ratings = attack.map((_, i) => ({ teamId: i + 1, attack: attack[i]!, defence: defence[i]! }));
  const total = new Float64Array(COUNTER_WORDS);
  let fixtures = 0;
  for (const home of ratings) {
    for (const away of ratings) {
      if (home === away) continue;
      const compiled = compileFixture(plausibleFixture(fixtures + 1, home, away), params);
      const counters = new Uint32Array(COUNTER_WORDS);
      simulateRange(compiled, { lo: fixtures, hi: 0x5ea5 }, 0, drawsPerFixture, counters);
      finalizeCounters(counters);
      for (let i = 0; i < COUNTER_WORDS; i++) total[i]! += counters[i]!;
      fixtures++;
    }
  }
  const draws = fixtures * drawsPerFixture;
  const team = (side: number, counter: number) => total[C_TEAM + side * TEAM_COUNTERS + counter]! / draws;
  let homeWin = 0;
  let draw = 0;
  let over25 = 0;
  let btts = 0;
  for (let h = 0; h < GRID_SIZE; h++) {
    for (let a = 0; a < GRID_SIZE; a++) {
      const q = total[C_FT_GRID + h * GRID_SIZE + a]! / draws;
      if (h > a) homeWin += q;
      if (h === a) draw += q;
      if (h + a > 2) over25 += q;
      if (h > 0 && a > 0) btts += q;
    }
  }
  let firstHalfGoals = 0;
  for (let h = 0; h < GRID_SIZE; h++) {
    for (let a = 0; a < GRID_SIZE; a++)
      firstHalfGoals += ((h + a) * total[C_HT_GRID + h * GRID_SIZE + a]!) / draws;
  }
  // ht_ft index = ht result * 3 + ft result; results 0 home, 1 draw, 2 away.
  const htft = (ht: number, ft: number) => total[C_HT_FT + ht * 3 + ft]!;
  const leaders = htft(0, 0) + htft(0, 1) + htft(0, 2) + htft(2, 0) + htft(2, 1) + htft(2, 2);
  const goals = team(HOME, TEAM_GOALS) + team(AWAY, TEAM_GOALS);
  // Shot counters count 1 / SHOT_COUNTER_UNIT shots (layout.ts "Shot tables").
  const shots = (team(HOME, TEAM_SHOTS) + team(AWAY, TEAM_SHOTS)) / SHOT_COUNTER_UNIT;
  return {
    goalsPerMatch: goals,
    homeGoals: team(HOME, TEAM_GOALS),
    awayGoals: team(AWAY, TEAM_GOALS),
    homeWin,
    draw,
    awayWin: 1 - homeWin - draw,
    over25,
    btts,
    nilNil: total[C_FT_GRID]! / draws,
    firstHalfShare: firstHalfGoals / goals,
    halfTimeLeaderWins: (htft(0, 0) + htft(2, 2)) / leaders,
    halfTimeLeaderDraws: (htft(0, 1) + htft(2, 1)) / leaders,
    halfTimeLeaderLoses: (htft(0, 2) + htft(2, 0)) / leaders,
    yellowsPerMatch: team(HOME, TEAM_YELLOWS) + team(AWAY, TEAM_YELLOWS),
    redsPerMatch: team(HOME, TEAM_REDS) + team(AWAY, TEAM_REDS),
    shotsPerMatch: shots,
    onTargetShare:
      (team(HOME, TEAM_SHOTS_ON_TARGET) + team(AWAY, TEAM_SHOTS_ON_TARGET)) / SHOT_COUNTER_UNIT / shots,
    conversion: goals / shots,
  };
}
