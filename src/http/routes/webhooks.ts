// The webhooks routes (docs/api.md §6): endpoints, events and the credits.low threshold. Each
// answers only the organisation and key mode that made the resource; anyone else's is resource_missing.
import { ownerOf } from '../../accounts/caller.js';
import type { App, AppDeps } from '../app-types.js';
import { listPageOf } from '../schemas/simulations.js';
import {
  creditsLowBodySchema,
  creditsLowSchema,
  deletedEndpointSchema,
  endpointCreateSchema,
  endpointListSchema,
  endpointParamsSchema,
  endpointSchema,
  endpointUpdateSchema,
  endpointWithSecretSchema,
  eventListQuerySchema,
  eventListSchema,
  eventParamsSchema,
  eventSchema,
  resendBodySchema,
} from '../schemas/webhooks.js';
import {
  endpointListView,
  endpointView,
  endpointWithSecretView,
  eventListView,
  eventView,
} from '../views/webhooks.js';

/** Managing webhooks needs what running simulations needs: the simulations.run scope. */
const hooks = { access: 'api' as const, scope: 'simulations.run' as const, rateGroup: 'data' as const };
const tags = ['webhooks'];

export function registerWebhookRoutes(app: App, deps: AppDeps) {
  registerEndpointWrites(app, deps);
  registerEndpointReads(app, deps);
  registerEvents(app, deps);
  registerCreditsLow(app, deps);
}

function registerEndpointWrites(app: App, deps: AppDeps) {
  const webhooks = deps.services.webhooks;
  app.post(
    '/v1/webhook_endpoints',
    {
      config: { ...hooks, errors: ['webhook_url_refused', 'webhook_endpoints_exceeded'] },
      schema: {
        tags,
        operationId: 'createWebhookEndpoint',
        summary: 'Register a webhook endpoint',
        description:
          'The answer carries the signing secret, shown this once. At most 16 endpoints an organisation; a test key’s endpoints receive only test events, a live key’s only live ones.',
        body: endpointCreateSchema,
        response: { 200: endpointWithSecretSchema },
      },
    },
    async (request) =>
      endpointWithSecretView(await webhooks.createEndpoint(ownerOf(request.auth!), request.body)),
  );
  app.patch(
    '/v1/webhook_endpoints/:endpoint_id',
    {
      config: { ...hooks, errors: ['resource_missing', 'webhook_url_refused'] },
      schema: {
        tags,
        operationId: 'updateWebhookEndpoint',
        summary: 'Change a webhook endpoint (url, events, description, enabled)',
        params: endpointParamsSchema,
        body: endpointUpdateSchema,
        response: { 200: endpointSchema },
      },
    },
    async (request) =>
      endpointView(
        await webhooks.changeEndpoint(ownerOf(request.auth!), request.params.endpoint_id, request.body),
      ),
  );
  app.delete(
    '/v1/webhook_endpoints/:endpoint_id',
    {
      config: { ...hooks, errors: ['resource_missing'] },
      schema: {
        tags,
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint (its pending deliveries go with it)',
        params: endpointParamsSchema,
        response: { 200: deletedEndpointSchema },
      },
    },
    async (request) => {
      await webhooks.removeEndpoint(ownerOf(request.auth!), request.params.endpoint_id);
      return { object: 'webhook_endpoint' as const, id: request.params.endpoint_id, deleted: true as const };
    },
  );
  app.post(
    '/v1/webhook_endpoints/:endpoint_id/rotate_secret',
    {
      config: { ...hooks, errors: ['resource_missing'] },
      schema: {
        tags,
        operationId: 'rotateWebhookEndpointSecret',
        summary: 'A new signing secret; the old one still signs for 24 hours',
        description:
          'Deliveries carry two v1= signatures for 24 hours, the new secret’s first, so receivers can switch without losing events.',
        params: endpointParamsSchema,
        response: { 200: endpointWithSecretSchema },
      },
    },
    async (request) =>
      endpointWithSecretView(await webhooks.rotateSecret(ownerOf(request.auth!), request.params.endpoint_id)),
  );
}

function registerEndpointReads(app: App, deps: AppDeps) {
  const webhooks = deps.services.webhooks;
  app.get(
    '/v1/webhook_endpoints',
    {
      config: hooks,
      schema: {
        tags,
        operationId: 'listWebhookEndpoints',
        summary: 'Your webhook endpoints, newest first',
        querystring: eventListQuerySchema.omit({ type: true }),
        response: { 200: endpointListSchema },
      },
    },
    async (request) => {
      const page = await webhooks.listEndpoints(ownerOf(request.auth!), listPageOf(request.query));
      return endpointListView(page);
    },
  );
  app.get(
    '/v1/webhook_endpoints/:endpoint_id',
    {
      config: { ...hooks, errors: ['resource_missing'] },
      schema: {
        tags,
        operationId: 'getWebhookEndpoint',
        summary: 'A webhook endpoint (without its secret)',
        params: endpointParamsSchema,
        response: { 200: endpointSchema },
      },
    },
    async (request) =>
      endpointView(await webhooks.readEndpoint(ownerOf(request.auth!), request.params.endpoint_id)),
  );
}

function registerEvents(app: App, deps: AppDeps) {
  const webhooks = deps.services.webhooks;
  app.get(
    '/v1/events',
    {
      config: hooks,
      schema: {
        tags,
        operationId: 'listEvents',
        summary: 'Your events of the last 30 days, newest first',
        querystring: eventListQuerySchema,
        response: { 200: eventListSchema },
      },
    },
    async (request) => {
      const page = await webhooks.listEvents(ownerOf(request.auth!), listPageOf(request.query));
      return eventListView(page);
    },
  );
  app.get(
    '/v1/events/:event_id',
    {
      config: { ...hooks, errors: ['resource_missing'] },
      schema: {
        tags,
        operationId: 'getEvent',
        summary: 'An event, as it was delivered',
        params: eventParamsSchema,
        response: { 200: eventSchema },
      },
    },
    async (request) => eventView(await webhooks.readEvent(ownerOf(request.auth!), request.params.event_id)),
  );
  app.post(
    '/v1/events/:event_id/resend',
    {
      config: { ...hooks, errors: ['resource_missing'] },
      schema: {
        tags,
        operationId: 'resendEvent',
        summary: 'Send an event again to one of your endpoints',
        description:
          'A new delivery, due now, with the same event id and body (or the pending one brought forward). Answers the event.',
        params: eventParamsSchema,
        body: resendBodySchema,
        response: { 200: eventSchema },
      },
    },
    async (request) =>
      eventView(
        await webhooks.resendEvent(ownerOf(request.auth!), request.params.event_id, request.body.endpoint_id),
      ),
  );
}

function registerCreditsLow(app: App, deps: AppDeps) {
  const webhooks = deps.services.webhooks;
  const view = (threshold: number | null) => ({ object: 'credits_low_threshold' as const, threshold });
  app.get(
    '/v1/credits/low_threshold',
    {
      config: hooks,
      schema: {
        tags,
        operationId: 'getCreditsLowThreshold',
        summary: 'The balance below which a charge sends credits.low',
        response: { 200: creditsLowSchema },
      },
    },
    async (request) => view(await webhooks.creditsLowThreshold(request.auth!.org.id)),
  );
  app.put(
    '/v1/credits/low_threshold',
    {
      config: hooks,
      schema: {
        tags,
        operationId: 'setCreditsLowThreshold',
        summary: 'Set the balance below which a charge sends credits.low (null: never)',
        description:
          'The balance is monthly plus top-up credits remaining (GET /v1/credits: monthly.remaining + topup.remaining). One event each time a charge crosses the threshold downwards.',
        body: creditsLowBodySchema,
        response: { 200: creditsLowSchema },
      },
    },
    async (request) => {
      await webhooks.setCreditsLowThreshold(request.auth!.org.id, request.body.threshold);
      return view(request.body.threshold);
    },
  );
}
