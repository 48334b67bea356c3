// The HTTP server's bounds (docs/decisions.md §10): how long the request line and headers, the whole
// request and a handler may take, how long a silent connection stays open, and how long a path
// parameter may be. What Fastify's router refuses goes through the one error handler; what Node's HTTP
// parser refuses (oversized or malformed headers, conflicting Content-Length and Transfer-Encoding, a
// request not received in time) never becomes a request, so it is answered here, on the socket, with the
// same error object and a Request-Id (docs/api.md §7).
import { type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyHttpOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { ApiError, errorBody } from '../errors.js';
import { newId } from '../ids.js';
import { sendApiError, toApiError } from './error-handler.js';
import { errorResponseSchema } from './schemas/common.js';
import { serializeThrough } from './serialize.js';

/**
 * Longer path parameters are refused by the router before validation. Identifiers are at most 64
 * characters (docs/api.md §8.5); up to this length the route's schema answers, naming the parameter.
 */
export const MAX_PATH_PARAMETER_LENGTH = 200;
/** How often Node checks the request and headers timeouts (its default, 30 s, would stretch them). */
const TIMEOUT_CHECK_INTERVAL_MS = 1000;

// Node's parser codes for a request whose length cannot be known: conflicting or malformed
// Content-Length, or Transfer-Encoding beside it (a request smuggling attempt, or a broken client).
const LENGTH_ERRORS: Record<string, string> = {
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding',
};

/** What a connection-level failure answers, before any request exists. */
function clientErrorToApiError(error: { code?: string }): ApiError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new ApiError('request_timeout', {
      message: 'The request line, headers and body were not all received in time.',
    });
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') return new ApiError('request_headers_too_large');
  const lengthHeader = error.code ? LENGTH_ERRORS[error.code] : undefined;
  if (lengthHeader) {
    return new ApiError('parameter_invalid', {
      param: lengthHeader,
      message:
        'The length of the request cannot be known: send one valid Content-Length, or Transfer-Encoding: chunked alone.',
    });
  }
  return new ApiError('parameter_invalid', {
    message: `The request is not valid HTTP/1.1 (${error.code ?? 'unreadable'}).`,
  });
}

/** Writes the error object onto a socket whose request never reached Fastify, then closes it. */
function answerOnSocket(error: ApiError, socket: Socket, docsUrl: string): void {
  const requestId = newId('req', 24);
  const body = serializeThrough(errorResponseSchema, errorBody(error, { requestId, docsUrl }));
  // A response that already started (a timeout while a handler answers) cannot take a second one.
  const response = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (socket.writable && !response?.headersSent) {
    socket.write(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

type ServerBounds = Pick<
  FastifyHttpOptions<Server>,
  | 'requestTimeout'
  | 'connectionTimeout'
  | 'handlerTimeout'
  | 'http'
  | 'routerOptions'
  | 'frameworkErrors'
  | 'clientErrorHandler'
>;

/** The Fastify options that bound every request in time and size and answer framework refusals. */
export function serverBounds(config: Config): ServerBounds {
  const requestTimeout = config.REQUEST_TIMEOUT_SECONDS * 1000;
  const headersTimeout = config.HEADERS_TIMEOUT_SECONDS * 1000;
  return {
    requestTimeout,
    connectionTimeout: config.CONNECTION_TIMEOUT_SECONDS * 1000,
    handlerTimeout: config.HANDLER_TIMEOUT_SECONDS * 1000,
    http: {
      requestTimeout,
      headersTimeout,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, headersTimeout),
    },
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      sendApiError(request, reply, toApiError(error, request), config.docsUrl);
    },
    clientErrorHandler(error, socket) {
      // A reset connection has nobody left to answer.
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      answerOnSocket(clientErrorToApiError(error), socket, config.docsUrl);
    },
  };
}

/**
 * CONNECT asks for a tunnel, which Node hands to a 'connect' listener instead of the router, and closes
 * unanswered without one. The service is no proxy: the request is refused with the error object, as
 * Node's parser refusals are (docs/api.md §7).
 */
export function refuseTunnels(server: Server, docsUrl: string): void {
  server.on('connect', (_request, socket: Socket) => {
    const error = new ApiError('parameter_invalid', {
      message: 'CONNECT is not served: the service is not a proxy. Send GET, POST or PATCH.',
    });
    answerOnSocket(error, socket, docsUrl);
  });
}
