// A CPU engine worker thread: simulates the draw ranges the pool sends and answers with their counters.
import { parentPort } from 'node:worker_threads';
import { COUNTER_WORDS, type CompiledFixture } from '../src/engine/contract/layout.js';
import { SAMPLERS, type Sampler } from './engine.js';

export interface RangeTask {
  taskId: number;
  fixture: Uint32Array;
  thresholds: Uint32Array;
  seedLo: number;
  seedHi: number;
  firstDraw: number;
  endDraw: number;
  sampler: Sampler;
}

export type RangeReply = { taskId: number; counters: Uint32Array } | { taskId: number; error: string };

const port = parentPort;
if (port === null) throw new Error('cpu-worker.ts runs only as a worker thread');
port.on('message', (task: RangeTask) => {
  try {
    const compiled: CompiledFixture = {
      fixture: task.fixture,
      thresholds: task.thresholds,
      playerIds: [[], []],
      ratedGoals: { home: 0, away: 0 },
    };
    const counters = new Uint32Array(COUNTER_WORDS);
    SAMPLERS[task.sampler](
      compiled,
      { lo: task.seedLo, hi: task.seedHi },
      task.firstDraw,
      task.endDraw,
      counters,
    );
    port.postMessage({ taskId: task.taskId, counters } satisfies RangeReply, [counters.buffer]);
  } catch (error) {
    port.postMessage({ taskId: task.taskId, error: String(error) } satisfies RangeReply);
  }
});
