// The worker thread an operator's simulation runs on (operator-run.ts starts one per run), so that the
// service answering `POST /admin/v1/simulations` keeps answering requests while the CPU engine counts.
import { parentPort } from 'node:worker_threads';
import { runWhole } from '../../fallback/cpu-engine.js';
import { seedFromHex } from '../engine-contract/layout.js';
import { compileFixture } from './compile.js';
import { buildSimulationDocument, SAMPLE_PATHS } from './document.js';
import { loadModelStatus } from './model-status.js';
import type { OperatorRun } from './operator-run.js';

parentPort?.once('message', (task: OperatorRun) => {
  try {
    const compiled = compileFixture(task.match, task.params);
    const seed = seedFromHex(task.seed);
    const run = runWhole(compiled, { draws: task.draws, seed }, 'cpu-operator', SAMPLE_PATHS);
    const document = buildSimulationDocument({
      inputs: task.match,
      params: task.params,
      counts: run.counts,
      samples: run.samples,
      draws: task.draws,
      seed,
      basis: task.basis,
      timing: { engine: 'cpu', backend: run.backend, queued_ms: 0, run_ms: Math.round(run.runMs) },
      modelStatus: loadModelStatus(),
      marketFit: compiled.marketFit,
    });
    parentPort!.postMessage({ document });
  } catch (error) {
    parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
