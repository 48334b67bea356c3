// Messages between the GPU engine (main thread, gpu/engine.ts) and its worker (gpu/gpu-worker.ts).
// Dawn busy-polls the thread that waits on the GPU, so the device lives in the worker alone.
import type { AdapterPolicy, DawnBackend } from './adapter.js';
import type { FixtureTables } from './match-dispatch.js';

/** What the worker starts with: the adapter policy. */
export type WorkerData = AdapterPolicy;

/** One run of a dispatch: the fixture table and the event tables (the thresholds are not sent). */
export interface RunMessage extends FixtureTables {
  seedLo: number;
  seedHi: number;
  firstDraw: number;
  drawCount: number;
}

export type ToWorker =
  | { kind: 'dispatch'; id: number; runs: RunMessage[] }
  /** Destroys the device: a real device loss, for fault tests and operators' drills. */
  | { kind: 'lose-device' }
  | { kind: 'close' };

export type FromWorker =
  | {
      kind: 'ready';
      description: string;
      backend: DawnBackend;
      software: boolean;
      timing: 'timestamp' | 'wall';
      maxRuns: number;
    }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'done'; id: number; counters: Uint32Array[]; gpuMs: number; timing: 'timestamp' | 'wall' }
  | { kind: 'failed'; id: number; message: string }
  | { kind: 'lost'; reason: string; message: string }
  | { kind: 'closed' };
