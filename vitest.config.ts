import { configDefaults, defineConfig } from 'vitest/config';

// Two tiers (README "Tests"). The fast tier is `npm test`: every file but SLOW_ONLY, with the SIZED ones
// small. The slow tier is `npm run test:slow` (vitest.slow.config.ts): SLOW_ONLY and the SIZED files at
// full size, run once against PostgreSQL in CI (.ci/run). Seconds are per file, from one run on the 2-core
// CI machine against PostgreSQL.

/** The slow tier's own files: sweeps and several processes, each of them on PostgreSQL only. */
export const SLOW_ONLY = [
  // The connection lost at each statement of a batch submission, ~55 s.
  'test/faults/batch-reservation.test.ts',
  // The connection lost at each statement of a cache hit's commit, ~32 s.
  'test/faults/one-commit.test.ts',
  'test/faults/projection-delivery.test.ts',
  // Two API and two worker processes on one server and Redis, ~8 s.
  'test/faults/several-processes.test.ts',
];

/** Files both tiers run, sized by an environment variable: [fast tier, slow tier]. */
export const SIZED: Record<string, { variable: string; fast: string; slow: string }> = {
  // A batch through its results stream: ~120 s for 1,000 items.
  'test/http/batch-stream.test.ts': { variable: 'BATCH_STREAM_ITEMS', fast: '100', slow: '1000' },
  // Hostile requests over every route: ~44 s for 5,000.
  'test/http/fuzz.test.ts': { variable: 'FUZZ_RUNS', fast: '500', slow: '5000' },
  // The Python client's suite, its batch streamed with memory flat at this many items: ~150 s at 1,000.
  'test/clients/python-client.test.ts': { variable: 'MATCHSIM_STREAM_ITEMS', fast: '100', slow: '1000' },
};

/** The sizes of a tier; a size given in the environment wins (FUZZ_RUNS=20000 npm test). */
export function sizesOf(tier: 'fast' | 'slow'): Record<string, string> {
  return Object.fromEntries(
    Object.values(SIZED).map((size) => [size.variable, process.env[size.variable] ?? size[tier]]),
  );
}

/**
 * Tests whose outcome does not depend on the back end: the engine, kernels and model open no database;
 * the browser and client tests check the pages and the typed client against a service; `npm start` is
 * tested on its embedded default whatever DATABASE_URL says. CI runs them against PostgreSQL only, and
 * the rest (`--project both-backends`) on PGlite too.
 */
const ONE_BACKEND = [
  'test/engine/**/*.test.ts',
  'test/gpu/**/*.test.ts',
  'test/model/**/*.test.ts',
  'test/projections/season-sampler.test.ts',
  'test/browser/**/*.test.ts',
  // The typed clients' packages and their live tests against a service: what a client reads of either
  // back end is the wire contract, which every HTTP test checks on both (test/helpers/wire-contract.ts).
  'test/clients/client-package.test.ts',
  'test/clients/typescript-client.test.ts',
  'test/clients/python-package.test.ts',
  'test/clients/python-client.test.ts',
  'test/cli/npm-start.test.ts',
  // The CLI beside a service on the embedded default, whatever DATABASE_URL says.
  'test/cli/cli-beside-service.test.ts',
  // Usage and the README's Node line: no database.
  'test/cli/usage.test.ts',
  'test/cli/readme-node-line.test.ts',
  // Functions of no database: amounts and plans, the Node version check, JSON positions, lineups and
  // formations, the worker's claim sizes, margin removal, the Compose file, the service's address file,
  // retry advice, webhook signatures; and the postgres client's patches, read from its files.
  'test/billing/amounts.test.ts',
  'test/billing/plans.test.ts',
  'test/cli/node-version.test.ts',
  'test/fixtures/json-positions.test.ts',
  'test/fixtures/predicted-lineup.test.ts',
  'test/jobs/worker-claims.test.ts',
  'test/market/margin-removal.test.ts',
  'test/operations/compose.test.ts',
  'test/operations/service-address.test.ts',
  'test/simulations/retry-advice.test.ts',
  'test/webhooks/signature.test.ts',
  'test/db/postgres-patches.test.ts',
  // The embedded database's own lock file and socket patch: PGlite whatever DATABASE_URL says, so the
  // PostgreSQL pass runs them on PGlite already (the socket's test: 16 s of that pass in a CI run).
  'test/db/embedded-lock.test.ts',
  'test/db/pglite-socket-patch.test.ts',
];

export const sharedTestOptions = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  // Database tests create their own database per file; two cores in CI, so keep parallelism modest. Three
  // at a time was tried (a clean clone's .ci/run, quiet): its three test phases took 10 min 17 s in one run
  // and 11 min 39 s in another, against 11 min 11 s with two: no gain beyond the runs' own spread.
  maxWorkers: 2,
  pool: 'forks' as const,
  // Dawn's and Mesa's native lines about software rendering, kept out of the run's output; the run's
  // migrated database, copied for each test file.
  globalSetup: ['test/helpers/native-warnings.ts', 'test/helpers/database-template.ts'],
};

export default defineConfig({
  test: {
    ...sharedTestOptions,
    // The fast tier runs each worker's files one after another in one process: the modules they import
    // (the service, Fastify, zod's schemas, PGlite) are loaded once a worker, not once a file, and each file
    // still makes its own database (test/helpers/database.ts) and service. Measured in CI's PGlite pass
    // (.ci/run): vitest's import time 353 → 23 s, ten of its files 57 and 54 → 36 and 36 s of CPU in
    // alternating runs at load 12–14; the PostgreSQL pass's 162 files 349 + 44 s of CPU at load 11, about
    // 8 min isolated. The slow tier (vitest.slow.config.ts) stays isolated. In the config, not on CI's
    // command line, so that `npm test` is the same run here and in CI (README).
    isolate: false,
    env: sizesOf('fast'),
    projects: [
      { extends: true, test: { name: 'one-backend', include: ONE_BACKEND } },
      {
        extends: true,
        test: {
          name: 'both-backends',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ONE_BACKEND, ...SLOW_ONLY],
        },
      },
    ],
  },
});
