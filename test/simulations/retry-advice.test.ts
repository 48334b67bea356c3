// Retry advice (src/simulations/retry-advice.ts): the draws still to run at the engine's measured speed,
// plus the queued draws for work still waiting; whole seconds from 1 to 25.
import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_SECONDS, retryAfterSeconds } from '../../src/simulations/retry-advice.js';

// One microsecond a draw: a million draws a second.
const engine = (queued: number) => ({
  estimateSeconds: (draws: number) => draws * 1e-6,
  assertAvailable() {},
  queuedDraws: () => queued,
});

describe('retry advice', () => {
  it("is a running job's remaining draws at the engine's speed, not a multiple of it", () => {
    expect(retryAfterSeconds(engine(5_000_000), 1_000_000, false)).toBe(1);
    expect(retryAfterSeconds(engine(0), 2_500_000, false)).toBe(3);
  });

  it('adds the draws queued with a job that is still waiting', () => {
    expect(retryAfterSeconds(engine(3_000_000), 1_000_000, true)).toBe(4);
    expect(retryAfterSeconds({ ...engine(0), queuedDraws: undefined }, 1_000_000, true)).toBe(1);
  });

  it('stays within 1 and 25 seconds', () => {
    expect(retryAfterSeconds(engine(0), 0, false)).toBe(1);
    expect(retryAfterSeconds(engine(900_000_000), 1000, true)).toBe(MAX_RETRY_AFTER_SECONDS);
  });
});
