// What the hooks ask of a request's route. Fastify's `request.routeOptions` builds a fresh object on each
// read; the auth, rate-limit, back-pressure and logging hooks read it several times per request, so the
// two facts they need are read once and kept on the request.
import type { FastifyContextConfig, FastifyRequest } from 'fastify';

export interface RouteFacts {
  /** The route's path pattern (`/v1/fixtures/:fixture_id/squads`); undefined when no route matched. */
  url: string | undefined;
  config: FastifyContextConfig;
}

export function routeOf(request: FastifyRequest): RouteFacts {
  if (request.route) return request.route;
  const { url, config } = request.routeOptions;
  request.route = { url, config };
  return request.route;
}
