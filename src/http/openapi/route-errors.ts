// Which error codes a route can answer, for its OpenAPI responses (src/http/openapi/documents.ts). The
// codes every route shares follow from its config (access, scope, rate group) and from whether it takes
// input; a route declares only its own in `config.errors`, next to its schema. The codes and their
// statuses come from the one table, src/errors.ts; the wire-contract check of the HTTP tests
// (test/helpers/wire-contract.ts) fails when a route answers a code it does not document.
import type { FastifyContextConfig } from 'fastify';
import { ERRORS, type ErrorCode } from '../../errors.js';

/** Any route: framework refusals, back-pressure, database failures, the handler time limit, the unexpected. */
const EVERY_ROUTE: ErrorCode[] = [
  'parameter_invalid',
  'internal_error',
  'dependency_unavailable',
  'response_timeout',
];
/** Routes with a body, query string or path parameters: a required one absent. */
const WITH_INPUT: ErrorCode[] = ['parameter_missing'];
/** Methods with a body: one still arriving when the handler's time runs out (src/http/error-handler.ts). */
const WITH_BODY: ErrorCode[] = ['request_timeout'];
/** API-key routes: src/http/auth.ts, including the lock-out after repeated failed attempts. */
const API_KEY: ErrorCode[] = [
  'invalid_api_key',
  'key_revoked',
  'key_expired',
  'ip_not_allowed',
  'org_suspended',
  'tier_restricted',
  'rate_limited',
];
/** Admin routes: a wrong token, its lock-out, and 404 on every path without ADMIN_TOKEN. */
const ADMIN: ErrorCode[] = ['invalid_api_key', 'rate_limited', 'resource_missing'];

export function routeErrorCodes(
  config: FastifyContextConfig,
  takesInput: boolean,
  takesBody = false,
): ErrorCode[] {
  const codes = new Set<ErrorCode>([...EVERY_ROUTE, ...(config.errors ?? [])]);
  if (takesInput) for (const code of WITH_INPUT) codes.add(code);
  if (takesBody) for (const code of WITH_BODY) codes.add(code);
  if (config.access === 'api') for (const code of API_KEY) codes.add(code);
  if (config.access === 'admin') for (const code of ADMIN) codes.add(code);
  if (config.scope) codes.add('scope_missing');
  if (config.rateGroup) codes.add('rate_limited');
  if (config.loopGuard) codes.add('loop_guard');
  return [...codes].sort((a, b) => ERRORS[a].status - ERRORS[b].status || a.localeCompare(b));
}

/** The codes grouped by HTTP status, in status order. */
export function codesByStatus(codes: readonly ErrorCode[]): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}
