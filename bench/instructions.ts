// BENCH_ONLY=instructions (not in the default run: some minutes under valgrind): the CPU engine's
// instructions and mispredicted branches a draw, counted by callgrind, beside the naive per-minute
// sampler's (bench/engine.ts naiveDraws) counted the same way. Unlike wall or CPU time these counts do not
// move with the machine's load, so two versions of the per-draw loop can be compared on a busy shared
// machine (docs/decisions.md §13, issue 64). They are not times: a draw's latency chains and real
// mispredictions (callgrind simulates a simple predictor) cost more than their instructions say, so the
// timed rows of `BENCH_ONLY=engine` stay the figures the goals are stated in.
//
// Each case runs in a child process (bench/instructions-child.ts) once with one round of draws and once
// with three; the difference, over two rounds, is the steady state without start-up, compile and JIT.
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BenchRow } from './report.js';

/** The cases: bench/engine.ts's pre-match fixture, bench/in-play.ts's run from minute 60, the naive reference. */
export const INSTRUCTION_CASES = ['pre-match', 'in play from minute 60 (1-0)', 'naive'] as const;

const GROUP = 'engine (CPU, callgrind)';
const DRAWS = 20_000;
const CHILD = fileURLToPath(new URL('./instructions-child.js', import.meta.url));

interface Counts {
  instructions: number;
  mispredicts: number;
}

/** A callgrind summary's figure: the first number after `label` on its line of valgrind's output. */
function figure(output: string, label: RegExp): number {
  const match = output.match(label);
  if (!match?.[1]) throw new Error(`callgrind printed no ${label.source}:\n${output.slice(-2000)}`);
  return Number(match[1].replaceAll(',', ''));
}

function countRounds(name: string, rounds: number): Counts {
  const run = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      // V8 writes and rewrites its machine code on the heap.
      '--smc-check=all-non-file',
      '--branch-sim=yes',
      '--callgrind-out-file=/dev/null',
      process.execPath,
      // No compiler or collector threads: their work would be counted with the draws' at random.
      '--single-threaded',
      CHILD,
      name,
      String(DRAWS),
      String(rounds),
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (run.status !== 0)
    throw new Error(`callgrind on ${name} exited ${run.status}:\n${run.stderr.slice(-2000)}`);
  return {
    instructions: figure(run.stderr, /I\s+refs:\s+([\d,]+)/),
    mispredicts: figure(run.stderr, /Mispredicts:\s+([\d,]+)/),
  };
}

/** A case's steady state a draw: three rounds less one, over two rounds of DRAWS. */
function perDraw(name: string): Counts {
  const one = countRounds(name, 1);
  const three = countRounds(name, 3);
  return {
    instructions: (three.instructions - one.instructions) / (2 * DRAWS),
    mispredicts: (three.mispredicts - one.mispredicts) / (2 * DRAWS),
  };
}

function hasValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function benchInstructions(): Promise<BenchRow[]> {
  if (!hasValgrind()) {
    return [
      { group: GROUP, name: 'instructions a draw', value: 0, unit: 'instructions', note: 'no valgrind' },
    ];
  }
  const naive = perDraw('naive');
  const rows: BenchRow[] = [];
  for (const name of INSTRUCTION_CASES) {
    if (name === 'naive') continue;
    const counts = perDraw(name);
    rows.push({
      group: GROUP,
      name: `instructions a draw, ${name}`,
      value: counts.instructions,
      unit: 'instructions',
      reference: { name: 'naive per-minute Bernoulli goals', value: naive.instructions },
      note: `${counts.mispredicts.toFixed(0)} mispredicted branches a draw (naive ${naive.mispredicts.toFixed(0)}; callgrind's simulated predictor); ${DRAWS.toLocaleString('en-US')} draws a round, one thread`,
      fields: { instructions: counts.instructions, mispredicts: counts.mispredicts, naive },
    });
  }
  return rows;
}
