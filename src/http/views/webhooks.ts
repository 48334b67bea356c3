// The wire shapes of the webhooks routes (docs/api.md §6) and of the objects events carry: a job or a
// batch in an event is what its GET shows (a job's result_url, never its document; a batch's head and
// counts, as in the batch list), rendered once, when the event is written.
import type { Page } from '../../simulations/listings.js';
import type { EventObjects } from '../../webhooks/outbox.js';
import type { WebhookEndpoint, WebhookEvent } from '../../webhooks/types.js';
import { batchSummaryView, jobView } from './simulations.js';

export function eventObjects(): EventObjects {
  return {
    // A finished job has nothing left to wait for: no retry advice.
    job: (job) => jobView(job, 0),
    batch: (batch, summary) => batchSummaryView({ batch, summary }),
  };
}

/** An endpoint as every answer shows it, without its secret. */
export function endpointView(endpoint: WebhookEndpoint) {
  const status = !endpoint.enabled ? 'disabled' : endpoint.failingSince ? 'failing' : 'enabled';
  return {
    object: 'webhook_endpoint' as const,
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    enabled: endpoint.enabled,
    status,
    failing_since: endpoint.failingSince?.toISOString() ?? null,
    disabled_reason: endpoint.disabledReason,
    livemode: endpoint.mode === 'live',
    created_at: endpoint.createdAt.toISOString(),
  };
}

/** The answers of registration and rotation: the endpoint with its secret, shown this once. */
export function endpointWithSecretView(endpoint: WebhookEndpoint) {
  return { ...endpointView(endpoint), secret: endpoint.secret };
}

export function endpointListView(page: Page<WebhookEndpoint>) {
  return {
    object: 'list' as const,
    url: '/v1/webhook_endpoints' as const,
    data: page.data.map((endpoint) => endpointView(endpoint)),
    has_more: page.hasMore,
  };
}

/** An event as it was delivered: its stored body, parsed. */
export function eventView(event: WebhookEvent) {
  return JSON.parse(event.body) as {
    id: string;
    object: 'event';
    type: WebhookEvent['type'];
    created: number;
    livemode: boolean;
    data: { object: Record<string, unknown> };
  };
}

export function eventListView(page: Page<WebhookEvent>) {
  return {
    object: 'list' as const,
    url: '/v1/events' as const,
    data: page.data.map(eventView),
    has_more: page.hasMore,
  };
}
