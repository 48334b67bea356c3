// The arrows of docs/ARCHITECTURE.md, checked by `npm run lint:deps` (part of `npm test`).
// http → domain → db; the engine in three floors (src/engine-contract < gpu/, fallback/ < src/engine, the
// runner) knows nothing of HTTP or the database; gpu/ and fallback/ share only the engine contract; the
// offline model tooling stays offline; no cycles.
const DOMAIN =
  '^src/(market|accounts|billing|limits|fixtures|idempotency|jobs|results|simulations|projections|webhooks|operations)/';

// The domain's rooms from the bottom up: a room imports only rooms below it (no cycles between rooms).
// src/market (margin removal, pure) stands at the bottom: it imports only src/errors.ts.
const LAYERS = [
  'market',
  'accounts',
  'limits',
  'billing',
  'fixtures',
  'idempotency',
  'results',
  'jobs',
  'simulations',
  'projections',
  'webhooks',
  'operations',
];
const layerRules = LAYERS.slice(0, -1).map((room, index) => ({
  name: `layers-${room}`,
  comment: `src/${room} sits below ${LAYERS.slice(index + 1).join(', ')} (docs/ARCHITECTURE.md).`,
  severity: 'error',
  from: { path: `^src/${room}/` },
  to: { path: `^src/(${LAYERS.slice(index + 1).join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-cycles',
      comment: 'No import cycle between files, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'jobs-one-door',
      comment:
        'The jobs and batches tables have one door: the JobQueue (src/jobs/queue.ts); outside src/jobs, ' +
        'their statement modules are imported for types only (docs/ARCHITECTURE.md).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/jobs/' },
      to: {
        path: '^src/jobs/(job-store|batch-store|delivery-locks|leases|job-outcomes)\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'queue-knows-no-kind',
      comment:
        'The queue and the worker of every job kind (src/jobs/kind-queue.ts, kind-worker.ts, claim-loop.ts, ' +
        "worker-chores.ts) know no kind: a kind's table, handler and price come to them, so a new kind needs " +
        'no worker of its own (docs/ARCHITECTURE.md, "Job kinds").',
      severity: 'error',
      from: { path: '^src/jobs/(kind-queue|kind-worker|claim-loop|worker-chores)\\.ts$' },
      to: {
        path: '^src/(projections|simulations|results|engine)/|^src/jobs/(job-store|batch-store|delivery-locks|leases|job-outcomes|outcome-store|worker|queue)\\.ts$',
      },
    },
    {
      name: 'domain-not-http',
      comment: 'The domain returns domain values and errors; only src/http knows requests and responses.',
      severity: 'error',
      from: {
        path: `${DOMAIN}|^src/(db|engine|engine-contract)/|^src/(errors|error-codes|ids|config)\\.ts$`,
      },
      to: { path: '^src/http/' },
    },
    {
      name: 'db-below-domain',
      comment: 'src/db is the bottom room: connection, migrations, transactions, settings.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: `${DOMAIN}|^src/(engine|engine-contract|cli)/|^src/(server|wiring)\\.ts$` },
    },
    // The engine stands in three floors (docs/ARCHITECTURE.md, "The engine's three floors"): the contract
    // (src/engine-contract) at the ground, the two engines (gpu/, fallback/) on it, the runner (src/engine)
    // above them. Each rule below forbids one arrow back down-to-up, so no floor can come to depend on one
    // above it and the floors never form a circle.
    {
      name: 'engine-contract-ground',
      comment:
        'The engine contract (layouts, tables, RNG, model parameters, match inputs) is what both engines and ' +
        'the host agree on, so it can depend on none of them: it imports nothing of the repository outside itself.',
      severity: 'error',
      from: { path: '^src/engine-contract/' },
      to: { path: '^(gpu|fallback|shaders|model|bench|test|scripts)/|^src/(?!engine-contract/)' },
    },
    {
      name: 'engines-on-contract',
      comment:
        'gpu/ and fallback/ stand on the contract alone: the runner above them chooses an engine and feeds it ' +
        'compiled fixtures, so an engine that reached into src/ (the runner, the domain) would run back up.',
      severity: 'error',
      from: { path: '^(gpu|fallback)/' },
      to: { path: '^src/', pathNot: '^src/engine-contract/' },
    },
    {
      name: 'runner-apart',
      comment:
        'The runner (src/engine) knows engines and the contract, never HTTP, the database or the domain: a job ' +
        'comes in as an EngineJob and leaves as a RunOutcome, and the worker maps its queue jobs to and from these.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/', pathNot: '^src/(engine|engine-contract)/' },
    },
    {
      name: 'engines-apart',
      comment:
        'gpu/ and fallback/ share only the contract: the GPU kernel must reproduce the CPU loop from the ' +
        'contract alone (test/gpu parity checks it), and the GPU engine gets its CPU fallback injected as a ' +
        'FixtureRunner (src/engine-contract/run.ts), so neither engine imports the other.',
      severity: 'error',
      from: { path: '^(gpu|fallback)/' },
      to: { path: '^(gpu|fallback)/', pathNot: '^$1/' },
    },
    {
      name: 'runner-through-engine-doors',
      comment:
        "The runner reaches each engine through its one door: fallback/cpu-engine.ts (which decides how a job's " +
        'draws are spread: whole on a job thread, or over its pool) and gpu/engine.ts; the per-draw loop, the ' +
        'workers and the dispatch behind them can change without the runner knowing.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^(gpu|fallback)/', pathNot: '^(fallback/cpu-engine|gpu/engine)\\.ts$' },
    },
    {
      name: 'engines-behind-runner',
      comment:
        'The service reaches the engines only through the runner (src/engine: SimulationEngine, EngineJob, ' +
        "RunOutcome); only the operators' GPU host check (src/cli/gpu-check) drives them directly.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(engine|cli)/' },
      to: { path: '^(gpu|fallback)/' },
    },
    {
      name: 'model-tooling-offline',
      comment:
        'The service reads the fitted files only; the fitting and backtest tooling is loaded by the CLI alone.',
      severity: 'error',
      from: { path: '^(src|gpu|fallback)/', pathNot: '^src/cli/main\\.ts$' },
      to: { path: '^model/' },
    },
    {
      name: 'shipped-code-not-tests',
      comment: 'Shipped code never imports tests or benchmarks.',
      severity: 'error',
      from: { path: '^(src|gpu|fallback|model)/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
    exclude: { path: '^(node_modules|dist)/' },
  },
};
