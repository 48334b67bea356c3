// What a simulation job carries (jobs.inputs): the engine's payload and what its delivery shows.

import type { JobPayload } from '../engine/job-work.js';
import type { ResolvedLineups } from '../fixtures/lineups.js';

export interface RunPayload extends JobPayload {
  request: {
    state: string;
    inputs: ResolvedLineups['inputs'];
    warnings: string[];
    inputs_hash: string;
    /**
     * A run from an in-play state: the end of a match, not its forecast, so its delivery leaves the
     * fixture's summary (the latest pre-match simulation, docs/api.md §2.2) as it was.
     */
    in_play?: true;
    /**
     * A run fitted to a market (docs/model.md, "Fitting to the market"): the market's level, not the
     * model's forecast, so its delivery leaves the fixture's summary as it was too.
     */
    fitted?: true;
  };
}
