// Every statement on webhook_deliveries (docs/api.md §6, Delivery): the fan-out of new events to the
// endpoints subscribed to them, the workers' claim (one statement, FOR UPDATE SKIP LOCKED, under a lease
// as jobs are claimed: a worker that dies mid-delivery leaves a lease that runs out, and another worker
// sends the same event again), the outcomes, and resends.
import type { Sql, TransactionSql } from '../db/connection.js';
import type { WebhookEvent } from './types.js';

type Db = Sql | TransactionSql;

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: number;
  eventId: string;
  endpointId: string;
  attempts: number;
  createdAt: Date;
  body: string;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/**
 * One pending delivery per event and endpoint of the event's organisation and mode subscribed to it; how
 * many were made.
 */
export async function fanOut(tx: TransactionSql, events: readonly WebhookEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const rows = events.map((event) => ({
    id: event.id,
    org_id: event.orgId,
    mode: event.mode,
    type: event.type,
    created_at: event.createdAt.toISOString(),
  }));
  const inserted = await tx`
    INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
    SELECT ev.id, e.id, ev.created_at, ev.created_at
    FROM json_to_recordset(${JSON.stringify(rows)}::text::json)
         AS ev(id text, org_id text, mode text, type text, created_at timestamptz)
    JOIN webhook_endpoints e ON e.org_id = ev.org_id AND e.mode = ev.mode AND e.enabled
      AND ev.type = ANY (e.events)
    ON CONFLICT DO NOTHING`;
  return inserted.count;
}

/**
 * Up to `n` due deliveries of enabled endpoints, leased to `workerId` until now + leaseMs; each claim
 * counts an attempt. A delivery whose lease ran out (its worker died) is due again.
 */
export async function claimDeliveries(
  sql: Sql,
  workerId: string,
  n: number,
  leaseMs: number,
  now: Date,
): Promise<ClaimedDelivery[]> {
  const leaseEnd = new Date(now.getTime() + leaseMs);
  return sql<ClaimedDelivery[]>`
    WITH due AS (
      SELECT d.id FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
      WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}
        AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ${now})
      ORDER BY d.next_attempt_at
      LIMIT ${n}
      FOR UPDATE OF d SKIP LOCKED
    ), claimed AS (
      UPDATE webhook_deliveries d
      SET lease_owner = ${workerId}, lease_expires_at = ${leaseEnd}, attempts = d.attempts + 1
      FROM due WHERE d.id = due.id
      RETURNING d.id, d.event_id, d.endpoint_id, d.attempts, d.created_at
    )
    SELECT c.id, c.event_id, c.endpoint_id, c.attempts, c.created_at, ev.body, e.url, e.secret,
           e.previous_secret, e.previous_secret_expires_at
    FROM claimed c
    JOIN webhook_events ev ON ev.id = c.event_id
    JOIN webhook_endpoints e ON e.id = c.endpoint_id
    ORDER BY c.id`;
}

export interface AttemptOutcome {
  status: number | null;
  error: string | null;
}

/** Delivered: the row is done (only while `workerId` still holds its lease). */
export async function recordDelivered(
  db: Db,
  id: number,
  workerId: string,
  outcome: AttemptOutcome,
  now: Date,
): Promise<boolean> {
  const rows = await db`
    UPDATE webhook_deliveries
    SET status = 'succeeded', delivered_at = ${now}, last_attempt_at = ${now}, last_status = ${outcome.status},
        last_error = NULL, lease_owner = NULL, lease_expires_at = NULL
    WHERE id = ${id} AND lease_owner = ${workerId} AND status = 'pending'
    RETURNING id`;
  return rows.length === 1;
}

/** A failed attempt: due again at `retryAt`, or `failed` for good when it is null. */
export async function recordAttemptFailed(
  db: Db,
  id: number,
  workerId: string,
  outcome: AttemptOutcome & { retryAt: Date | null },
  now: Date,
): Promise<boolean> {
  const rows = await db`
    UPDATE webhook_deliveries
    SET status = CASE WHEN ${outcome.retryAt}::timestamptz IS NULL THEN 'failed' ELSE 'pending' END,
        next_attempt_at = COALESCE(${outcome.retryAt}::timestamptz, next_attempt_at),
        last_attempt_at = ${now}, last_status = ${outcome.status}, last_error = ${outcome.error},
        lease_owner = NULL, lease_expires_at = NULL
    WHERE id = ${id} AND lease_owner = ${workerId} AND status = 'pending'
    RETURNING id`;
  return rows.length === 1;
}

/**
 * Sends the event to the endpoint again: a new delivery due now, or the pending one brought forward
 * (one delivery of an event to an endpoint at a time). Its 3 days of retries start now.
 */
export async function scheduleResend(db: Db, eventId: string, endpointId: string, now: Date): Promise<void> {
  await db`
    INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
    VALUES (${eventId}, ${endpointId}, ${now}, ${now})
    ON CONFLICT (event_id, endpoint_id) WHERE status = 'pending'
    DO UPDATE SET next_attempt_at = ${now}`;
}
