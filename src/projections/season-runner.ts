// Runs a projection's seasons off the event loop: one worker thread per run (season-thread.ts), ended
// when it answers. The sampler takes about half a second for 10,000 seasons from round 1 (npm run bench).
import { startModuleWorker } from '../engine-contract/module-worker.js';
import type { SeasonInput, SeasonTally } from './season-sampler.js';

export type RunSeasons = (input: SeasonInput, seasons: number, seed: string) => Promise<SeasonTally>;

export const runSeasonsOnThread: RunSeasons = (input, seasons, seed) =>
  new Promise((resolve, reject) => {
    const worker = startModuleWorker(import.meta.url, 'season-thread');
    const finish = () => void worker.terminate();
    worker.once('message', (answer: { tally?: SeasonTally; error?: string }) => {
      finish();
      if (answer.tally) resolve(answer.tally);
      else reject(new Error(answer.error ?? 'the season thread answered nothing'));
    });
    worker.once('error', (error) => {
      finish();
      reject(error);
    });
    worker.once('exit', (code) => reject(new Error(`the season thread exited with code ${code}`)));
    worker.postMessage({ input, seasons, seed });
  });
