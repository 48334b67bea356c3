// The worker thread a projection's seasons run on (season-runner.ts starts one per run), so the event
// loop keeps answering requests while the sampler works.
import { parentPort } from 'node:worker_threads';
import { type SeasonInput, simulateSeasons } from './season-sampler.js';

export interface SeasonTask {
  input: SeasonInput;
  seasons: number;
  seed: string;
}

parentPort?.once('message', (task: SeasonTask) => {
  try {
    const tally = simulateSeasons(task.input, task.seasons, task.seed);
    parentPort!.postMessage({ tally }, [
      tally.positions.buffer,
      tally.pointsSum.buffer,
      tally.pointsSquares.buffer,
      tally.goalDifferenceSum.buffer,
    ] as ArrayBuffer[]);
  } catch (error) {
    parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
