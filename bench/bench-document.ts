// The document a bench run writes after its draws, as a job thread does (src/engine/job-work.ts
// finishJob: its text and stored form): the engine rows (engine.ts) and the in-play rows (in-play.ts)
// time it as part of a run.
import { SAMPLE_PATHS, simulationDocumentText } from '../src/engine/document.js';
import { storedDocument } from '../src/engine/stored-document.js';
import type { CompiledFixture, EngineSeed } from '../src/engine-contract/layout.js';
import type { MatchInputs } from '../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../src/engine-contract/model-params.js';
import type { SamplePath } from '../src/engine-contract/sample-path.js';

/** A run's counters, the engine's backend and its time. */
export interface BenchRun {
  counts: Uint32Array;
  backend: string;
  runMs: number;
}

/** The run's document, its sample paths recorded by `samples` (the engine's, or a reference's). */
export function benchDocument(
  inputs: MatchInputs,
  compiled: CompiledFixture,
  run: BenchRun,
  draws: number,
  seed: EngineSeed,
  samples: (compiled: CompiledFixture, seed: EngineSeed, count: number) => SamplePath[],
): void {
  const { text } = simulationDocumentText({
    inputs,
    params: defaultModelParams,
    counts: run.counts,
    samples: samples(compiled, seed, SAMPLE_PATHS),
    draws,
    seed,
    basis: { as_of: new Date().toISOString(), data_version: 'bench' },
    timing: { engine: 'cpu', backend: run.backend, queued_ms: 0, run_ms: run.runMs },
    modelStatus: { status: 'unqualified', calibrated: false },
  });
  storedDocument(text);
}
