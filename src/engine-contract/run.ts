// What a run of one compiled fixture asks of an engine and what it gives back: the same shape for the
// CPU engine (fallback/) and the GPU engine (gpu/), so either can stand in for the other.
import type { CompiledFixture, EngineSeed } from './layout.js';

/**
 * Draws one job may ask for: the product's range (a simulation is 100 to 1,000,000 matches). The
 * runner refuses a job outside it before any engine sees it. The engines themselves take any count up
 * to MAX_DRAWS_PER_RUN (./layout.ts), the most draws whose counters cannot overflow a u32, which is
 * above this range.
 */
export const MIN_DRAWS_PER_JOB = 100;
export const MAX_DRAWS_PER_JOB = 1_000_000;

export interface EngineRunOptions {
  /** 1 to MAX_DRAWS_PER_RUN; the engines do not check it (the runner checks a job's draws once). */
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
