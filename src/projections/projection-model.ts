// The season model a projection runs (docs/model.md, "Season projections"): the sampler's settings and
// the walk-forward backtest's summary, both from projection-model.json beside this file, which
// `matchsim projection backtest` (model/projection-backtest.ts) rewrites. The service reads the file only.
import { z } from 'zod';
import stored from './projection-model.json' with { type: 'json' };

/** A backtest round's summary, as the model file stores it and a projection's `model` section shows it. */
export const roundSummarySchema = z.object({
  projections: z.number().int(),
  /** Brier scores of the title, top-four and relegation probabilities, and the RPS over final places. */
  model: z.record(z.string(), z.number()),
  without_uncertainty: z.record(z.string(), z.number()),
  table_as_it_stood: z.record(z.string(), z.number()),
});

export const projectionModelSchema = z.object({
  version: z.string(),
  sampler: z.string(),
  /** Sd of a club's season strength perturbation, log goal scale; fitted on the seasons in `fitted_on`. */
  strength_sd: z.number().min(0),
  fitted_on: z.array(z.number().int()),
  backtest: z.object({
    held_out_seasons: z.array(z.number().int()),
    leagues: z.array(z.string()),
    seasons_simulated: z.number().int(),
    rounds: z.record(z.string(), roundSummarySchema),
  }),
});
export type ProjectionModel = z.infer<typeof projectionModelSchema>;

export const projectionModel: ProjectionModel = projectionModelSchema.parse(stored);
