// The two files `matchsim model fit` and `matchsim model backtest` regenerate, and how the service
// reads the stored backtest back for `simulation.model.status` and `simulation.uncertainty.model_accuracy`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelParams } from '../../engine/contract/model-params.js';
import type { BacktestResult } from './backtest.js';
import { repositoryRoot } from './data-dir.js';

/** src/engine/contract/model-params.json of the checkout (the source file, also when running from dist/). */
export function modelParamsPath(): string {
  return join(repositoryRoot(), 'src', 'engine', 'contract', 'model-params.json');
}

/** src/sim/model-accuracy.json of the checkout. */
export function modelAccuracyPath(): string {
  return join(repositoryRoot(), 'src', 'sim', 'model-accuracy.json');
}

export function writeModelAccuracy(path: string, result: BacktestResult): void {
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
}

export function readModelAccuracy(path: string = modelAccuracyPath()): BacktestResult {
  return JSON.parse(readFileSync(path, 'utf8')) as BacktestResult;
}

export interface ModelAccuracySummary {
  status: 'qualified' | 'unqualified';
  calibrated: boolean;
  metrics: Record<string, number | string | number[]>;
}

/**
 * What a simulation document states about the model: the stored backtest when it was run on this very
 * model version, else `unqualified` (a refit without a backtest has not earned its status).
 */
export function modelAccuracyFor(params: ModelParams, stored: BacktestResult | null): ModelAccuracySummary {
  if (!stored || stored.model_version !== params.model_version) {
    return {
      status: 'unqualified',
      calibrated: false,
      metrics: { reason: 'no backtest for this model version' },
    };
  }
  const { dixon_coles, base_rates } = stored.comparison;
  return {
    status: stored.status,
    calibrated: stored.calibrated,
    metrics: {
      ...stored.metrics,
      held_out_seasons: stored.held_out_seasons,
      rps_1x2_dixon_coles: dixon_coles.rps_1x2,
      rps_1x2_base_rates: base_rates.rps_1x2,
    },
  };
}
