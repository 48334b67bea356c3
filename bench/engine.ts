// CPU engine throughput: the full model (compile, draws, sample paths, document) on one thread and on
// all cores, beside a naive per-minute Bernoulli goal simulator in plain JavaScript measured in the same
// run, and the per-step sampler the engine replaced (test/engine/per-step-reference.ts, one thread).
// Goal of the issue: 1,000,000 draws of the full model in under 1 s of wall time on 2 cores.
// And the engine alone on a batch of small jobs (bench/engine-alone.ts, the host rows' reference): its
// wall time a job on all cores and its CPU a job by thread, beside the same draws as one job.
import { availableParallelism } from 'node:os';
import { createCpuEngine } from '../fallback/cpu-engine.js';
import { recordSamplePaths, simulateRange } from '../fallback/engine.js';
import { compileFixture, compileKey } from '../src/engine/compile.js';
import { createSlotPool, SLOT_BYTES } from '../src/engine/compiled-slots.js';
import {
  buildSimulationDocument,
  SAMPLE_PATHS,
  type SimulationDocumentInput,
  simulationDocumentText,
} from '../src/engine/document.js';
import { createJobThreads } from '../src/engine/job-threads.js';
import { compileShared } from '../src/engine/job-work.js';
import { loadModelStatus } from '../src/engine/model-status.js';
import { storedDocument } from '../src/engine/stored-document.js';
import {
  COUNTER_WORDS,
  type CompiledFixture,
  type EngineSeed,
  finalizeCounters,
} from '../src/engine-contract/layout.js';
import type { MarketInputs, MatchInputs } from '../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../src/engine-contract/model-params.js';
import type { EngineRun } from '../src/engine-contract/run.js';
import type { SamplePath } from '../src/engine-contract/sample-path.js';
import { recordSamplePathsPerStep, simulateRangePerStep } from '../test/engine/per-step-reference.js';
import { plausibleFixture } from '../test/engine/plausible-teams.js';
import { benchDocument } from './bench-document.js';
import { threadCpuSeconds } from './cpu.js';
import { startEngineAlone } from './engine-alone.js';
import { benchInPlay } from './in-play.js';
import type { BenchRow } from './report.js';

const DRAW_COUNTS = [1000, 100_000, 1_000_000];
const GROUP = 'engine (CPU)';
/** The wall-time goals (all threads), shown beside each draw count. */
const GOAL_NOTES: Record<number, string> = {
  1000: '; goal < 5 ms',
  100000: '; goal < 150 ms',
  1000000: '; goal < 1000 ms on 2 cores',
};
const COMPILE_REPEATS = 5;
const RUN_REPEATS = 5;
const WARM_UP_DRAWS = [1000, 1000, 1000, 20_000, 1000];

/**
 * A compile without the cache (a fixture's first run: tables, event tables, into a slot of shared memory
 * as the job threads make them), the median of a few, beside what its tables need: writing their bytes
 * once.
 */
function compileRow(inputs: ReturnType<typeof plausibleFixture>): BenchRow {
  const times: number[] = [];
  const copies: number[] = [];
  const slots = createSlotPool();
  for (let i = 0; i < COMPILE_REPEATS; i++) {
    const tables = slots.take();
    const started = performance.now();
    const compiled = compileShared(inputs, defaultModelParams, tables);
    times.push(performance.now() - started);
    const copyStarted = performance.now();
    for (const words of [compiled.fixture, compiled.thresholds, compiled.eventTables]) new Uint32Array(words);
    copies.push(performance.now() - copyStarted);
    slots.give(tables);
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[COMPILE_REPEATS >> 1]!;
  return {
    group: GROUP,
    name: 'compile, uncached (a fixture not compiled before)',
    value: median(times),
    unit: 'ms',
    reference: {
      name: `a copy of its tables (${(SLOT_BYTES / 1024).toFixed(0)} KiB)`,
      value: median(copies),
    },
    note: 'the rows below compile through the job threads’ cache (src/engine/job-threads.ts)',
  };
}

/** Documents per round of documentRow, and its rounds. */
const DOCUMENTS = 40;
const DOCUMENT_ROUNDS = 9;

/**
 * A small job's document as the job threads write it (src/engine/job-work.ts finishJob: its JSON text
 * written directly, simulationDocumentText, then deflated with its CRC-32), beside the object built and
 * walked by JSON.stringify (buildSimulationDocument) with the same deflate: 40 runs of 100–149 draws, the
 * two ways in turn, the median round's CPU time a document (the process's, whose other threads are idle
 * here: a machine busy with other work moves wall times by more than the difference), its wall time
 * beside it (docs/decisions.md §6, "A document written as text").
 */
function documentRow(): BenchRow {
  const seed = { lo: 0x0d0c, hi: 0x5eed };
  const inputs = Array.from({ length: DOCUMENTS }, (_, i): SimulationDocumentInput => {
    const match = plausibleFixture(
      100 + i,
      { teamId: 2 * i + 1, attack: ((i % 7) - 3) / 20, defence: 0 },
      { teamId: 2 * i + 2, attack: 0, defence: ((i % 5) - 2) / 20 },
    );
    const draws = 100 + ((i * 7) % 50);
    const compiled = compileFixture(match, defaultModelParams);
    const counts = new Uint32Array(COUNTER_WORDS);
    simulateRange(compiled, seed, 0, draws, counts);
    finalizeCounters(counts);
    return {
      inputs: match,
      params: defaultModelParams,
      counts,
      samples: recordSamplePaths(compiled, seed, SAMPLE_PATHS),
      draws,
      seed,
      basis: { as_of: '2026-12-07T00:00:00.000Z', data_version: 'bench' },
      timing: { engine: 'cpu', backend: 'bench', queued_ms: 0, run_ms: 1 },
      modelStatus: { status: 'unqualified', calibrated: false },
    };
  });
  const ways = [
    (input: SimulationDocumentInput) => storedDocument(simulationDocumentText(input).text),
    (input: SimulationDocumentInput) => storedDocument(JSON.stringify(buildSimulationDocument(input))),
  ];
  const cpu = ways.map((): number[] => []);
  const wall = ways.map((): number[] => []);
  const REPEATS = 3;
  for (let round = 0; round <= DOCUMENT_ROUNDS; round++) {
    ways.forEach((write, way) => {
      const cpuStarted = process.cpuUsage();
      const started = performance.now();
      for (let repeat = 0; repeat < REPEATS; repeat++) for (const input of inputs) write(input);
      const used = process.cpuUsage(cpuStarted);
      // Round 0 warms both ways up.
      if (round === 0) return;
      wall[way]!.push((performance.now() - started) / (REPEATS * DOCUMENTS));
      cpu[way]!.push((used.user + used.system) / 1000 / (REPEATS * DOCUMENTS));
    });
  }
  const median = (times: number[]) => times.sort((a, b) => a - b)[times.length >> 1]!;
  return {
    group: GROUP,
    name: 'document of a small job (100–149 draws) as the job threads write it, deflated, CPU',
    value: median(cpu[0]!),
    unit: 'ms',
    reference: { name: 'the object built, JSON.stringify, deflated', value: median(cpu[1]!) },
    note: `median of ${DOCUMENT_ROUNDS} rounds of ${REPEATS} × ${DOCUMENTS} documents, the two ways in turn; wall ${median(wall[0]!).toFixed(2)} against ${median(wall[1]!).toFixed(2)} ms`,
  };
}

/** The median of a few uncached compiles of `inputs` into a slot, in ms. */
function compileMedian(inputs: MatchInputs): number {
  const times: number[] = [];
  const slots = createSlotPool();
  for (let i = 0; i < COMPILE_REPEATS; i++) {
    const tables = slots.take();
    const started = performance.now();
    compileShared(inputs, defaultModelParams, tables);
    times.push(performance.now() - started);
    slots.give(tables);
  }
  return times.sort((a, b) => a - b)[COMPILE_REPEATS >> 1]!;
}

/** The bench's market: 2.10 / 3.40 / 3.60 and 1.90 / 1.95 with Shin's margin removed (docs/model.md). */
const ONE_BY_TWO: MarketInputs = {
  odds: { '1x2': [2.1, 3.4, 3.6] },
  margin_method: 'shin',
  fit: 'exact',
  targets: { home_win: 0.4587, draw: 0.2787, away_win: 0.2626 },
};
const ONE_BY_TWO_AND_TOTAL: MarketInputs = {
  ...ONE_BY_TWO,
  odds: { ...ONE_BY_TWO.odds, 'total_2.5': [1.9, 1.95] },
  targets: { ...ONE_BY_TWO.targets, over_2_5: 0.5077 },
};

/**
 * A compile fitted to the market (src/engine/market-fit.ts, issue 53: the fit adds at most 5 ms) beside
 * the same fixture's unfitted compile, both uncached: predicted XIs (the strength mixture's three points),
 * fitted to 1X2 and total odds. A job thread fits many markets: the fit's code is warmed up first, as
 * the unfitted compile's is by the rows before.
 */
function fittedCompileRow(inputs: MatchInputs): BenchRow {
  // Twenty fits: V8 optimises the pass's loop only after a few of them.
  for (let i = 0; i < 4; i++) compileMedian({ ...inputs, market: i % 2 ? ONE_BY_TWO : ONE_BY_TWO_AND_TOTAL });
  const plain = compileMedian(inputs);
  const fitted = compileMedian({ ...inputs, market: ONE_BY_TWO_AND_TOTAL });
  const fittedOneByTwo = compileMedian({ ...inputs, market: ONE_BY_TWO });
  return {
    group: GROUP,
    name: 'compile fitted to 1X2 and total odds, uncached',
    value: fitted,
    unit: 'ms',
    reference: { name: 'the same fixture unfitted', value: plain },
    note: `fit adds ${(fitted - plain).toFixed(2)} ms (1X2 alone: ${(fittedOneByTwo - plain).toFixed(2)} ms); goal ≤ 5 ms`,
    fields: { added_ms: fitted - plain, added_ms_1x2_only: fittedOneByTwo - plain, unfitted_ms: plain },
  };
}

/**
 * A fitted run of 1,000,000 draws beside the same fixture's unfitted run (issue 53: no more wall time,
 * within 10%), each the median of three taken in turn, on all threads. The fitted payload's first run
 * compiles it, fit included; the unfitted one's was compiled by the warm-up.
 */
async function fittedMillionRow(
  inputs: MatchInputs,
  payloadJson: string,
  seed: EngineSeed,
  runner: Runner,
): Promise<BenchRow> {
  const draws = 1_000_000;
  const fittedInputs = { ...inputs, market: ONE_BY_TWO_AND_TOTAL };
  const fittedJson = JSON.stringify({ match: fittedInputs, as_of: '' });
  const plain: number[] = [];
  const fitted: number[] = [];
  for (let repeat = 0; repeat < 3; repeat++) {
    fitted.push(await timeOneRun(fittedInputs, fittedJson, seed, draws, runner.run, runner.samples));
    plain.push(await timeOneRun(inputs, payloadJson, seed, draws, runner.run, runner.samples));
  }
  const first = fitted[0]!;
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
  const ratio = median(fitted) / median(plain);
  return {
    group: GROUP,
    name: `fitted to 1X2 and total odds, ${draws.toLocaleString('en-US')} draws, ${runner.label}, wall`,
    value: median(fitted),
    unit: 'ms',
    reference: { name: 'the same run unfitted', value: median(plain) },
    note: `${ratio.toFixed(3)} × the unfitted run (first fitted run ${first.toFixed(0)} ms, its fit included); goal ≤ 1.1 ×`,
    fields: { ratio },
  };
}

/**
 * The reference: 90 minutes, one Bernoulli goal trial per side and minute, nothing else (xorshift32,
 * plain JS). What a simple simulator costs, so the full model's price is visible.
 */
export function naiveDraws(draws: number): number {
  let state = 0x9e3779b9;
  const home = 1.55 / 90;
  const away = 1.2 / 90;
  let checksum = 0;
  for (let draw = 0; draw < draws; draw++) {
    let homeGoals = 0;
    let awayGoals = 0;
    for (let minute = 0; minute < 90; minute++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      if ((state >>> 0) / 4294967296 < home) homeGoals++;
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      if ((state >>> 0) / 4294967296 < away) awayGoals++;
    }
    checksum += homeGoals - awayGoals;
  }
  return checksum;
}

/** One timed row's way of running: an engine (or the reference) and its sample paths. */
interface Runner {
  label: string;
  threads: number;
  run: (compiled: CompiledFixture, draws: number, seed: EngineSeed) => Promise<EngineRun>;
  samples: (compiled: CompiledFixture, seed: EngineSeed, count: number) => SamplePath[];
  close: () => Promise<void>;
}

function engineRunner(label: string, threads: number): Runner {
  const engine = createCpuEngine({ threads: threads === 1 ? 0 : threads });
  return {
    label,
    threads,
    run: (compiled, draws, seed) => engine.run(compiled, { draws, seed }),
    samples: recordSamplePaths,
    close: () => engine.close(),
  };
}

/** The per-step sampler the engine replaced, on the calling thread (a test-only reference). */
const perStepRunner: Runner = {
  label: '1 thread, per-step reference (test/)',
  threads: 1,
  async run(compiled, draws, seed) {
    const started = performance.now();
    const counts = new Uint32Array(COUNTER_WORDS);
    simulateRangePerStep(compiled, seed, 0, draws, counts);
    finalizeCounters(counts);
    return { counts, engine: 'cpu', backend: 'per-step reference', runMs: performance.now() - started };
  },
  samples: recordSamplePathsPerStep,
  close: async () => {},
};

/** The runner's compile cache, on this thread. */
const compileCache = createJobThreads({
  setting: { params: defaultModelParams, modelStatus: loadModelStatus(defaultModelParams) },
  threads: 0,
});

/** Wall time of one run as the runner does it: cached compile, the run, sample paths and the document. */
async function timeOneRun(
  inputs: ReturnType<typeof plausibleFixture>,
  /** The payload as the queue would hand it over (JSON text), made once outside the timed runs. */
  payloadJson: string,
  seed: EngineSeed,
  draws: number,
  run: Runner['run'],
  samples: Runner['samples'],
): Promise<number> {
  const started = performance.now();
  // As the runner compiles: a fixture compiled before (the warm-up) comes from the cache.
  const { compiled, release } = await compileCache.acquire({
    key: compileKey(payloadJson, defaultModelParams),
    payloadJson,
    draws,
    seed,
    dataVersion: 'bench',
    queuedMs: 0,
  });
  benchDocument(inputs, compiled, await run(compiled, draws, seed), draws, seed, samples);
  release();
  return performance.now() - started;
}

/** Issue 54's batch of small jobs: 1,000 × 125 draws (the host rows draw 100–149 at random). */
const ALONE_JOBS = 1000;
const ALONE_DRAWS = 125;

/**
 * The engine alone on 1,000 jobs of 125 draws, in ms of wall time a job on all cores, beside the same
 * 125,000 draws as one job (one compile, one document; the pool's threads): what a job costs besides its
 * draws is the difference. The note gives the CPU a job by thread kind, which does not depend on how
 * busy a shared machine is (bench/cpu.ts threadCpuSeconds: the job threads and the pool are
 * `WorkerThread`s, V8's collection and compilation `V8Worker`s).
 */
async function engineAloneRow(): Promise<BenchRow> {
  const alone = await startEngineAlone();
  try {
    const jobs = alone.batch(ALONE_JOBS, ALONE_DRAWS);
    const before = threadCpuSeconds(process.pid);
    const seconds = await alone.run(jobs);
    const after = threadCpuSeconds(process.pid);
    const asOneJob = await alone.run(alone.batch(1, ALONE_JOBS * ALONE_DRAWS));
    const cpu = (kind: keyof typeof before) => ((after[kind] - before[kind]) * 1000) / ALONE_JOBS;
    const total = cpu('workers') + cpu('eventLoop') + cpu('v8') + cpu('other');
    return {
      group: GROUP,
      name: `engine alone: ${ALONE_JOBS.toLocaleString('en-US')} jobs × ${ALONE_DRAWS} draws, a job`,
      value: (seconds * 1000) / ALONE_JOBS,
      unit: 'ms',
      reference: {
        name: `the same draws as one job, per ${ALONE_DRAWS}`,
        value: (asOneJob * 1000) / ALONE_JOBS,
      },
      note: `all cores (compile, draws, sample paths, document); CPU ${total.toFixed(2)} ms a job: job threads ${cpu('workers').toFixed(2)}, event loop ${cpu('eventLoop').toFixed(2)}, V8 ${cpu('v8').toFixed(2)}, other ${cpu('other').toFixed(2)}; goal ≤ 0.8 ms a job on 2 cores (issue 54)`,
    };
  } finally {
    await alone.close();
  }
}

export async function benchEngine(): Promise<BenchRow[]> {
  const inputs = plausibleFixture(
    1,
    { teamId: 1, attack: 0.1, defence: 0.05 },
    { teamId: 2, attack: 0, defence: 0 },
  );
  const payloadJson = JSON.stringify({ match: inputs, as_of: '' });
  const seed = { lo: 0x5eed, hi: 0xbe7c };
  const cores = availableParallelism();
  const rows: BenchRow[] = [];
  const runners = [engineRunner('1 thread', 1), engineRunner(`${cores} threads`, cores), perStepRunner];
  try {
    // Warm-up: JIT and worker start-up are not part of a run. Each runner goes through the whole timed
    // path (run, sample paths, document) at a small and a larger size: a warm-up of bare runs left the
    // first sample paths and documents of the timed rows to deoptimise and recompile the engine's code,
    // a cost a long-running service pays once, not per run.
    for (const { run, samples } of runners) {
      for (const draws of WARM_UP_DRAWS) await timeOneRun(inputs, payloadJson, seed, draws, run, samples);
    }
    rows.push(compileRow(inputs));
    rows.push(fittedCompileRow(inputs));
    rows.push(documentRow());
    for (const draws of DRAW_COUNTS) {
      const naiveStart = performance.now();
      naiveDraws(draws);
      const naiveRate = (draws / (performance.now() - naiveStart)) * 1000;
      for (const { label, threads, run, samples } of runners) {
        // The median of a few runs below 1 M draws: one run of a few milliseconds is at the mercy of a
        // GC pause or a worker's wake-up.
        const walls: number[] = [];
        for (let repeat = 0; repeat < (draws < 1_000_000 ? RUN_REPEATS : 1); repeat++) {
          walls.push(await timeOneRun(inputs, payloadJson, seed, draws, run, samples));
        }
        walls.sort((a, b) => a - b);
        const wallMs = walls[walls.length >> 1]!;
        rows.push({
          group: GROUP,
          name: `full model + document, ${draws.toLocaleString('en-US')} draws, ${label}`,
          value: (draws / wallMs) * 1000,
          unit: 'draws/s',
          reference: { name: 'naive per-minute Bernoulli goals, 1 thread', value: naiveRate },
          note: `wall ${wallMs.toFixed(0)} ms; per thread ${(draws / wallMs / threads / (naiveRate / 1000)).toFixed(2)} x reference (goal 0.3)${GOAL_NOTES[draws] ?? ''}`,
        });
      }
    }
    rows.push(await fittedMillionRow(inputs, payloadJson, seed, runners[1]!));
  } finally {
    await Promise.all(runners.map(({ close }) => close()));
  }
  rows.push(...(await benchInPlay()));
  rows.push(await engineAloneRow());
  return rows;
}
