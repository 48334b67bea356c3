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
  /** Whose work the run is, for the order of the engine's slices (./fair-slices.ts); absent: one lane for all such runs. */
  share?: RunShare | undefined;
}

/**
 * Whose work a run is, as the engines' fair shares see it (docs/decisions.md §6 "Fair shares"): the
 * worker names it, and the engines take it as opaque data, knowing nothing of organisations or plans.
 */
export interface RunShare {
  /** The lane its draws are counted to: the runs of one lane share that lane's turns. */
  lane: string;
  /** The lane's weight: while lanes wait, a lane of weight 2 gets twice the draws of one of weight 1. */
  weight: number;
  /** A request waits on it: it goes ahead of its lane's other runs. */
  interactive: boolean;
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
