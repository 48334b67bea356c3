// A CPU engine worker thread: simulates the draw ranges the pool sends and answers with their counters.
import { parentPort } from 'node:worker_threads';
import { adoptEventTables } from '../src/engine-contract/event-tables.js';
import { COUNTER_WORDS, type CompiledFixture } from '../src/engine-contract/layout.js';
import { simulateRange } from './engine.js';

/**
 * A run's tables, on SharedArrayBuffers written once by the pool (fallback/cpu-engine.ts), so a range
 * task carries them without a copy. `tablesId` names them: a worker keeps the arrays of the runs it has
 * seen, so every range of a run finds them (and the event tables adopted for them) again.
 */
export interface RunTables {
  tablesId: number;
  fixture: Uint32Array;
  thresholds: Uint32Array;
  /** eventTablesOf(thresholds), built once on the host. */
  eventTables: Uint32Array;
}

export interface RangeTask {
  taskId: number;
  tables: RunTables;
  seedLo: number;
  seedHi: number;
  firstDraw: number;
  endDraw: number;
}

export type RangeReply = { taskId: number; counters: Uint32Array } | { taskId: number; error: string };

/** Runs whose tables a worker keeps; a pool runs few fixtures at once (one per concurrent job). */
const KEPT_RUNS = 8;
const runs = new Map<number, CompiledFixture>();

function compiledOf(tables: RunTables): CompiledFixture {
  let compiled = runs.get(tables.tablesId);
  if (compiled === undefined) {
    compiled = {
      fixture: tables.fixture,
      thresholds: tables.thresholds,
      playerIds: [[], []],
      ratedGoals: { home: 0, away: 0 },
    };
    runs.set(tables.tablesId, compiled);
    // Maps iterate in insertion order: the first key is the run seen longest ago.
    if (runs.size > KEPT_RUNS) runs.delete(runs.keys().next().value!);
  }
  adoptEventTables(compiled.thresholds, tables.eventTables);
  return compiled;
}

const port = parentPort;
if (port === null) throw new Error('cpu-worker.ts runs only as a worker thread');
port.on('message', (task: RangeTask) => {
  try {
    // On shared memory and sent without a transfer list: transferring an ArrayBuffer detaches it, and the
    // first detach in a thread makes V8 drop its optimised code and add a detach check to every typed
    // array access from then on (about 10% slower draws, measured with fallback/engine.ts alone).
    const counters = new Uint32Array(new SharedArrayBuffer(COUNTER_WORDS * Uint32Array.BYTES_PER_ELEMENT));
    simulateRange(
      compiledOf(task.tables),
      { lo: task.seedLo, hi: task.seedHi },
      task.firstDraw,
      task.endDraw,
      counters,
    );
    port.postMessage({ taskId: task.taskId, counters } satisfies RangeReply);
  } catch (error) {
    port.postMessage({ taskId: task.taskId, error: String(error) } satisfies RangeReply);
  }
});
