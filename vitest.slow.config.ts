import { defineConfig } from 'vitest/config';
import { SIZED, SLOW_ONLY, sharedTestOptions, sizesOf } from './vitest.config.js';

// The slow tier, `npm run test:slow` (README "Tests"; the list and the sizes are in vitest.config.ts):
// run once against PostgreSQL in CI, after the fast tier on both back ends.
export default defineConfig({
  test: {
    ...sharedTestOptions,
    // Four files at a time: its seven files mostly wait (on processes, lost connections, a client's
    // stream), and two at a time left a core of CI's two idle (1m55s of CPU in 2m24s). On a clean clone's
    // CI, quiet: 2m24s with two, 1m36s with four.
    maxWorkers: 4,
    env: sizesOf('slow'),
    include: [...SLOW_ONLY, ...Object.keys(SIZED)],
  },
});
