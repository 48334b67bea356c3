// One error handler for the whole service: every failure leaves as the error object of docs/api.md §7,
// through its schema, with Request-Id, Retry-After on 429s and 503s and no internal details on 5xx.
// Fastify's own refusals (bad URL encoding, an overlong path parameter, a handler past its time) come
// here too (src/http/server-bounds.ts); what Node refuses before Fastify sees a request is answered there.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { classifyDatabaseError, translateDatabaseError } from '../db/transactions.js';
import { ApiError, type ErrorCode, errorBody, isApiError } from '../errors.js';
import { errorResponseSchema } from './schemas/common.js';
import { serializeThrough } from './serialize.js';

/** Fastify's own error codes: mostly "the client sent something we cannot read". */
const FASTIFY_ERRORS: Record<
  string,
  { code: ErrorCode; message: string; param?: string; retryAfterSeconds?: number }
> = {
  FST_ERR_BAD_URL: {
    code: 'parameter_invalid',
    message: 'The path is not valid percent-encoded UTF-8.',
  },
  FST_ERR_MAX_PARAM_LENGTH: {
    code: 'parameter_invalid',
    message: 'A path parameter is longer than any identifier the API accepts.',
  },
  FST_ERR_HANDLER_TIMEOUT: {
    code: 'response_timeout',
    message: 'The request could not be answered in time; it may still complete.',
    retryAfterSeconds: 1,
  },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'parameter_invalid', message: 'The body is not valid JSON.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: 'parameter_missing',
    message: 'The body is empty; send a JSON object.',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'parameter_invalid',
    message: 'Unsupported Content-Type; send application/json.',
    param: 'Content-Type',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'parameter_invalid',
    message: 'Content-Length does not match the body.',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'parameter_invalid', message: 'The body is larger than 1 MiB.' },
  FST_ERR_CTP_INVALID_TYPE: {
    code: 'parameter_invalid',
    message: 'Invalid Content-Type header.',
    param: 'Content-Type',
  },
};

/** `/lineups/home/xi` → `lineups.home.xi`; query and path parameters keep their bare names. */
function paramPath(instancePath: string): string | null {
  const path = instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  return path === '' ? null : path;
}

function valueAt(root: unknown, instancePath: string): unknown {
  let value = root;
  for (const part of instancePath.split('/').filter(Boolean)) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The part of the request that failed validation: body, querystring, params or headers. */
function validatedInput(request: FastifyRequest | undefined, context: string | undefined): unknown {
  if (!request) return undefined;
  if (context === 'querystring') return request.query;
  if (context === 'params') return request.params;
  if (context === 'headers') return request.headers;
  return request.body;
}

function validationToApiError(
  error: FastifyError & { validationContext?: string },
  request?: FastifyRequest,
): ApiError {
  if (!hasZodFastifySchemaValidationErrors(error)) {
    return new ApiError('parameter_invalid', { message: error.message });
  }
  const issue = error.validation[0]!;
  const base = paramPath(issue.instancePath);
  const params = issue.params as { keys?: string[]; expected?: string };
  if (issue.keyword === 'unrecognized_keys' && params.keys?.length) {
    const field = params.keys[0]!;
    const param = base ? `${base}.${field}` : field;
    return new ApiError('parameter_invalid', { param, message: `Unknown field \`${param}\`.` });
  }
  const input = validatedInput(request, error.validationContext);
  const missing = input !== undefined && valueAt(input, issue.instancePath) === undefined;
  if (missing) {
    return new ApiError('parameter_missing', { param: base, message: `\`${base ?? 'body'}\` is required.` });
  }
  const where = base ? `\`${base}\`: ` : '';
  return new ApiError('parameter_invalid', { param: base, message: `${where}${issue.message}` });
}

/**
 * A database failure that no use case translated: transient ones become 503s with retry advice
 * (src/db/transactions.ts); a value PostgreSQL cannot store is the request's fault, so a 400. Validation
 * keeps such values out (src/http/schemas/primitives.ts); the fuzz test checks that it does.
 */
function databaseFailureToApiError(error: unknown): ApiError | null {
  if (classifyDatabaseError(error) === 'invalid_value') {
    return new ApiError('parameter_invalid', { message: UNSTORABLE_VALUE_MESSAGE, internal: error });
  }
  const translated = translateDatabaseError(error);
  return isApiError(translated) ? translated : null;
}

/** The message of a value that slipped past validation and that PostgreSQL refused. */
export const UNSTORABLE_VALUE_MESSAGE = 'A value in the request is outside what the service can store.';

/**
 * Fastify's handler timer starts when the route is found, before the body has arrived: a handler that
 * times out while the body is still arriving was never late, its client was. That is 408
 * request_timeout, as Node answers a body not received within REQUEST_TIMEOUT_SECONDS (docs/api.md §7).
 */
function bodyNotReceived(error: FastifyError, request: FastifyRequest | undefined): ApiError | null {
  if (error?.code !== 'FST_ERR_HANDLER_TIMEOUT' || !request || request.raw.complete) return null;
  return new ApiError('request_timeout', {
    message: 'The request body was not all received in time.',
  });
}

export function toApiError(error: unknown, request?: FastifyRequest): ApiError {
  if (isApiError(error)) return error;
  const late = bodyNotReceived(error as FastifyError, request);
  if (late) return late;
  const database = databaseFailureToApiError(error);
  if (database) return database;
  const fastifyError = error as FastifyError & { validationContext?: string };
  if (fastifyError?.validation) return validationToApiError(fastifyError, request);
  const known = fastifyError?.code ? FASTIFY_ERRORS[fastifyError.code as string] : undefined;
  if (known) {
    return new ApiError(known.code, {
      message: known.message,
      ...(known.param ? { param: known.param } : {}),
      ...(known.retryAfterSeconds ? { retryAfterSeconds: known.retryAfterSeconds } : {}),
    });
  }
  // Any other refusal of Fastify's (a 4xx of its own) is the request's fault, said in the error object.
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError('parameter_invalid', { message: fastifyError.message });
  }
  return new ApiError('internal_error', { internal: error });
}

export function sendApiError(request: FastifyRequest, reply: FastifyReply, error: ApiError, docsUrl: string) {
  const after = error.options.retryAfterSeconds;
  if (after !== undefined) reply.header('Retry-After', String(Math.max(0, Math.ceil(after))));
  // The rest of a body that came too slowly is not waited for: the connection closes with the answer.
  if (error.code === 'request_timeout') reply.header('Connection', 'close');
  // Set here as well as by the app's onSend hook: Fastify's router errors reply outside the routes' hooks.
  reply.header('Request-Id', request.id);
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send(serializeThrough(errorResponseSchema, errorBody(error, { requestId: request.id, docsUrl })));
}

export function installErrorHandling(app: FastifyInstance, docsUrl: string) {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error, request);
    if (apiError.status >= 500) {
      request.log.error({ err: apiError.options.internal ?? error, code: apiError.code }, 'request failed');
    } else if (apiError.options.internal) {
      request.log.warn({ err: apiError.options.internal, code: apiError.code }, 'request refused');
    } else {
      request.log.info({ code: apiError.code, param: apiError.options.param }, 'request refused');
    }
    return sendApiError(request, reply, apiError, docsUrl);
  });
  app.setNotFoundHandler((request, reply) =>
    sendApiError(
      request,
      reply,
      new ApiError('resource_missing', {
        message: `No route ${request.method} ${request.url.split('?')[0]}.`,
      }),
      docsUrl,
    ),
  );
}
