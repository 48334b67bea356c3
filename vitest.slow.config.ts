import { defineConfig } from 'vitest/config';
import { SIZED, SLOW_ONLY, sharedTestOptions, sizesOf } from './vitest.config.js';

// The slow tier, `npm run test:slow` (README "Tests"; the list and the sizes are in vitest.config.ts):
// run once against PostgreSQL in CI, after the fast tier on both back ends.
export default defineConfig({
  test: {
    ...sharedTestOptions,
    env: sizesOf('slow'),
    include: [...SLOW_ONLY, ...Object.keys(SIZED)],
  },
});
