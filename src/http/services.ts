// The domain services the HTTP layer calls. Built once at boot (src/server.ts) and in tests.
import type { Ledger } from '../billing/ledger.js';
import type { EngineHealth } from '../engine/runner.js';
import type { SimulationRouteDeps } from './routes/simulations.js';

export interface Services {
  ledger: Ledger;
  engineHealth?: () => EngineHealth;
  simulations: SimulationRouteDeps;
}
