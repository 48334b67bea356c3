// The webhook endpoint use cases (docs/api.md §6): register (at most 16 an organisation; the
// URL checked by url-guard.ts), list, read, change, delete, rotate the secret. The secret is shown only
// in the answers of registration and rotation; every other view leaves it out (src/http/views/webhooks.ts).
import type { Owner } from '../accounts/keys.js';
import type { Sql } from '../db/connection.js';
import { databaseRead, databaseWrite, inTransaction } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { newId, randomBase62 } from '../ids.js';
import { type Page, pageOf } from '../simulations/listings.js';
import {
  deleteEndpoint,
  type EndpointChanges,
  getEndpoint,
  insertEndpoint,
  listEndpoints,
  rotateSecret,
  updateEndpoint,
} from './endpoint-store.js';
import type { EventType, WebhookEndpoint } from './types.js';
import { checkEndpointUrl, type UrlPolicy } from './url-guard.js';

/** docs/api.md §6: endpoints an organisation may have, live and test together. */
export const ENDPOINTS_PER_ORG = 16;
/** After a rotation the old secret still signs (a second v1=) for this long. */
export const PREVIOUS_SECRET_VALID_MS = 24 * 3600 * 1000;

export interface EndpointDeps {
  sql: Sql;
  clock: () => Date;
  policy: UrlPolicy;
}

function newSecret(): string {
  return `whsec_${randomBase62(32)}`;
}

function missing(id: string): ApiError {
  return new ApiError('resource_missing', { message: `No webhook endpoint ${id}.` });
}

export async function createEndpoint(
  deps: EndpointDeps,
  owner: Owner,
  input: { url: string; events: readonly EventType[]; description?: string | undefined },
): Promise<WebhookEndpoint> {
  await checkEndpointUrl(input.url, deps.policy);
  const created = await inTransaction(deps.sql, {}, (tx) =>
    insertEndpoint(
      tx,
      owner,
      {
        id: newId('we', 20),
        url: input.url,
        description: input.description ?? null,
        events: [...new Set(input.events)],
        secret: newSecret(),
      },
      ENDPOINTS_PER_ORG,
      deps.clock(),
    ),
  );
  if (!created) {
    throw new ApiError('webhook_endpoints_exceeded', { recovery: { max_endpoints: ENDPOINTS_PER_ORG } });
  }
  return created;
}

export async function listWebhookEndpoints(
  deps: EndpointDeps,
  owner: Owner,
  page: { limit: number; startingAfter?: string | undefined },
): Promise<Page<WebhookEndpoint>> {
  return pageOf(await databaseRead(() => listEndpoints(deps.sql, owner, page)), page.limit);
}

export async function readEndpoint(deps: EndpointDeps, owner: Owner, id: string): Promise<WebhookEndpoint> {
  const endpoint = await databaseRead(() => getEndpoint(deps.sql, owner, id));
  if (!endpoint) throw missing(id);
  return endpoint;
}

export async function changeEndpoint(
  deps: EndpointDeps,
  owner: Owner,
  id: string,
  changes: EndpointChanges,
): Promise<WebhookEndpoint> {
  if (changes.url !== undefined) await checkEndpointUrl(changes.url, deps.policy);
  const events = changes.events ? [...new Set(changes.events)] : undefined;
  const updated = await databaseWrite(() =>
    updateEndpoint(deps.sql, owner, id, { ...changes, events }, deps.clock()),
  );
  if (!updated) throw missing(id);
  return updated;
}

export async function removeEndpoint(deps: EndpointDeps, owner: Owner, id: string): Promise<void> {
  if (!(await databaseWrite(() => deleteEndpoint(deps.sql, owner, id)))) throw missing(id);
}

export async function rotateEndpointSecret(
  deps: EndpointDeps,
  owner: Owner,
  id: string,
): Promise<WebhookEndpoint> {
  const now = deps.clock();
  const until = new Date(now.getTime() + PREVIOUS_SECRET_VALID_MS);
  const rotated = await databaseWrite(() => rotateSecret(deps.sql, owner, id, newSecret(), until, now));
  if (!rotated) throw missing(id);
  return rotated;
}
