// In-play runs (issue 52): 100,000 draws from minute 60 end to end (compile, draws, sample paths,
// document) beside a pre-match run of the same draws, and a 110-step win-probability path of 10,000 draws
// a step with one compile (src/engine/compile-path.ts), on the CPU engine's pool of all cores. Goals:
// ≤ 80 ms and about a third of the pre-match run's draws' work; the path ≤ 1 s. Beside it the same path
// as the API runs it (POST /v1/simulations/path, a batch of in-play jobs): through the service's engine
// (src/engine/runner.ts), whose job threads compile the match once before kick-off and each minute's
// fixture table from it (src/engine/job-threads.ts), each minute with its document.
import { availableParallelism } from 'node:os';
import { createCpuEngine } from '../fallback/cpu-engine.js';
import { recordSamplePaths } from '../fallback/engine.js';
import { compileFixture } from '../src/engine/compile.js';
import { compilePath, pathStates } from '../src/engine/compile-path.js';
import type { CompileCacheStats } from '../src/engine/job-threads.js';
import { createSimulationEngine, type EngineJob } from '../src/engine/runner.js';
import { C_FT_GRID, GRID_SIZE, STEPS } from '../src/engine-contract/layout.js';
import type { MatchInputs } from '../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from '../test/engine/plausible-teams.js';
import { benchDocument } from './bench-document.js';
import type { BenchRow } from './report.js';

const GROUP = 'engine (CPU)';
const REPEATS = 5;
const IN_PLAY_DRAWS = 100_000;
const PATH_DRAWS = 10_000;
/** Paths timed through the service's engine (each some seconds on 2 cores). */
const SERVICE_PATHS = 3;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

export async function benchInPlay(): Promise<BenchRow[]> {
  const fixture = plausibleFixture(
    52,
    { teamId: 1, attack: 0.1, defence: 0.05 },
    { teamId: 2, attack: 0, defence: 0 },
  );
  const inputs: MatchInputs = {
    ...fixture,
    home: withAnnouncedLineup(fixture.home),
    away: withAnnouncedLineup(fixture.away),
  };
  const cores = availableParallelism();
  const engine = createCpuEngine({ threads: cores });
  const seed = { lo: 0x52, hi: 0x60 };
  const endToEnd = async (match: MatchInputs, draws: number) => {
    const started = performance.now();
    const compiled = compileFixture(match, defaultModelParams);
    const run = await engine.run(compiled, { draws, seed });
    benchDocument(match, compiled, run, draws, seed, recordSamplePaths);
    return { wall: performance.now() - started, runMs: run.runMs };
  };
  const at60: MatchInputs = { ...inputs, from_state: { minute: '60', score: { home: 1, away: 0 } } };
  const path = async () => {
    const started = performance.now();
    const compiled = compilePath(inputs, defaultModelParams, pathStates([], [], STEPS - 1));
    const runs = await Promise.all(compiled.map((tables) => engine.run(tables, { draws: PATH_DRAWS, seed })));
    const homeWins = runs.map(({ counts }) => {
      let wins = 0;
      for (let home = 1; home < GRID_SIZE; home++)
        for (let away = 0; away < home; away++) wins += counts[C_FT_GRID + home * GRID_SIZE + away]!;
      return wins / PATH_DRAWS;
    });
    return { wall: performance.now() - started, homeWins };
  };
  try {
    for (let i = 0; i < 2; i++) {
      await endToEnd(inputs, IN_PLAY_DRAWS);
      await endToEnd(at60, IN_PLAY_DRAWS);
      await path();
    }
    const preMatch: { wall: number; runMs: number }[] = [];
    const inPlay: { wall: number; runMs: number }[] = [];
    const paths: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      preMatch.push(await endToEnd(inputs, IN_PLAY_DRAWS));
      inPlay.push(await endToEnd(at60, IN_PLAY_DRAWS));
      paths.push((await path()).wall);
    }
    const preWall = median(preMatch.map((r) => r.wall));
    const inWall = median(inPlay.map((r) => r.wall));
    const preRun = median(preMatch.map((r) => r.runMs));
    const inRun = median(inPlay.map((r) => r.runMs));
    const pathWall = median(paths);
    const service = await servicePath(inputs);
    return [
      {
        group: GROUP,
        name: `in play: ${IN_PLAY_DRAWS.toLocaleString('en-US')} draws from minute 60 + document, ${cores} threads`,
        value: inWall,
        unit: 'ms',
        reference: { name: 'the same draws before the match', value: preWall },
        note: `draws alone ${inRun.toFixed(1)} ms against ${preRun.toFixed(1)} ms (${((100 * inRun) / preRun).toFixed(0)}%); goal ≤ 80 ms, about a third of the draws' work`,
        fields: { run_ms: inRun, pre_match_run_ms: preRun },
      },
      {
        group: GROUP,
        name: `win-probability path: ${STEPS} steps × ${PATH_DRAWS.toLocaleString('en-US')} draws, one compile, ${cores} threads`,
        value: pathWall,
        unit: 'ms',
        note: 'compile, every step’s run and its 1X2; goal ≤ 1 s',
      },
      {
        group: GROUP,
        name: `win-probability path as the API runs it: ${STEPS} in-play jobs × ${PATH_DRAWS.toLocaleString('en-US')} draws, ${cores} job threads`,
        value: service.seconds * 1000,
        unit: 'ms',
        reference: { name: 'the path on the pool (row above)', value: pathWall },
        note: `the service's engine: one pre-match compile, each minute's tables from it, its draws and its document; median of ${SERVICE_PATHS}; a path: ${service.compiles} compile${service.compiles === 1 ? '' : 's'} of tables, ${service.fromPreMatch} minutes' tables from it`,
        fields: { compiles_a_path: service.compiles, from_pre_match_a_path: service.fromPreMatch },
      },
    ];
  } finally {
    await engine.close();
  }
}

/**
 * Wall seconds of a path through the service's engine, median of SERVICE_PATHS after a warm-up: each a
 * match the engine has not compiled (its ratings moved a little), as a path of a new match is; and what
 * the compile cache did for a path (src/engine/job-threads.ts CompileCacheStats).
 */
async function servicePath(
  inputs: MatchInputs,
): Promise<{ seconds: number; compiles: number; fromPreMatch: number }> {
  const engine = createSimulationEngine({ mode: 'cpu' });
  const context = { progress: async () => {}, signal: new AbortController().signal };
  const states = pathStates([], [], STEPS - 1);
  const asOf = new Date().toISOString();
  const pathJobs = (n: number): EngineJob[] => {
    const match = { ...inputs, home: { ...inputs.home, attack: inputs.home.attack + n * 1e-6 } };
    return states.map((from_state, step) => ({
      id: `path_${n}_${step}`,
      mode: 'live',
      draws: PATH_DRAWS,
      seed: (0x5200 + step).toString(16),
      dataVersion: 'bench',
      queuedMs: 0,
      payloadJson: JSON.stringify({ match: { ...match, from_state }, as_of: asOf }),
    }));
  };
  const cacheStats = () => engine.health().compile_cache as CompileCacheStats;
  try {
    const seconds: number[] = [];
    const before = cacheStats();
    for (let n = 0; n <= SERVICE_PATHS; n++) {
      const jobs = pathJobs(n);
      const started = performance.now();
      const outcomes = await engine.runBatch(jobs, context);
      if (outcomes.some((outcome) => 'error' in outcome)) throw new Error('service path: a minute failed');
      if (n > 0) seconds.push((performance.now() - started) / 1000);
    }
    const after = cacheStats();
    const paths = SERVICE_PATHS + 1;
    return {
      seconds: median(seconds),
      compiles: (after.compiles - before.compiles) / paths,
      fromPreMatch: (after.fromPreMatch - before.fromPreMatch) / paths,
    };
  } finally {
    await engine.close();
  }
}
