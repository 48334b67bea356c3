// Every statement on webhook_events (docs/api.md §6): the outbox's inserts, in the transaction of the
// change each event reports, with their deliveries' fan-out; the reads of the events API (30 days back);
// the purge of older ones.
import type { Owner } from '../accounts/keys.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import type { EventType, WebhookEvent } from './types.js';

type Db = Sql | TransactionSql;

/** How long events are kept and listed (docs/api.md §6). */
export const EVENT_RETENTION_MS = 30 * 24 * 3600 * 1000;

/**
 * Inserts events and schedules their deliveries, in one statement: each event inserted gets one pending
 * delivery per endpoint of its organisation and mode subscribed to it (the fan-out; the deliveries are
 * delivery-store.ts's rows from then on). An event already recorded for the same type and object (a job
 * succeeds once, a batch completes once) is skipped, with its deliveries. Returns the events inserted
 * (those given whose ids the statement returns: the rows, bodies included, are not read back) and how
 * many deliveries were made. The fan-out had a statement of its own, one more in every store of a
 * worker's pack (docs/decisions.md §6, "Storing").
 */
export async function insertEvents(
  tx: TransactionSql,
  events: readonly WebhookEvent[],
): Promise<{ inserted: WebhookEvent[]; deliveries: number }> {
  if (events.length === 0) return { inserted: [], deliveries: 0 };
  const rows = events.map((event) => ({
    id: event.id,
    org_id: event.orgId,
    mode: event.mode,
    type: event.type,
    object_id: event.objectId,
    body: event.body,
    created_at: event.createdAt.toISOString(),
  }));
  const inserted = await tx<Array<{ id: string; fannedOut: number }>>`
    WITH inserted AS (
      INSERT INTO webhook_events (id, org_id, mode, type, object_id, body, created_at)
      SELECT id, org_id, mode, type, object_id, body, created_at
      FROM json_to_recordset(${JSON.stringify(rows)}::text::json) AS r(
        id text, org_id text, mode text, type text, object_id text, body text, created_at timestamptz)
      ON CONFLICT (type, object_id) WHERE type <> 'credits.low' DO NOTHING
      RETURNING id, org_id, mode, type, created_at
    ), fanned_out AS (
      INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
      SELECT ev.id, e.id, ev.created_at, ev.created_at
      FROM inserted ev
      JOIN webhook_endpoints e ON e.org_id = ev.org_id AND e.mode = ev.mode AND e.enabled
        AND ev.type = ANY (e.events)
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    SELECT inserted.id, (SELECT count(*) FROM fanned_out)::int AS fanned_out FROM inserted`;
  const ids = new Set(inserted.map((row) => row.id));
  return {
    inserted: events.filter((event) => ids.has(event.id)),
    deliveries: inserted[0]?.fannedOut ?? 0,
  };
}

export async function getEvent(db: Db, owner: Owner, id: string, since: Date): Promise<WebhookEvent | null> {
  const [row] = await db<WebhookEvent[]>`
    SELECT * FROM webhook_events
    WHERE id = ${id} AND org_id = ${owner.orgId} AND mode = ${owner.mode} AND created_at >= ${since}`;
  return row ?? null;
}

/** The owner's events since `since`, newest first, `limit + 1` rows, optionally of one type. */
export async function listEvents(
  db: Db,
  owner: Owner,
  page: { limit: number; startingAfter?: string | undefined; type?: EventType | undefined; since: Date },
): Promise<WebhookEvent[]> {
  return db<WebhookEvent[]>`
    SELECT * FROM webhook_events e
    WHERE e.org_id = ${owner.orgId} AND e.mode = ${owner.mode} AND e.created_at >= ${page.since}
      AND (${page.type ?? null}::text IS NULL OR e.type = ${page.type ?? null})
      AND (${page.startingAfter ?? null}::text IS NULL OR (e.created_at, e.id) < (
        SELECT c.created_at, c.id FROM webhook_events c
        WHERE c.id = ${page.startingAfter ?? null} AND c.org_id = ${owner.orgId} AND c.mode = ${owner.mode}))
    ORDER BY e.created_at DESC, e.id DESC
    LIMIT ${page.limit + 1}`;
}

/** Deletes events older than `before` (their deliveries go with them), up to `limit` a call. */
export async function purgeEventsBefore(db: Db, before: Date, limit = 1000): Promise<number> {
  const rows = await db`
    DELETE FROM webhook_events WHERE id IN (
      SELECT id FROM webhook_events WHERE created_at < ${before} ORDER BY created_at LIMIT ${limit})
    RETURNING id`;
  return rows.length;
}
