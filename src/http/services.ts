// The domain services the HTTP layer calls. Built once at boot (src/wiring.ts) and in tests.
import type { Ledger } from '../billing/ledger.js';
import type { EngineHealth } from '../engine/runner.js';
import type { ExpectedLineupSales } from '../fixtures/expected-lineup-sales.js';
import type { FixtureReadCache } from '../fixtures/read-cache.js';
import type { IdempotencyStore } from '../idempotency/store.js';
import type { UsageLimits } from '../limits/usage.js';
import type { Operator } from '../operations/operator.js';
import type { ProjectionService } from '../projections/service.js';
import type { SimulationService } from '../simulations/service.js';
import type { WebhookService } from '../webhooks/service.js';

export interface Services {
  ledger: Ledger;
  simulations: SimulationService;
  /** Season projections (src/projections). */
  projections: ProjectionService;
  usage: UsageLimits;
  idempotency: IdempotencyStore;
  expectedLineups: ExpectedLineupSales;
  operator: Operator;
  webhooks: WebhookService;
  /** The process's fixture read cache, made on first use (src/wiring.ts); its simulations read it too. */
  fixtureCache: () => Promise<FixtureReadCache>;
  /** The engine of this process, when it runs one (role worker or all). */
  engineHealth?: () => EngineHealth;
}
