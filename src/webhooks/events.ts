// The events use cases (docs/api.md §6): the caller's events of the last 30 days, newest first,
// optionally of one type; one event; and a resend of one event to one of the caller's endpoints.
import type { Owner } from '../accounts/keys.js';
import type { Sql } from '../db/connection.js';
import { databaseRead, databaseWrite } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { type Page, pageOf } from '../simulations/listings.js';
import { scheduleResend } from './delivery-store.js';
import { getEndpoint } from './endpoint-store.js';
import { EVENT_RETENTION_MS, getEvent, listEvents, purgeEventsBefore } from './event-store.js';
import type { EventType, WebhookEvent } from './types.js';

export interface EventDeps {
  sql: Sql;
  clock: () => Date;
}

function retainedSince(deps: EventDeps): Date {
  return new Date(deps.clock().getTime() - EVENT_RETENTION_MS);
}

export async function listWebhookEvents(
  deps: EventDeps,
  owner: Owner,
  page: { limit: number; startingAfter?: string | undefined; type?: EventType | undefined },
): Promise<Page<WebhookEvent>> {
  const since = retainedSince(deps);
  return pageOf(await databaseRead(() => listEvents(deps.sql, owner, { ...page, since })), page.limit);
}

export async function readEvent(deps: EventDeps, owner: Owner, id: string): Promise<WebhookEvent> {
  const event = await databaseRead(() => getEvent(deps.sql, owner, id, retainedSince(deps)));
  if (!event) throw new ApiError('resource_missing', { message: `No event ${id}.` });
  return event;
}

/** Sends the event again to the endpoint (both the caller's, in the same mode); answers the event. */
export async function resendEvent(
  deps: EventDeps,
  owner: Owner,
  eventId: string,
  endpointId: string,
): Promise<WebhookEvent> {
  const event = await readEvent(deps, owner, eventId);
  const endpoint = await databaseRead(() => getEndpoint(deps.sql, owner, endpointId));
  if (!endpoint) {
    throw new ApiError('resource_missing', {
      message: `No webhook endpoint ${endpointId}.`,
      param: 'endpoint_id',
    });
  }
  await databaseWrite(() => scheduleResend(deps.sql, event.id, endpoint.id, deps.clock()));
  return event;
}

/** The sweeper's chore: events (and their deliveries) older than 30 days go. */
export function purgeOldEvents(deps: Pick<EventDeps, 'sql'>, now: Date): Promise<number> {
  return purgeEventsBefore(deps.sql, new Date(now.getTime() - EVENT_RETENTION_MS));
}
