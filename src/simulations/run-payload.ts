// What a simulation job carries (jobs.inputs): the engine's payload and what its delivery shows.

import type { JobPayload } from '../engine/job-work.js';
import type { ResolvedLineups } from '../fixtures/lineups.js';

export interface RunPayload extends JobPayload {
  request: {
    state: string;
    inputs: ResolvedLineups['inputs'];
    warnings: string[];
    inputs_hash: string;
  };
}
