// The engine forecast's box-score means are per match in whole shots and cards: the engine counts shots in
// sixteenths (SHOT_COUNTER_UNIT, layout.ts "Shot tables"), which the forecast must divide out. Checked
// against the Premier League's own statistics over the seasons its shipped league profile comes from.
import { afterAll, describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../fallback/cpu-engine.js';
import { engineForecast } from '../../model/engine-forecast.js';
import { competitionProfile } from '../../model/league-profile.js';
import { loadLeagueMatches } from '../../model/league-results.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { testDataDir } from '../helpers/football-data.js';

const dataDir = testDataDir;
const engine = createCpuEngine({ threads: 0 });
afterAll(() => engine.close());

describe('engineForecast', () => {
  it("gives shots and shots on target per match within 5% of the league's observed means", async () => {
    // 2020/21–2022/23: the three seasons of the shipped premier-league profile (docs/model.md).
    const seasons = loadLeagueMatches(dataDir, ['premier-league']).filter((m) => m.season >= 2020 && m.stats);
    const mean = (pick: (m: (typeof seasons)[number]) => number) =>
      seasons.reduce((s, m) => s + pick(m), 0) / seasons.length;
    const observed = {
      home: mean((m) => m.homeGoals),
      away: mean((m) => m.awayGoals),
      shots: mean((m) => m.stats!.home.shots + m.stats!.away.shots),
      onTarget: mean((m) => m.stats!.home.shotsOnTarget + m.stats!.away.shotsOnTarget),
    };
    const forecast = await engineForecast(
      engine,
      defaultModelParams,
      { home: observed.home, away: observed.away },
      { draws: 4000, seed: 30, profile: competitionProfile('premier-league') },
    );
    const shots = forecast.home.shots + forecast.away.shots;
    const onTarget = forecast.home.shotsOnTarget + forecast.away.shotsOnTarget;
    // About 25 shots and 8.7 on target; counted in sixteenths they would read 16 times that.
    expect(Math.abs(shots / observed.shots - 1)).toBeLessThan(0.05);
    expect(Math.abs(onTarget / observed.onTarget - 1)).toBeLessThan(0.05);
    expect(forecast.home.goals + forecast.away.goals).toBeCloseTo(observed.home + observed.away, 0);
  });
});
