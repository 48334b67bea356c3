// Runs a projection's seasons off the event loop: one worker thread per run (season-thread.ts), ended
// when it answers. The sampler takes about half a second for 10,000 seasons from round 1 (npm run bench).
import { runOnThread } from '../engine-contract/module-worker.js';
import type { SeasonInput, SeasonTally } from './season-sampler.js';

export type RunSeasons = (input: SeasonInput, seasons: number, seed: string) => Promise<SeasonTally>;

export const runSeasonsOnThread: RunSeasons = (input, seasons, seed) =>
  runOnThread<SeasonTally>(
    import.meta.url,
    'season-thread',
    { input, seasons, seed },
    {
      key: 'tally',
      what: 'season',
    },
  );
