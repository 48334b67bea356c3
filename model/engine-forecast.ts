// Forecasts from the real engine (fallback/: compile step plus the per-draw loop on worker threads):
// the score grid, half-time/full-time table and box-score means of one fixture, from its counters.

import type { CpuEngine } from '../fallback/cpu-engine.js';
import { compileFixture } from '../src/engine/compile.js';
import {
  C_FT_GRID,
  C_HT_FT,
  C_HT_GRID,
  C_TEAM,
  GRID_SIZE,
  SHOT_COUNTER_UNIT,
  TEAM_COUNTERS,
  TEAM_GOALS,
  TEAM_REDS,
  TEAM_SHOTS,
  TEAM_SHOTS_ON_TARGET,
  TEAM_YELLOWS,
} from '../src/engine-contract/layout.js';
import type { CompetitionProfile } from '../src/engine-contract/match-inputs.js';
import type { ModelParams } from '../src/engine-contract/model-params.js';
import { referenceFixture } from './reference-fixture.js';

export interface SideBoxScore {
  goals: number;
  shots: number;
  shotsOnTarget: number;
  yellowCards: number;
  redCards: number;
}

export interface EngineForecast {
  /** GRID_SIZE² cells, last row/column = 10 or more. */
  fullTime: Float64Array;
  halfTime: Float64Array;
  htFt: Float64Array;
  home: SideBoxScore;
  away: SideBoxScore;
  draws: number;
}

export async function engineForecast(
  engine: CpuEngine,
  params: ModelParams,
  rated: { home: number; away: number },
  options: { draws: number; seed: number; profile?: CompetitionProfile | undefined },
): Promise<EngineForecast> {
  const fixture = referenceFixture(options.seed, rated.home, rated.away, options.profile);
  const compiled = compileFixture(fixture, params);
  const { counts } = await engine.run(compiled, {
    draws: options.draws,
    seed: { lo: options.seed >>> 0, hi: 0x5eed },
  });
  const n = options.draws;
  const share = (offset: number, length: number) => {
    const out = new Float64Array(length);
    for (let i = 0; i < length; i++) out[i] = counts[offset + i]! / n;
    return out;
  };
  const side = (s: number): SideBoxScore => {
    const at = C_TEAM + s * TEAM_COUNTERS;
    return {
      goals: counts[at + TEAM_GOALS]! / n,
      // The shot counters count 1 / SHOT_COUNTER_UNIT shots (expected shots: layout.ts "Shot tables").
      shots: counts[at + TEAM_SHOTS]! / (n * SHOT_COUNTER_UNIT),
      shotsOnTarget: counts[at + TEAM_SHOTS_ON_TARGET]! / (n * SHOT_COUNTER_UNIT),
      yellowCards: counts[at + TEAM_YELLOWS]! / n,
      redCards: counts[at + TEAM_REDS]! / n,
    };
  };
  return {
    fullTime: share(C_FT_GRID, GRID_SIZE * GRID_SIZE),
    halfTime: share(C_HT_GRID, GRID_SIZE * GRID_SIZE),
    htFt: share(C_HT_FT, 9),
    home: side(0),
    away: side(1),
    draws: n,
  };
}

export { GRID_SIZE };
