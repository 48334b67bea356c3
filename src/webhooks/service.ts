// The webhooks room as the HTTP layer and the service graph see it (src/wiring.ts): endpoint and event
// use cases bound to their dependencies, the credits.low threshold, and the outbox the job and ledger
// transactions write into.
import type { Owner } from '../accounts/keys.js';
import { creditsNumber, creditsToMilli } from '../billing/amounts.js';
import type { Sql } from '../db/connection.js';
import { databaseRead, databaseWrite } from '../db/transactions.js';
import {
  changeEndpoint,
  createEndpoint,
  listWebhookEndpoints,
  readEndpoint,
  removeEndpoint,
  rotateEndpointSecret,
} from './endpoints.js';
import { listWebhookEvents, readEvent, resendEvent } from './events.js';
import { creditsLowThreshold, setCreditsLowThreshold } from './settings-store.js';
import type { UrlPolicy } from './url-guard.js';

export interface WebhookServiceDeps {
  sql: Sql;
  clock: () => Date;
  policy: UrlPolicy;
}

export function makeWebhookService(deps: WebhookServiceDeps) {
  // Each use case with its dependencies given: the routes pass the caller and the request's values.
  const bind =
    <A extends unknown[], T>(use: (d: WebhookServiceDeps, owner: Owner, ...rest: A) => T) =>
    (owner: Owner, ...rest: A) =>
      use(deps, owner, ...rest);
  return {
    createEndpoint: bind(createEndpoint),
    listEndpoints: bind(listWebhookEndpoints),
    readEndpoint: bind(readEndpoint),
    changeEndpoint: bind(changeEndpoint),
    removeEndpoint: bind(removeEndpoint),
    rotateSecret: bind(rotateEndpointSecret),
    listEvents: bind(listWebhookEvents),
    readEvent: bind(readEvent),
    resendEvent: bind(resendEvent),
    /** The credits.low threshold in credits; null when none is set. */
    async creditsLowThreshold(orgId: string): Promise<number | null> {
      const milli = await databaseRead(() => creditsLowThreshold(deps.sql, orgId));
      return milli === null ? null : creditsNumber(milli);
    },
    async setCreditsLowThreshold(orgId: string, credits: number | null): Promise<void> {
      const milli = credits === null ? null : creditsToMilli(credits);
      await databaseWrite(() => setCreditsLowThreshold(deps.sql, orgId, milli, deps.clock()));
    },
  };
}

export type WebhookService = ReturnType<typeof makeWebhookService>;
