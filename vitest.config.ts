import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Database tests create their own database per file; two cores in CI, so keep parallelism modest.
    maxWorkers: 2,
    pool: 'forks',
  },
});
