// The GPU worker thread: chooses the adapter, opens the device, builds the match pipeline once, and
// runs the engine's dispatches as they come (the engine sends at most two at a time: this thread packs
// and uploads the second while the GPU runs the first; the queue keeps them in order).
import { parentPort, workerData } from 'node:worker_threads';
import { chooseAdapterExplained } from './adapter.js';
import { openDevice } from './device.js';
import { createMatchDispatcher, MATCH_DEVICE_NEEDS, type MatchDispatcher } from './match-dispatch.js';
import type { FromWorker, ToWorker, WorkerData } from './worker-protocol.js';

const port = parentPort;
if (!port) throw new Error('gpu-worker.ts runs as a worker thread');

function send(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

interface Running {
  dispatcher: MatchDispatcher;
  device: GPUDevice;
}

let running: Running | null = null;
let closing = false;

/** The dispatches in progress: closing waits for them, since Dawn must settle its promises before teardown. */
const inFlight = new Set<Promise<void>>();

async function dispatch(message: Extract<ToWorker, { kind: 'dispatch' }>): Promise<void> {
  if (!running) {
    send({ kind: 'failed', id: message.id, message: 'the GPU device is not open' });
    return;
  }
  try {
    const result = await running.dispatcher.dispatch(
      message.runs.map((run) => ({
        tables: run,
        seed: { lo: run.seedLo, hi: run.seedHi },
        firstDraw: run.firstDraw,
        drawCount: run.drawCount,
      })),
    );
    send(
      { kind: 'done', id: message.id, counters: result.counters, gpuMs: result.gpuMs, timing: result.timing },
      result.counters.map((counters) => counters.buffer as ArrayBuffer),
    );
  } catch (error) {
    send({ kind: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error) });
  }
}

async function close(): Promise<void> {
  closing = true;
  await Promise.all(inFlight);
  running?.dispatcher.destroy();
  running?.device.destroy();
  running = null;
  send({ kind: 'closed' });
  port!.close();
}

port.on('message', (message: ToWorker) => {
  switch (message.kind) {
    case 'dispatch': {
      const pending = dispatch(message).finally(() => inFlight.delete(pending));
      inFlight.add(pending);
      break;
    }
    case 'lose-device':
      running?.device.destroy();
      break;
    case 'close':
      void close();
      break;
  }
});

async function start(policy: WorkerData): Promise<void> {
  const { chosen, reason } = await chooseAdapterExplained(policy);
  if (!chosen) {
    send({ kind: 'unavailable', reason: reason ?? 'no WebGPU adapter' });
    return;
  }
  const opened = await openDevice(chosen, MATCH_DEVICE_NEEDS);
  opened.device.lost.then((info) => {
    if (!closing) send({ kind: 'lost', reason: info.reason, message: info.message });
  });
  const dispatcher = await createMatchDispatcher(opened);
  if (closing) {
    dispatcher.destroy();
    opened.device.destroy();
    return;
  }
  running = { dispatcher, device: opened.device };
  send({
    kind: 'ready',
    description: chosen.description,
    backend: chosen.backend,
    software: chosen.software,
    timing: opened.timestamps ? 'timestamp' : 'wall',
    maxRuns: dispatcher.maxRuns,
  });
}

try {
  await start(workerData as WorkerData);
} catch (error) {
  send({
    kind: 'unavailable',
    reason: `GPU set-up failed: ${error instanceof Error ? error.message : String(error)}`,
  });
}
