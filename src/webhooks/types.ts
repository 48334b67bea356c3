// The webhooks room's values (docs/api.md §6): endpoints, events and their deliveries.
export const EVENT_TYPES = [
  'simulation.succeeded',
  'simulation.failed',
  'batch.completed',
  'projection.succeeded',
  'credits.low',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export type Mode = 'live' | 'test';

/** A webhook_endpoints row. */
export interface WebhookEndpoint {
  id: string;
  orgId: string;
  mode: Mode;
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
export interface WebhookEvent {
  id: string;
  orgId: string;
  mode: Mode;
  type: EventType;
  objectId: string;
  body: string;
  createdAt: Date;
}

/** An event about to be written: its `data.object` already in its wire shape. */
export interface NewEvent {
  orgId: string;
  mode: Mode;
  type: EventType;
  objectId: string;
  object: unknown;
}

/** Who is asking: an organisation and its key's mode (a test key sees test objects only). */
export interface Owner {
  orgId: string;
  mode: Mode;
}
