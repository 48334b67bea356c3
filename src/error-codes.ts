// The one table of error codes (docs/api.md §7, docs/decisions.md §9): status, retry advice, credit effect
// and the default message of every code the service can answer, and the error type of each status.
// src/errors.ts, the door every error goes through, exports them with ApiError and errorBody.

export type RetryStrategy = 'correct_request' | 'backoff_with_jitter' | 'wait_for_change';
export type IdempotencyAdvice = 'same' | 'new' | 'not_applicable';
export type CreditEffect = 'not_charged' | 'unknown';

export interface ErrorDefinition {
  status: number;
  message: string;
  retryable: boolean;
  strategy: RetryStrategy;
  idempotencyKey: IdempotencyAdvice;
  creditEffect: CreditEffect;
  /** One-line recovery instruction shown as `error.fix` and on the docs page. */
  fix: string;
  /** True for the codes docs/api.md §7 lists only by name ("additional codes"). */
  additional?: true;
}

const fixRequest = (message: string, fix: string, idempotencyKey: IdempotencyAdvice = 'not_applicable') =>
  ({
    message,
    fix,
    retryable: false,
    strategy: 'correct_request',
    idempotencyKey,
    creditEffect: 'not_charged',
  }) as const;

const backoff = (message: string, fix: string) =>
  ({
    message,
    fix,
    retryable: true,
    strategy: 'backoff_with_jitter',
    idempotencyKey: 'same',
    creditEffect: 'not_charged',
  }) as const;

const waitForChange = (message: string, fix: string, retryable: boolean, idempotencyKey: IdempotencyAdvice) =>
  ({
    message,
    fix,
    retryable,
    strategy: 'wait_for_change',
    idempotencyKey,
    creditEffect: 'not_charged',
  }) as const;

export const ERRORS = {
  parameter_invalid: {
    status: 400,
    ...fixRequest(
      'A parameter has an invalid value.',
      'Correct the parameter named in `param` and send the request again.',
    ),
  },
  parameter_missing: {
    status: 400,
    ...fixRequest('A required parameter is absent.', 'Add the parameter named in `param`.'),
  },
  batch_rejected: {
    status: 400,
    ...fixRequest(
      'No item of the batch can run; nothing was reserved.',
      'Correct the items listed in `recovery.items`, each with its own error, and submit the batch again.',
      'new',
    ),
  },
  fixture_not_covered: {
    status: 400,
    ...fixRequest(
      'The fixture is not available for simulation.',
      'Choose a fixture of a covered competition that has not kicked off; see GET /v1/fixtures.',
      'new',
    ),
  },
  competition_not_covered: {
    status: 400,
    ...fixRequest(
      'The competition is not available for projection.',
      'Choose a covered competition; see the competitions of GET /v1/fixtures.',
      'new',
    ),
  },
  competition_not_found: {
    status: 404,
    ...fixRequest('No competition with that id.', 'Check competition_id against GET /v1/fixtures.', 'new'),
  },
  competition_inputs_missing: {
    status: 409,
    ...waitForChange(
      'A club of the competition has no ratings in any of its fixtures, so its remaining fixtures cannot be simulated.',
      'Project the competition again once its feed carries inputs for every club.',
      true,
      'new',
    ),
  },
  projection_failed: {
    status: 500,
    ...backoff('The projection job failed.', 'Submit the projection again; nothing was charged.'),
    idempotencyKey: 'new',
  },
  lineup_invalid: {
    status: 400,
    ...fixRequest(
      'The custom lineup is invalid.',
      'Correct the lineup rule named in `recovery.reason`.',
      'new',
    ),
  },
  market_unreachable: {
    status: 400,
    ...fixRequest(
      'The model cannot reproduce the market prices the run is to be fitted to.',
      'Check the odds belong to this match; `recovery` holds the targets and the nearest prices reached.',
      'new',
    ),
  },
  player_not_in_squad: {
    status: 400,
    ...fixRequest(
      "A custom lineup names a player outside the side's squad.",
      'Use player ids from GET /v1/fixtures/{fixture_id}/squads.',
      'new',
    ),
  },
  request_timeout: {
    status: 408,
    ...backoff(
      'The request was not received in time.',
      'Send the request line, headers and body without pauses, within the time limit, then retry.',
    ),
  },
  request_headers_too_large: {
    status: 431,
    ...fixRequest(
      'The request line or headers are too large.',
      'Send a shorter URL and fewer or smaller headers (16 KiB in all).',
    ),
  },
  invalid_api_key: {
    status: 401,
    ...fixRequest(
      'The credential cannot authenticate.',
      'Send `Authorization: Bearer <API key>` with a valid key.',
    ),
  },
  key_revoked: {
    status: 401,
    ...fixRequest('The API key has been revoked.', 'Use another key of the organisation.'),
  },
  key_expired: { status: 401, ...fixRequest('The API key has expired.', 'Use a key that has not expired.') },
  balance_too_low: {
    status: 402,
    ...waitForChange(
      'The available balance cannot cover the request.',
      'Top up credits or wait for the monthly allowance, then retry with a new Idempotency-Key.',
      true,
      'new',
    ),
  },
  max_credits_exceeded: {
    status: 402,
    additional: true,
    ...waitForChange(
      "The charge would take this month's spend past the spend cap.",
      'Ask an operator to raise the spend cap or wait for the next UTC month.',
      true,
      'new',
    ),
  },
  scope_missing: {
    status: 403,
    ...fixRequest(
      'The API key lacks the scope this operation requires.',
      'Use a key with the required scope.',
    ),
  },
  tier_restricted: {
    status: 403,
    ...waitForChange(
      'The plan does not include this operation.',
      'Subscribe to the Plus or Pro plan.',
      false,
      'not_applicable',
    ),
  },
  org_suspended: {
    status: 403,
    ...waitForChange('The organisation is suspended.', 'Contact support.', false, 'not_applicable'),
  },
  ip_not_allowed: {
    status: 403,
    ...fixRequest(
      "The caller's address is outside the key's IP allowlist.",
      'Call from an allowed address or use another key.',
    ),
  },
  email_unverified: {
    status: 403,
    additional: true,
    ...waitForChange(
      'The account e-mail address is not verified.',
      'Verify the e-mail address, then retry.',
      false,
      'not_applicable',
    ),
  },
  webhook_url_refused: {
    status: 400,
    ...fixRequest(
      'Webhooks cannot be sent to this URL.',
      'Use an https URL whose host resolves to public addresses only (docs/api.md §6).',
    ),
  },
  webhook_endpoints_exceeded: {
    status: 409,
    ...fixRequest(
      'The organisation already has the most webhook endpoints allowed (16).',
      'Delete an endpoint you no longer use, or subscribe one endpoint to more event types.',
    ),
  },
  fixture_not_found: {
    status: 404,
    ...fixRequest(
      'No matching simulation fixture.',
      'Check the fixture id or team names against GET /v1/fixtures.',
      'new',
    ),
  },
  resource_missing: {
    status: 404,
    ...fixRequest('The resource is missing or belongs to another account.', 'Check the identifier.'),
  },
  not_found: { status: 404, additional: true, ...fixRequest('Not found.', 'Check the path.') },
  fixture_ambiguous: {
    status: 409,
    ...fixRequest(
      'The lookup identifies several fixtures.',
      'Send one of the `recovery.candidates` fixture ids, or add `date`.',
      'new',
    ),
  },
  ambiguous_team: {
    status: 409,
    additional: true,
    ...fixRequest('A team name matches several teams.', 'Use a fuller team name or the fixture id.', 'new'),
  },
  idempotency_conflict: {
    status: 409,
    ...fixRequest(
      'The Idempotency-Key was used with a different request.',
      'Use a new Idempotency-Key for a different request.',
      'new',
    ),
  },
  simulation_cancelled: {
    status: 409,
    ...fixRequest(
      'The simulation job was cancelled with its batch before it ran; nothing was charged.',
      'Submit the simulation again.',
      'new',
    ),
  },
  reservation_expired: {
    status: 409,
    ...fixRequest('The credit hold ended without delivery.', 'Submit the simulation again.', 'new'),
  },
  lineups_not_announced: {
    status: 409,
    ...waitForChange(
      'Official team sheets are not published yet.',
      'Wait for publication or use the `auto` lineup source.',
      true,
      'new',
    ),
  },
  email_conflict: {
    status: 409,
    additional: true,
    ...fixRequest('The e-mail address is already in use.', 'Use another address.'),
  },
  retrieval_required: {
    status: 409,
    additional: true,
    ...waitForChange(
      'The result must be retrieved through its result path first.',
      'Follow result_url.',
      true,
      'same',
    ),
  },
  rate_limited: {
    status: 429,
    ...backoff('Rate limit exceeded.', 'Wait for Retry-After seconds, then retry.'),
  },
  concurrency_limited: {
    status: 429,
    ...backoff(
      'No concurrent simulation slot is free for the organisation.',
      'Wait for an open job to finish, then retry.',
    ),
  },
  loop_guard: {
    status: 429,
    ...backoff(
      'The same request was repeated too often in a short time.',
      'Stop repeating the identical request; wait for Retry-After.',
    ),
  },
  lineup_cooldown: {
    status: 429,
    ...waitForChange(
      'Custom lineups are temporarily locked after repeated invalid lineups.',
      'Wait until `recovery.retry_at`, and validate lineups with the free squads read first.',
      true,
      'same',
    ),
  },
  simulation_failed: {
    status: 500,
    ...backoff('The simulation job failed.', 'Submit the simulation again; nothing was charged.'),
    idempotencyKey: 'new',
  },
  internal_error: {
    status: 500,
    ...backoff(
      'Unexpected internal failure.',
      'Retry with backoff; contact support with the request id if it persists.',
    ),
  },
  payload_missing: {
    status: 500,
    ...backoff('The result is unavailable or incomplete.', 'Retry with backoff.'),
  },
  provenance_missing: {
    status: 502,
    ...backoff('The result misses required source information.', 'Retry with backoff.'),
  },
  provenance_mismatch: {
    status: 502,
    ...backoff('The result does not match the requested inputs.', 'Retry with backoff.'),
  },
  fixture_lookup_incomplete: {
    status: 503,
    ...backoff('The lookup could not prove a unique match.', 'Retry with backoff, or send the fixture id.'),
  },
  settlement_unknown: {
    status: 503,
    ...backoff(
      'Delivery settlement could not be confirmed.',
      'Retry with the same Idempotency-Key or result path to learn the one true outcome.',
    ),
    creditEffect: 'unknown',
  },
  dependency_unavailable: {
    status: 503,
    ...backoff('Request admission is unavailable.', 'Retry with backoff.'),
  },
  response_timeout: {
    status: 503,
    ...backoff(
      'The request could not be answered in time.',
      'Retry with backoff; where the route takes an Idempotency-Key, retry with the same key.',
    ),
  },
  engine_cold_start: {
    status: 503,
    ...backoff('The simulation engine is starting.', 'Retry in a few seconds.'),
  },
  engine_overloaded: {
    status: 503,
    ...backoff('The simulation engine is at capacity.', 'Retry with backoff.'),
  },
  engine_unavailable: {
    status: 503,
    ...backoff('The simulation engine is unavailable.', 'Retry with backoff.'),
  },
  storage_unavailable: {
    status: 503,
    ...backoff('The result is temporarily unavailable.', 'Retry with backoff.'),
  },
  refreshing: { status: 503, ...backoff("The fixture's inputs are being refreshed.", 'Retry in a moment.') },
  coverage_unavailable: {
    status: 503,
    additional: true,
    ...backoff('Coverage data is temporarily unavailable.', 'Retry with backoff.'),
  },
  data_stale: {
    status: 503,
    additional: true,
    ...backoff('The inputs are stale and being refreshed.', 'Retry with backoff.'),
  },
  capability_off: {
    status: 503,
    ...waitForChange('This output is no longer available.', 'Use another output.', false, 'not_applicable'),
  },
  capability_disabled: {
    status: 503,
    ...waitForChange('This output is disabled.', 'Use another output.', false, 'not_applicable'),
  },
  maintenance: { status: 503, ...backoff('The API is paused for maintenance.', 'Retry later.') },
  lever_unsupported: {
    status: 400,
    additional: true,
    ...fixRequest('The requested option is not supported.', 'Remove the unsupported option.'),
  },
  connector_sign_in_required: {
    status: 401,
    additional: true,
    ...waitForChange(
      'A connector sign-in is required.',
      'Sign in to the connector, then retry.',
      false,
      'not_applicable',
    ),
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERRORS;

const ERROR_TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'invalid_request_error',
  409: 'conflict_error',
  429: 'rate_limit_error',
  431: 'invalid_request_error',
  500: 'api_error',
  502: 'api_error',
  503: 'service_unavailable_error',
};

export function errorType(status: number): string {
  return ERROR_TYPE_BY_STATUS[status] ?? 'api_error';
}
