// What the service's worker claims (src/server.ts workerClaims): its room is what the engine can begin
// soon unless WORKER_CLAIM_DRAWS says otherwise, and beyond it the runs the engine counts whole
// (smallDraws, 20,000: fallback/cpu-engine.ts WHOLE_RUN_MAX_DRAWS), docs/decisions.md §6.
import { afterAll, describe, expect, it } from 'vitest';
import { WHOLE_RUN_MAX_DRAWS } from '../../fallback/cpu-engine.js';
import { createSimulationEngine } from '../../src/engine/runner.js';
import { workerClaims } from '../../src/server.js';

const engine = createSimulationEngine({ mode: 'cpu', cpuThreads: 0 });
afterAll(() => engine.close());

describe("the service's worker claims", () => {
  it("claims beyond its room the runs its engine counts whole, and as far ahead as the engine's speed", () => {
    const claims = workerClaims('server', engine, 0);
    expect(engine.smallDraws).toBe(WHOLE_RUN_MAX_DRAWS);
    expect(claims.smallDraws).toBe(WHOLE_RUN_MAX_DRAWS);
    expect(claims.claimDraws?.()).toBe(engine.drawsAhead());
    expect(claims.concurrency).toBe(256);
  });

  it('holds WORKER_CLAIM_DRAWS when it is set, and fewer jobs on PGlite', () => {
    const claims = workerClaims('embedded', engine, 3_000_000);
    expect(claims.claimDraws?.()).toBe(3_000_000);
    expect(claims.smallDraws).toBe(WHOLE_RUN_MAX_DRAWS);
    expect(claims.concurrency).toBe(16);
  });
});
