// `matchsim projection backtest` (docs/model.md, "Season projections"): the walk-forward backtest of
// season projections on ../shared/data with the strength perturbation fitted on the seasons before the
// held-out ones, written to src/projections/projection-model.json, which the service serves as a
// projection's `model`.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from './data-dir.js';
import { backtestProjections } from './projection-backtest.js';
import { readResultsFolder } from './results-files.js';

export const PROJECTION_LEAGUES = ['premier-league', 'la-liga', 'serie-a', 'bundesliga', 'ligue-1'];
/** The sd is chosen on 2005/06–2012/13; the backtest reports 2013/14–2022/23, which the fit never saw. */
export const FIT_SEASONS = [2005, 2006, 2007, 2008, 2009, 2010, 2011, 2012];
export const HELD_OUT_SEASONS = [2013, 2014, 2015, 2016, 2017, 2018, 2019, 2020, 2021, 2022];

export function projectionModelPath(): string {
  return path.join(repositoryRoot(), 'src/projections/projection-model.json');
}

export function runProjectionBacktest(options: {
  dataDir: string;
  seasons?: number;
  log?: (line: string) => void;
}) {
  const matches = readResultsFolder(path.join(options.dataDir, 'leagues'), PROJECTION_LEAGUES);
  const { model, fit } = backtestProjections({
    matches,
    leagues: PROJECTION_LEAGUES,
    fitSeasons: FIT_SEASONS,
    heldOutSeasons: HELD_OUT_SEASONS,
    seasons: options.seasons ?? 10_000,
    ...(options.log ? { log: options.log } : {}),
  });
  const file = projectionModelPath();
  writeFileSync(file, `${JSON.stringify(model, null, 2)}\n`);
  return { written: file, strength_sd: model.strength_sd, fit_rps_by_sd: fit.rps, backtest: model.backtest };
}
