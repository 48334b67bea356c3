// The engine alone on a batch's work: jobs through the service's engine (src/engine/runner.ts: compiles,
// draws, sample paths and documents on the job threads and the CPU pool, one thread each per core), in
// one call as a worker's pack would give them, with no database and no HTTP. The reference of the host
// rows (bench/host.ts) and of the 1,000 × 10,000 batch (bench/simulations.ts), and a row of its own in
// bench/engine.ts (issue 54's goal: ≤ 0.8 ms a job for 1,000 small jobs on 2 cores).
import { createSimulationEngine, type EngineJob } from '../src/engine/runner.js';
import { plausibleFixture } from '../test/engine/plausible-teams.js';

/**
 * `count` jobs of `draws` draws from job number `first` on. The inputs are plausible teams, not the
 * demo's: the cost of a draw hardly depends on them. Each job's ratings differ from every other's, in
 * this batch and in any other (`salt`): a job thread keeps the calibrations of the ratings it has
 * compiled (src/engine/compile.ts CalibrationCache), and jobs that repeated a handful of ratings would measure
 * what a batch of distinct fixtures never gets.
 */
function jobsOf(first: number, count: number, draws: number, salt: number): EngineJob[] {
  const asOf = new Date().toISOString();
  return Array.from({ length: count }, (_, n) => {
    const i = first + n;
    return {
      id: `job_${i}`,
      mode: 'live',
      draws,
      seed: '5eedbe7c00000000',
      dataVersion: 'bench',
      queuedMs: 0,
      // As the queue hands a job over: its payload as stored text (src/engine/job-work.ts HostJob).
      payloadJson: JSON.stringify({
        match: plausibleFixture(
          i + 1,
          { teamId: 2 * i + 1, attack: ((i % 7) - 3) / 20 + i * 1e-5, defence: ((i % 5) - 2) / 20 + salt },
          { teamId: 2 * i + 2, attack: ((i % 3) - 1) / 20, defence: 0 },
        ),
        as_of: asOf,
      }),
    };
  });
}

/** The engine, warmed up: `run` times one batch of jobs made by `batch` (before the clock starts). */
export interface EngineAlone {
  /** `items` new jobs of `draws` draws: fixtures no job of this engine had before. */
  batch(items: number, draws: number): EngineJob[];
  /** Wall seconds of the jobs, all of them in one call. */
  run(jobs: EngineJob[]): Promise<number>;
  close(): Promise<void>;
}

export async function startEngineAlone(): Promise<EngineAlone> {
  const engine = createSimulationEngine({ mode: 'cpu' });
  const context = { progress: async () => {}, signal: new AbortController().signal };
  let next = 0;
  const run = async (jobs: EngineJob[]) => {
    const started = performance.now();
    const outcomes = await engine.runBatch(jobs, context);
    if (outcomes.some((outcome) => 'error' in outcome)) throw new Error('engine alone: a job failed');
    return (performance.now() - started) / 1000;
  };
  const batch = (count: number, draws: number) => {
    const jobs = jobsOf(next, count, draws, Math.random() / 1000);
    next += count;
    return jobs;
  };
  try {
    // Warm-up: JIT and thread start-up are not part of the batch: large runs for the draw loop, and
    // 1,000 small jobs for the compile and document code, which a handful of jobs leaves unoptimised on
    // each thread (after 8 large jobs only, the first 1,000 small ones ran at 1.02–1.08 ms a job, the
    // next 1,000 at 0.86–0.90, on 2 cores). This reference is the engine as a service that has been up a
    // while runs it; the service in the host rows has run some 45 jobs before its batch, so its first
    // few hundred jobs still pay part of that warm-up.
    await run([...batch(8, 20_000), ...batch(1000, 100)]);
  } catch (error) {
    await engine.close();
    throw error;
  }
  return { batch, run, close: () => engine.close() };
}

/** Wall seconds of `items` jobs of `draws` draws on a warmed-up engine (started and closed here). */
export async function engineAloneSeconds(items: number, draws: number): Promise<number> {
  const alone = await startEngineAlone();
  try {
    return await alone.run(alone.batch(items, draws));
  } finally {
    await alone.close();
  }
}
