// What a simulation document states about the model (`simulation.model.status` and
// `simulation.uncertainty.model_accuracy`): the stored backtest, model-accuracy.json beside this file,
// which `matchsim model backtest` (model/backtest.ts) rewrites. The service reads the fitted file only,
// never the tooling that produced it.
import { z } from 'zod';
import { defaultModelParams, type ModelParams } from '../engine-contract/model-params.js';
import storedBacktest from './model-accuracy.json' with { type: 'json' };

/** The model's verdict as a document states it (simulation.model.status and its metrics). */
export interface ModelStatus {
  status: string;
  calibrated: boolean;
  metrics?: Record<string, unknown>;
}

/** The part of a stored backtest that documents state (the file holds the whole report). */
const storedBacktestSchema = z.object({
  model_version: z.string(),
  status: z.enum(['qualified', 'unqualified']),
  calibrated: z.boolean(),
  metrics: z.record(z.string(), z.number()),
  held_out_seasons: z.array(z.number().int()),
  comparison: z.object({
    dixon_coles: z.object({ rps_1x2: z.number() }),
    base_rates: z.object({ rps_1x2: z.number() }),
  }),
});
export type StoredBacktest = z.infer<typeof storedBacktestSchema>;

/**
 * The stored backtest when it was run on this very model version, else `unqualified` (a refit without a
 * backtest has not earned its status).
 */
export function modelAccuracyFor(params: ModelParams, stored: StoredBacktest | null): ModelStatus {
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

/** The shipped backtest, validated once at import like the model parameters. */
const shippedBacktest: StoredBacktest = storedBacktestSchema.parse(storedBacktest);

/** The model status documents carry for `params` (default: the shipped model). */
export function loadModelStatus(params: ModelParams = defaultModelParams): ModelStatus {
  return modelAccuracyFor(params, shippedBacktest);
}
