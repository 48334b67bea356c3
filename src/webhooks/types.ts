// The webhooks room's values (docs/api.md §6): endpoints, events and their deliveries.
import type { Owner } from '../accounts/keys.js';

export const EVENT_TYPES = [
  'simulation.succeeded',
  'simulation.failed',
  'batch.completed',
  'projection.succeeded',
  'credits.low',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A webhook_endpoints row. */
export interface WebhookEndpoint extends Owner {
  id: string;
  url: string;
  description: string | null;
  events: EventType[];
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  failingSince: Date | null;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A webhook_events row: `body` is the event's JSON text, the bytes every delivery signs and sends. */
export interface WebhookEvent extends Owner {
  id: string;
  type: EventType;
  objectId: string;
  body: string;
  createdAt: Date;
}

/** An event about to be written: its `data.object` already in its wire shape. */
export interface NewEvent extends Owner {
  type: EventType;
  objectId: string;
  object: unknown;
}
