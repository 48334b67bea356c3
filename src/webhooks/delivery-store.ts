// Every statement on webhook_deliveries (docs/api.md §6, Delivery) but their making (the fan-out of new
// events to the endpoints subscribed to them, written with the events: event-store.ts insertEvents): the
// workers' claim (one statement, FOR UPDATE SKIP LOCKED, under a lease as jobs are claimed: a worker that
// dies mid-delivery leaves a lease that runs out, and another worker sends the same event again), the
// outcomes, and resends.
import type { Sql, TransactionSql } from '../db/connection.js';

type Db = Sql | TransactionSql;

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: number;
  eventId: string;
  endpointId: string;
  orgId: string;
  attempts: number;
  createdAt: Date;
  body: string;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** What a claim takes: at most `n` deliveries, within the limits of what may be in flight at once. */
export interface ClaimRequest {
  workerId: string;
  n: number;
  leaseMs: number;
  now: Date;
  /** In flight at once per endpoint (every worker's leases counted); 1 while its breaker is half open. */
  perEndpoint: number;
  /** In flight at once per organisation and mode, across its endpoints. */
  perOrganisation: number;
}

/**
 * Up to `n` due deliveries of enabled endpoints whose breaker is not open, leased to `workerId` until
 * now + leaseMs; each claim counts an attempt. A delivery whose lease ran out (its worker died) is due
 * again. Fair (issue 51): the deliveries in flight now, every worker's, are counted, so an endpoint gets
 * at most `perEndpoint` at once (1 after an attempt without an answer) and an organisation's endpoints
 * of one mode at most `perOrganisation`; and the claim goes round the organisations, each one's oldest
 * delivery first, then each one's second, …, an organisation's own going round its endpoints the same
 * way. Each endpoint's due deliveries are read through its own index (webhook_deliveries_endpoint_due),
 * so a backlog of one organisation costs the claim no more than a short one. The fair choice is made on
 * the statement's snapshot and the chosen rows are locked with SKIP LOCKED: two claims at once never take
 * the same delivery, and at worst each fills what it saw as free (briefly up to twice a limit).
 */
export async function claimDeliveries(sql: Sql, claim: ClaimRequest): Promise<ClaimedDelivery[]> {
  const { now, perEndpoint, perOrganisation } = claim;
  const leaseEnd = new Date(now.getTime() + claim.leaseMs);
  return sql<ClaimedDelivery[]>`
    WITH in_flight AS (
      SELECT endpoint_id, count(*)::int AS n FROM webhook_deliveries
      WHERE status = 'pending' AND lease_owner IS NOT NULL AND lease_expires_at > ${now}
      GROUP BY endpoint_id
    ), endpoints AS (
      SELECT e.id, e.org_id, e.mode, e.enabled, e.paused_until,
             CASE WHEN e.unanswered > 0 THEN 1 ELSE ${perEndpoint}::int END - COALESCE(f.n, 0) AS room,
             ${perOrganisation}::int - COALESCE(sum(f.n) OVER (PARTITION BY e.org_id, e.mode), 0) AS org_room
      FROM webhook_endpoints e LEFT JOIN in_flight f ON f.endpoint_id = e.id
    ), candidates AS (
      SELECT c.id, c.next_attempt_at, ep.org_id, ep.mode, ep.room, ep.org_room,
             row_number() OVER (PARTITION BY ep.id ORDER BY c.next_attempt_at, c.id) AS endpoint_rank
      FROM endpoints ep
      CROSS JOIN LATERAL (
        SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.endpoint_id = ep.id AND d.status = 'pending' AND d.next_attempt_at <= ${now}
          AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ${now})
        ORDER BY d.next_attempt_at, d.id
        LIMIT ${perEndpoint}::int
      ) c
      WHERE ep.enabled AND ep.room > 0 AND ep.org_room > 0
        AND (ep.paused_until IS NULL OR ep.paused_until <= ${now})
    ), ranked AS (
      SELECT id, next_attempt_at, org_room,
             row_number() OVER (PARTITION BY org_id, mode ORDER BY endpoint_rank, next_attempt_at, id)
               AS org_rank
      FROM candidates WHERE endpoint_rank <= room
    ), fair AS (
      SELECT id FROM ranked WHERE org_rank <= org_room
      ORDER BY org_rank, next_attempt_at, id
      LIMIT ${claim.n}
    ), due AS (
      SELECT d.id FROM webhook_deliveries d JOIN fair ON fair.id = d.id
      WHERE d.status = 'pending' AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ${now})
      FOR UPDATE OF d SKIP LOCKED
    ), claimed AS (
      UPDATE webhook_deliveries d
      SET lease_owner = ${claim.workerId}, lease_expires_at = ${leaseEnd}, attempts = d.attempts + 1
      FROM due WHERE d.id = due.id
      RETURNING d.id, d.event_id, d.endpoint_id, d.attempts, d.created_at
    )
    SELECT c.id, c.event_id, c.endpoint_id, e.org_id, c.attempts, c.created_at, ev.body, e.url, e.secret,
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

/** A claimed delivery as its outcome names it: the row, and the endpoint whose row the outcome changes too. */
export interface DeliveryRef {
  id: number;
  endpointId: string;
}

/**
 * The endpoint's row, locked for the outcome's changes to it (FOR NO KEY UPDATE, as an UPDATE of its
 * breaker and failure fields takes): an outcome's first statement locks it before the delivery's row, in
 * the order a delete of the endpoint takes them (the endpoint, then its deliveries by ON DELETE CASCADE).
 * Taken the other way round, the two waited for each other: "deadlock detected"
 * (test/faults/webhook-endpoint-delete.test.ts). An endpoint deleted meanwhile gives no row: the
 * outcome changes nothing (its delivery went with the endpoint).
 */
const ENDPOINT_LOCKED = (db: Db, delivery: DeliveryRef) => db`
  (SELECT e.id FROM webhook_endpoints e WHERE e.id = ${delivery.endpointId} FOR NO KEY UPDATE)`;

/** Delivered: the row is done (only while `workerId` still holds its lease). */
export async function recordDelivered(
  db: Db,
  delivery: DeliveryRef,
  workerId: string,
  outcome: AttemptOutcome,
  now: Date,
): Promise<boolean> {
  const rows = await db`
    UPDATE webhook_deliveries
    SET status = 'succeeded', delivered_at = ${now}, last_attempt_at = ${now}, last_status = ${outcome.status},
        last_error = NULL, lease_owner = NULL, lease_expires_at = NULL
    WHERE id = ${delivery.id} AND lease_owner = ${workerId} AND status = 'pending'
      AND endpoint_id = ${ENDPOINT_LOCKED(db, delivery)}
    RETURNING id`;
  return rows.length === 1;
}

/** A failed attempt: due again at `retryAt`, or `failed` for good when it is null. */
export async function recordAttemptFailed(
  db: Db,
  delivery: DeliveryRef,
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
    WHERE id = ${delivery.id} AND lease_owner = ${workerId} AND status = 'pending'
      AND endpoint_id = ${ENDPOINT_LOCKED(db, delivery)}
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
