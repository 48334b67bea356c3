// Errors as the service answers them (docs/api.md §7): `ApiError`, thrown by the domain with a code of
// the table in error-codes.ts, and `errorBody`, its wire shape. Everything that answers an error goes
// through these, so the wire shape lives here alone; the table is exported from here too.
import {
  type CreditEffect,
  ERRORS,
  type ErrorCode,
  type ErrorDefinition,
  errorType,
  type IdempotencyAdvice,
  type RetryStrategy,
} from './error-codes.js';

export * from './error-codes.js';

export interface ApiErrorOptions {
  message?: string;
  param?: string | null;
  cause?: string;
  fix?: string;
  recovery?: Record<string, unknown> | null;
  /** Minimum delay before a retry; sets Retry-After, retry.after_seconds and retryAfterMs. */
  retryAfterSeconds?: number;
  rule?: string;
  reason?: string;
  /** Per-occurrence overrides of the table's retry advice (e.g. an in-flight idempotency conflict). */
  retryable?: boolean;
  strategy?: RetryStrategy;
  idempotencyKey?: IdempotencyAdvice;
  /** The underlying exception, for logs only; never sent to the client. */
  internal?: unknown;
}

export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly options: ApiErrorOptions;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    super(options.message ?? ERRORS[code].message);
    this.code = code;
    this.options = options;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

export interface ErrorBody {
  error: {
    type: string;
    code: ErrorCode;
    message: string;
    cause?: string;
    fix?: string;
    param: string | null;
    doc_url: string;
    request_id: string | null;
    retry: {
      retryable: boolean;
      after_seconds: number | null;
      strategy: RetryStrategy;
      idempotency_key: IdempotencyAdvice;
    };
    credit_effect: CreditEffect;
    recovery: Record<string, unknown> | null;
    rule?: string;
    reason?: string;
    retryAfterMs?: number;
  };
}

/** The wire form of an error (docs/api.md §7). Retry-After must be set from `retryAfterSeconds` by the caller. */
export function errorBody(
  error: ApiError,
  context: { requestId: string | null; docsUrl: string },
): ErrorBody {
  const definition: ErrorDefinition = ERRORS[error.code];
  const options = error.options;
  const afterSeconds = options.retryAfterSeconds ?? null;
  const body: ErrorBody = {
    error: {
      type: errorType(definition.status),
      code: error.code,
      message: error.message,
      fix: options.fix ?? definition.fix,
      param: options.param ?? null,
      doc_url: `${context.docsUrl}#${error.code}`,
      request_id: context.requestId,
      retry: {
        retryable: options.retryable ?? definition.retryable,
        after_seconds: afterSeconds,
        strategy: options.strategy ?? definition.strategy,
        idempotency_key: options.idempotencyKey ?? definition.idempotencyKey,
      },
      credit_effect: definition.creditEffect,
      recovery: options.recovery ?? null,
    },
  };
  if (options.cause !== undefined) body.error.cause = options.cause;
  if (options.rule !== undefined) body.error.rule = options.rule;
  if (options.reason !== undefined) body.error.reason = options.reason;
  if (afterSeconds !== null) body.error.retryAfterMs = Math.round(afterSeconds * 1000);
  return body;
}
