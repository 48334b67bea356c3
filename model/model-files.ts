// The two files `matchsim model fit` and `matchsim model backtest` regenerate. The service reads them
// back itself (src/engine-contract/model-params.ts, src/engine/model-status.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BacktestResult } from './backtest.js';
import { repositoryRoot } from './data-dir.js';

/** src/engine-contract/model-params.json of the checkout (the source file, also when running from dist/). */
export function modelParamsPath(): string {
  return join(repositoryRoot(), 'src', 'engine-contract', 'model-params.json');
}

/** src/engine/model-accuracy.json of the checkout. */
export function modelAccuracyPath(): string {
  return join(repositoryRoot(), 'src', 'engine', 'model-accuracy.json');
}

export function writeModelAccuracy(path: string, result: BacktestResult): void {
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
}
