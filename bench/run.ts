// `npm run bench`: every figure the issues ask for, each next to its reference measured in the same run.
// BENCH_ONLY=engine,fair,gpu,host,http,projections,simulations,webhooks runs a subset; BENCH_ONLY=instructions
// (bench/instructions.ts) runs only when named. Set DATABASE_URL to measure the HTTP figures on a
// PostgreSQL server (the goals are stated for one); without it they run on the embedded PGlite.
// BENCH_JSON=file also writes every row there as JSON (bench/report.ts).
import { benchEngine } from './engine.js';
import { benchFairShares } from './fair-shares.js';
import { benchGpu } from './gpu.js';
import { benchHost } from './host.js';
import { benchHttp } from './http.js';
import { benchInstructions } from './instructions.js';
import { benchProjections } from './projections.js';
import { type BenchRow, printRows, writeJsonRows } from './report.js';
import { benchChildren } from './servers.js';
import { benchSimulations } from './simulations.js';
import { benchWebhooks } from './webhooks.js';

type Bench = () => Promise<BenchRow[]>;
const benches: Record<string, Bench> = {
  engine: benchEngine,
  fair: benchFairShares,
  gpu: benchGpu,
  host: benchHost,
  http: benchHttp,
  instructions: benchInstructions,
  projections: benchProjections,
  simulations: benchSimulations,
  webhooks: benchWebhooks,
};

// Server processes the benches fork end with this process, also when a bench fails.
process.on('exit', () => {
  for (const child of benchChildren) child.kill('SIGTERM');
});

/** Benches run only when BENCH_ONLY names them (instructions: some minutes under valgrind). */
const onRequest = new Set(['instructions']);
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const rows: BenchRow[] = [];
for (const [name, bench] of Object.entries(benches)) {
  if (only ? !only.includes(name) : onRequest.has(name)) continue;
  console.error(`running ${name}…`);
  rows.push(...(await bench()));
}
printRows(rows);
writeJsonRows(rows, process.env.BENCH_JSON);
process.exit(0);
