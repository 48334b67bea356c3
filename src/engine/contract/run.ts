// What a run of one compiled fixture asks of an engine and what it gives back: the same shape for the
// CPU engine (fallback/) and the GPU engine (gpu/), so either can stand in for the other.
import type { CompiledFixture, EngineSeed } from './layout.js';

export interface EngineRunOptions {
  draws: number;
  seed: EngineSeed;
  /** Called after each finished range with the draws done so far. */
  onProgress?: (drawsDone: number, drawsTotal: number) => void;
}

export interface EngineRun {
  /** Finalized counters (./layout.ts). */
  counts: Uint32Array;
  engine: 'cpu' | 'gpu';
  backend: string;
  runMs: number;
}

/** An engine that runs one compiled fixture at a time (the CPU engine; the GPU engine's fallback). */
export interface FixtureRunner {
  run(compiled: CompiledFixture, options: EngineRunOptions): Promise<EngineRun>;
}
