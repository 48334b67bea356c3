// An operator's simulation (`matchsim simulate`, `POST /admin/v1/simulations`; src/operations/
// operator-simulation.ts): one match's inputs compiled and run whole by the CPU engine on a worker thread of
// its own (operator-run-thread.ts), ended when it answers; no job, queue, hold or charge.

import type { MatchInputs } from '../engine-contract/match-inputs.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import { runOnThread } from '../engine-contract/module-worker.js';
import type { SimulationDocument } from './document-schema.js';

export interface OperatorRun {
  match: MatchInputs;
  params: ModelParams;
  draws: number;
  /** Up to 16 hex digits: the run's u64 seed. */
  seed: string;
  basis: { as_of: string; data_version: string };
}

export function runOperatorSimulation(run: OperatorRun): Promise<SimulationDocument> {
  return runOnThread<SimulationDocument>(import.meta.url, 'operator-run-thread', run, {
    key: 'document',
    what: 'simulation',
  });
}
