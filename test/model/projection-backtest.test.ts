// The season projections' backtest (model/projection-backtest.ts) on real results: a season's state as
// of a round and its final table, the scores of a projection, and the two baselines' sense.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { leagueRules, projectCase, scoreProjection, seasonCase } from '../../model/projection-backtest.js';
import { readResultsFolder } from '../../model/results-files.js';
import { testDataDir } from '../helpers/football-data.js';

const dataDir = testDataDir;
const matches = readResultsFolder(path.join(dataDir, 'leagues'), ['premier-league']);

describe('the projection backtest', () => {
  it("reads the Premier League 2022/23 after round 30: the played part, the rest with that day's ratings, the final table", () => {
    const found = seasonCase(matches, 'premier-league', 2022, 30)!;
    expect(found.input.clubs).toBe(20);
    expect(found.input.played.length + found.input.remaining.length).toBe(380);
    expect(found.input.played.length).toBeLessThanOrEqual(300);
    expect(found.input.played.length).toBeGreaterThan(250);
    // Man City won the league, Southampton finished last.
    const names = [
      ...new Set(matches.filter((m) => m.season === 2022).flatMap((m) => [m.home, m.away])),
    ].sort();
    expect(found.finalPlace[names.indexOf('Man City')]).toBe(0);
    expect(found.finalPlace[names.indexOf('Southampton')]).toBe(19);
    for (const f of found.input.remaining) {
      expect(f.homeExpectedGoals).toBeGreaterThan(0.3);
      expect(f.homeExpectedGoals).toBeLessThan(5);
    }
    expect(leagueRules('la-liga').tieBreakers[0]).toBe('head_to_head');
  });

  it('scores certainty in the final table 0 and a projection of the season between it and the table as it stood', () => {
    const found = seasonCase(matches, 'premier-league', 2022, 20)!;
    const n = found.input.clubs;
    const certain = (places: number[]) =>
      places.map((place) => Array.from({ length: n }, (_, p) => (p === place ? 1 : 0)));
    expect(scoreProjection(certain(found.finalPlace), found.finalPlace)).toEqual({
      title: 0,
      top_four: 0,
      relegation: 0,
      rps_places: 0,
    });
    const projected = scoreProjection(projectCase(found, 0.1, 2000), found.finalPlace);
    const table = scoreProjection(certain(found.currentPlace), found.finalPlace);
    expect(projected.rps_places).toBeGreaterThan(0);
    expect(projected.rps_places).toBeLessThan(table.rps_places);
  });
});
