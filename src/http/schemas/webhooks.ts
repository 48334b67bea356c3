// Wire schemas of the webhooks routes (docs/api.md §6). Field order is the order the views build.
import { z } from 'zod';
import { EVENT_TYPES } from '../../webhooks/types.js';
import { URL_MAX_LENGTH } from '../../webhooks/url-guard.js';
import { boundedText, creditAmount, opaqueId } from './primitives.js';
import { named, openEnum } from './registry.js';
import { listQueryFields } from './simulations.js';

const eventType = openEnum(EVENT_TYPES, 'An event type (docs/api.md §6).');
const eventTypeInput = z.enum(EVENT_TYPES);
const endpointUrl = boundedText(URL_MAX_LENGTH).describe(
  'Where events are POSTed. In production: https, and a host that resolves to public addresses only.',
);
const subscribedEvents = z
  .array(eventTypeInput)
  .min(1)
  .max(EVENT_TYPES.length * 2)
  .describe('The event types sent to this endpoint.');
const description = boundedText(500);

export const endpointCreateSchema = z.strictObject({
  url: endpointUrl,
  events: subscribedEvents,
  description: description.optional(),
});

export const endpointUpdateSchema = z.strictObject({
  url: endpointUrl.optional(),
  events: subscribedEvents.optional(),
  description: description.nullable().optional(),
  enabled: z
    .boolean()
    .optional()
    .describe('false stops deliveries; true resumes them and clears a disabled endpoint’s failures.'),
});

const endpointFields = {
  object: z.literal('webhook_endpoint'),
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(eventType),
  enabled: z.boolean(),
  status: openEnum(
    ['enabled', 'failing', 'disabled'] as const,
    'failing: a delivery failed since the last success; disabled: by you, or after 3 days of failures (see disabled_reason).',
  ),
  failing_since: z.string().nullable(),
  disabled_reason: z.string().nullable(),
  livemode: z.boolean(),
  created_at: z.string(),
};

export const endpointSchema = named(
  'WebhookEndpoint',
  z.object(endpointFields).describe('A webhook endpoint; its secret is never shown again.'),
);

export const endpointWithSecretSchema = named(
  'WebhookEndpointWithSecret',
  z
    .object({
      ...endpointFields,
      secret: z.string().describe('The signing secret (whsec_…): shown in this answer only; keep it.'),
    })
    .describe('A webhook endpoint with its new signing secret (registration and rotation only).'),
);

export const endpointListSchema = named(
  'WebhookEndpointList',
  z
    .object({
      object: z.literal('list'),
      url: z.literal('/v1/webhook_endpoints'),
      data: z.array(endpointSchema),
      has_more: z.boolean(),
    })
    .describe('Your webhook endpoints (this key mode), newest first.'),
);

export const eventSchema = named(
  'Event',
  z
    .object({
      id: z.string().describe('evt_…: the same in every delivery of this event (deduplicate on it).'),
      object: z.literal('event'),
      type: eventType,
      created: z.number().int().describe('Unix seconds.'),
      livemode: z.boolean(),
      data: z.object({
        object: z
          .record(z.string(), z.unknown())
          .describe('The job, batch or projection as its GET shows it when the event happened.'),
      }),
    })
    .describe('Something happened to one of your objects (docs/api.md §6).'),
);

export const eventListSchema = named(
  'EventList',
  z
    .object({
      object: z.literal('list'),
      url: z.literal('/v1/events'),
      data: z.array(eventSchema),
      has_more: z.boolean(),
    })
    .describe('Your events of the last 30 days (this key mode), newest first.'),
);

export const eventListQuerySchema = z.strictObject({
  ...listQueryFields,
  type: eventTypeInput.optional(),
});

export const endpointParamsSchema = z.object({ endpoint_id: opaqueId });
export const eventParamsSchema = z.object({ event_id: opaqueId });
export const resendBodySchema = z.strictObject({
  endpoint_id: opaqueId.describe('The webhook endpoint to send the event to again.'),
});

export const deletedEndpointSchema = z.object({
  object: z.literal('webhook_endpoint'),
  id: z.string(),
  deleted: z.literal(true),
});

export const creditsLowSchema = named(
  'CreditsLowThreshold',
  z
    .object({
      object: z.literal('credits_low_threshold'),
      threshold: z
        .number()
        .nullable()
        .describe(
          'credits.low is sent when a charge takes the balance below this many credits; null: never.',
        ),
    })
    .describe('The balance below which a charge sends credits.low.'),
);

export const creditsLowBodySchema = z.strictObject({
  threshold: creditAmount
    .nullable()
    .describe('Credits (up to three decimals), or null to send no credits.low.'),
});
