// What Fastify's router and Node's HTTP parser refuse, over a real socket: each answer is the error object
// of docs/api.md §7 with a Request-Id, never the framework's own body (issue 17). The request timeouts
// come from the configuration (docs/decisions.md §10): a trickled body or unfinished headers get 408
// request_timeout instead of holding the connection.
import { connect } from 'node:net';
import { errorCodes } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toApiError } from '../../src/http/error-handler.js';
import { errorResponseSchema } from '../../src/http/schemas/common.js';
import { MAX_PATH_PARAMETER_LENGTH } from '../../src/http/server-bounds.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

let t: TestContext;
let port: number;
let authorization: string;

beforeAll(async () => {
  t = await createTestContext({
    env: { REQUEST_TIMEOUT_SECONDS: '1', HEADERS_TIMEOUT_SECONDS: '1', CONNECTION_TIMEOUT_SECONDS: '61' },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as { port: number }).port;
  authorization = `Authorization: ${(await t.newOrg()).auth.authorization}\r\n`;
});
afterAll(async () => t.close());

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `parts` to a new connection (pausing between them) and reads the answer until it closes. */
function exchange(parts: string[], pauseMs = 0, to = port): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(to, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      const [head = '', body = ''] = received.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      if (!status) reject(new Error(`no HTTP answer: ${JSON.stringify(received.slice(0, 200))}`));
      const headers = Object.fromEntries(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      resolve({ status, headers, body });
    });
    void (async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      }
    })();
  });
}

function expectErrorObject(response: RawResponse, status: number, code: string) {
  expect(response.status, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = errorResponseSchema.parse(JSON.parse(response.body));
  expect(body.error.code).toBe(code);
  expect(response.headers['request-id']).toMatch(/^req_[0-9A-Za-z]{24}$/);
  expect(body.error.request_id).toBe(response.headers['request-id']);
  return body.error;
}

const get = (path: string, headers = '') =>
  `GET ${path} HTTP/1.1\r\nHost: api.test\r\n${headers}Connection: close\r\n\r\n`;

describe("Fastify's router refusals", () => {
  it('answers a path that is not valid percent-encoded UTF-8 with 400 parameter_invalid', async () => {
    const response = await exchange([get('/v1/simulations/jobs/%ED%A0%80?reservation_id=res_1')]);
    expectErrorObject(response, 400, 'parameter_invalid');
  });

  it('answers an overlong path parameter with 400, naming it while the route can', async () => {
    const named = expectErrorObject(
      await exchange([
        get(`/v1/simulations/jobs/${'j'.repeat(MAX_PATH_PARAMETER_LENGTH)}?reservation_id=r`, authorization),
      ]),
      400,
      'parameter_invalid',
    );
    expect(named.param).toBe('job_id');
    const longer = `/v1/simulations/batch/${'b'.repeat(MAX_PATH_PARAMETER_LENGTH + 1)}`;
    expectErrorObject(await exchange([get(longer)]), 400, 'parameter_invalid');
  });

  it('answers an unknown path with 404 resource_missing', async () => {
    expectErrorObject(await exchange([get('/v2/anything')]), 404, 'resource_missing');
  });

  it('turns a handler past HANDLER_TIMEOUT_SECONDS into 503 response_timeout with Retry-After', () => {
    const error = toApiError(new errorCodes.FST_ERR_HANDLER_TIMEOUT(60_000, '/v1/simulations'));
    expect(error).toMatchObject({ code: 'response_timeout', status: 503 });
    expect(error.options.retryAfterSeconds).toBe(1);
  });
});

describe("Node's HTTP parser refusals", () => {
  it('answers headers or a URL over 16 KiB with 431 request_headers_too_large', async () => {
    expectErrorObject(
      await exchange([get(`/v1/simulations/jobs/${'a'.repeat(20_000)}`)]),
      431,
      'request_headers_too_large',
    );
    expectErrorObject(
      await exchange([get('/v1/credits', `X-Big: ${'b'.repeat(20_000)}\r\n`)]),
      431,
      'request_headers_too_large',
    );
  });

  it('answers CONNECT, which Node hands past the router, with 400 instead of closing the socket', async () => {
    for (const target of ['api.test:443', '/v1/credits']) {
      const response = await exchange([`CONNECT ${target} HTTP/1.1\r\nHost: api.test:443\r\n\r\n`]);
      expect(expectErrorObject(response, 400, 'parameter_invalid').message).toMatch(/CONNECT/);
    }
    // Every other method has an answer too: the router's 404, or the parser's 400 for an unknown one.
    for (const method of ['TRACE', 'PROPFIND', 'PUT', 'DELETE', 'OPTIONS']) {
      const response = await exchange([
        `${method} /v1/credits HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n`,
      ]);
      expectErrorObject(response, 404, 'resource_missing');
    }
    expectErrorObject(
      await exchange(['FOO /v1/credits HTTP/1.1\r\nHost: api.test\r\n\r\n']),
      400,
      'parameter_invalid',
    );
  });

  it('answers conflicting Content-Length and Transfer-Encoding with 400 naming the header', async () => {
    const both = await exchange([
      'POST /v1/simulations HTTP/1.1\r\nHost: api.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ]);
    expect(expectErrorObject(both, 400, 'parameter_invalid').param).toBe('Transfer-Encoding');
    const twice = await exchange([
      'POST /v1/simulations HTTP/1.1\r\nHost: api.test\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef',
    ]);
    expect(expectErrorObject(twice, 400, 'parameter_invalid').param).toBe('Content-Length');
  });
});

describe('request timeouts', () => {
  it('are the configured ones', () => {
    expect(t.app.server.requestTimeout).toBe(1000);
    expect(t.app.server.headersTimeout).toBe(1000);
    expect(t.app.server.timeout).toBe(61_000);
  });

  it('answer a trickled, never finished body with 408 request_timeout and close the connection', async () => {
    const head =
      'POST /admin/v1/orgs HTTP/1.1\r\nHost: api.test\r\n' +
      `Authorization: Bearer ${t.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    const trickled = await exchange([head, '{"na', 'm', 'e', '"', ':'], 300);
    expectErrorObject(trickled, 408, 'request_timeout');
    expectErrorObject(await exchange([`${head}{"name"`]), 408, 'request_timeout');
  });

  it('answer unfinished headers with 408 request_timeout', async () => {
    const response = await exchange(['GET /v1/credits HTTP/1.1\r\nHost: api.test\r\n', 'X-Slow: 1\r\n'], 200);
    expectErrorObject(response, 408, 'request_timeout');
  });
});

describe('a body slower than the handler time limit', () => {
  // Fastify's handler timer starts before the body arrives; a 1 s limit (below what the environment
  // allows) and a 60 s request limit make the handler's timer the first to fire, as it is at the
  // defaults (60 s each) when Node's once-a-second check comes second.
  let slow: TestContext;
  let slowPort: number;
  beforeAll(async () => {
    slow = await createTestContext({
      env: { REQUEST_TIMEOUT_SECONDS: '60', HEADERS_TIMEOUT_SECONDS: '10' },
      configOverrides: { HANDLER_TIMEOUT_SECONDS: 1 },
    });
    await slow.app.listen({ port: 0, host: '127.0.0.1' });
    slowPort = (slow.app.server.address() as { port: number }).port;
  });
  afterAll(async () => slow.close());

  it('is 408 request_timeout with the connection closed, not 503 response_timeout (issue 33, item 6)', async () => {
    const head =
      'POST /admin/v1/orgs HTTP/1.1\r\nHost: api.test\r\n' +
      `Authorization: Bearer ${slow.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    const response = await exchange([head, '{"name"'], 0, slowPort);
    const error = expectErrorObject(response, 408, 'request_timeout');
    expect(error.message).toMatch(/body/);
    expect(response.headers.connection).toBe('close');
    expect(response.headers['retry-after']).toBeUndefined();
  });
});
