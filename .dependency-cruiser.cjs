// The arrows of docs/ARCHITECTURE.md, checked by `npm run lint:deps` (part of `npm test`).
// http → domain → db; the engine (src/engine, gpu/, fallback/) knows nothing of HTTP or the database;
// gpu/ and fallback/ share only the engine contract; the offline model tooling stays offline; no cycles.
const DOMAIN =
  '^src/(accounts|billing|limits|fixtures|idempotency|jobs|results|simulations|projections|webhooks|operations)/';

// The domain's rooms from the bottom up: a room imports only rooms below it (no cycles between rooms).
const LAYERS = [
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
      name: 'domain-not-http',
      comment: 'The domain returns domain values and errors; only src/http knows requests and responses.',
      severity: 'error',
      from: { path: `${DOMAIN}|^src/(db|engine)/|^src/(errors|ids|config)\\.ts$` },
      to: { path: '^src/http/' },
    },
    {
      name: 'db-below-domain',
      comment: 'src/db is the bottom room: connection, migrations, transactions, settings.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: `${DOMAIN}|^src/(engine|cli)/|^src/(server|wiring)\\.ts$` },
    },
    {
      name: 'engine-contract-only',
      comment: 'gpu/, fallback/ and the engine contract import nothing of src/ but the contract itself.',
      severity: 'error',
      from: { path: '^(gpu|fallback)/|^src/engine/contract/' },
      to: { path: '^src/', pathNot: '^src/engine/contract/' },
    },
    {
      name: 'engine-apart',
      comment:
        'The engine never touches HTTP, the database or the domain: src/engine imports src/engine only.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/', pathNot: '^src/engine/' },
    },
    {
      name: 'contract-self-contained',
      comment: 'The engine contract depends on nothing of the repository outside itself.',
      severity: 'error',
      from: { path: '^src/engine/contract/' },
      to: { path: '^(gpu|fallback|model|bench|test)/|^src/(?!engine/contract/)' },
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
