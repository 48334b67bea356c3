// Every statement on webhook_endpoints (docs/api.md §6): registration, reads by owner, changes,
// rotation and the delivery outcomes that mark an endpoint failing or disabled.
import type { Owner } from '../accounts/keys.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import type { EventType, WebhookEndpoint } from './types.js';

type Db = Sql | TransactionSql;

export interface NewEndpoint {
  id: string;
  url: string;
  description: string | null;
  events: readonly EventType[];
  secret: string;
}

/**
 * Inserts the endpoint unless the owner's organisation already has `max` (both modes counted); null
 * then. The organisation's row is locked first, so two registrations at once cannot both pass.
 */
export async function insertEndpoint(
  tx: TransactionSql,
  owner: Owner,
  endpoint: NewEndpoint,
  max: number,
  now: Date,
): Promise<WebhookEndpoint | null> {
  // NO KEY UPDATE: two registrations wait for each other, while the outbox's inserts (a key share of the
  // same row, through the foreign key) never wait for a registration.
  await tx`SELECT id FROM orgs WHERE id = ${owner.orgId} FOR NO KEY UPDATE`;
  const [count] = await tx<{ n: number }[]>`
    SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = ${owner.orgId}`;
  if (count!.n >= max) return null;
  const [row] = await tx<WebhookEndpoint[]>`
    INSERT INTO webhook_endpoints (id, org_id, mode, url, description, events, secret, created_at, updated_at)
    VALUES (${endpoint.id}, ${owner.orgId}, ${owner.mode}, ${endpoint.url}, ${endpoint.description},
            ${tx.array(endpoint.events as string[])}::text[], ${endpoint.secret}, ${now}, ${now})
    RETURNING *`;
  return row!;
}

export async function getEndpoint(db: Db, owner: Owner, id: string): Promise<WebhookEndpoint | null> {
  const [row] = await db<WebhookEndpoint[]>`
    SELECT * FROM webhook_endpoints WHERE id = ${id} AND org_id = ${owner.orgId} AND mode = ${owner.mode}`;
  return row ?? null;
}

/** The owner's endpoints newest first, `limit + 1` rows; a cursor not the owner's own starts nowhere. */
export async function listEndpoints(
  db: Db,
  owner: Owner,
  page: { limit: number; startingAfter?: string | undefined },
): Promise<WebhookEndpoint[]> {
  return db<WebhookEndpoint[]>`
    SELECT * FROM webhook_endpoints e
    WHERE e.org_id = ${owner.orgId} AND e.mode = ${owner.mode}
      AND (${page.startingAfter ?? null}::text IS NULL OR (e.created_at, e.id) < (
        SELECT c.created_at, c.id FROM webhook_endpoints c
        WHERE c.id = ${page.startingAfter ?? null} AND c.org_id = ${owner.orgId} AND c.mode = ${owner.mode}))
    ORDER BY e.created_at DESC, e.id DESC
    LIMIT ${page.limit + 1}`;
}

export interface EndpointChanges {
  url?: string | undefined;
  description?: string | null | undefined;
  events?: readonly EventType[] | undefined;
  enabled?: boolean | undefined;
}

/**
 * Applies the changes given; enabling again forgets the failures that disabled it, and enabling or a new
 * URL closes the breaker (delivery.ts): the receiver is tried again at once.
 */
export async function updateEndpoint(
  db: Db,
  owner: Owner,
  id: string,
  changes: EndpointChanges,
  now: Date,
): Promise<WebhookEndpoint | null> {
  const events = changes.events ? db.array(changes.events as string[]) : null;
  const [row] = await db<WebhookEndpoint[]>`
    UPDATE webhook_endpoints SET
      url = COALESCE(${changes.url ?? null}, url),
      description = CASE WHEN ${changes.description !== undefined} THEN ${changes.description ?? null} ELSE description END,
      events = COALESCE(${events}::text[], events),
      enabled = COALESCE(${changes.enabled ?? null}::boolean, enabled),
      failing_since = CASE WHEN ${changes.enabled === true} THEN NULL ELSE failing_since END,
      disabled_reason = CASE WHEN ${changes.enabled === true} THEN NULL ELSE disabled_reason END,
      unanswered = CASE WHEN ${changes.enabled === true || changes.url !== undefined} THEN 0 ELSE unanswered END,
      paused_until = CASE WHEN ${changes.enabled === true || changes.url !== undefined} THEN NULL
        ELSE paused_until END,
      updated_at = ${now}
    WHERE id = ${id} AND org_id = ${owner.orgId} AND mode = ${owner.mode}
    RETURNING *`;
  return row ?? null;
}

export async function deleteEndpoint(db: Db, owner: Owner, id: string): Promise<boolean> {
  const rows = await db`
    DELETE FROM webhook_endpoints WHERE id = ${id} AND org_id = ${owner.orgId} AND mode = ${owner.mode}
    RETURNING id`;
  return rows.length === 1;
}

/** A new secret; the current one keeps signing (a second v1=) until `previousUntil`. */
export async function rotateSecret(
  db: Db,
  owner: Owner,
  id: string,
  secret: string,
  previousUntil: Date,
  now: Date,
): Promise<WebhookEndpoint | null> {
  const [row] = await db<WebhookEndpoint[]>`
    UPDATE webhook_endpoints
    SET previous_secret = secret, previous_secret_expires_at = ${previousUntil}, secret = ${secret},
        updated_at = ${now}
    WHERE id = ${id} AND org_id = ${owner.orgId} AND mode = ${owner.mode}
    RETURNING *`;
  return row ?? null;
}

/** A delivery reached the endpoint: it is no longer failing. */
export async function markEndpointHealthy(db: Db, id: string): Promise<void> {
  await db`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${id} AND failing_since IS NOT NULL`;
}

/** An attempt got an HTTP answer, whatever its status: the endpoint's breaker closes. */
export async function closeBreaker(db: Db, id: string): Promise<void> {
  await db`
    UPDATE webhook_endpoints SET unanswered = 0, paused_until = NULL
    WHERE id = ${id} AND (unanswered > 0 OR paused_until IS NOT NULL)`;
}

/**
 * An attempt got no answer at `now`: the breaker opens for `pause.firstMs` doubling with each attempt in
 * a row without an answer, up to `pause.maxMs`, times `pause.jitter` (0.5 to 1). An attempt that ends
 * while the breaker is open was sent before it opened and counts for nothing more.
 */
export async function openBreaker(
  db: Db,
  id: string,
  now: Date,
  pause: { firstMs: number; maxMs: number; jitter: number },
): Promise<void> {
  await db`
    UPDATE webhook_endpoints SET
      unanswered = unanswered + 1,
      paused_until = ${now}::timestamptz + interval '1 millisecond'
        * round(LEAST(${pause.firstMs}::float8 * power(2, LEAST(unanswered, 30)), ${pause.maxMs}::float8)
          * ${pause.jitter}::float8)
    WHERE id = ${id} AND (paused_until IS NULL OR paused_until <= ${now})`;
}

/**
 * A delivery failed at `now`: the endpoint is failing from its first failure on, and disabled, with the
 * reason, once it has failed for `disable.afterMs` without a success in between.
 */
export async function markEndpointFailed(
  db: Db,
  id: string,
  now: Date,
  disable: { afterMs: number; reason: string },
): Promise<void> {
  const since = new Date(now.getTime() - disable.afterMs);
  await db`
    UPDATE webhook_endpoints SET
      failing_since = COALESCE(failing_since, ${now}),
      enabled = CASE WHEN COALESCE(failing_since, ${now}) <= ${since} THEN false ELSE enabled END,
      disabled_reason = CASE WHEN enabled AND COALESCE(failing_since, ${now}) <= ${since}
        THEN ${disable.reason} ELSE disabled_reason END
    WHERE id = ${id}`;
}
