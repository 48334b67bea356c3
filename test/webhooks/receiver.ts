// A webhook receiver the tests start: a real HTTP server on 127.0.0.1 that records every request's
// headers and raw body and answers as told (a status, or 'hold' to keep the request open).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The answers to give, in order; once used up every request gets 200. */
  answers: Array<number | 'hold'>;
  /** Answers the held requests with `status`. */
  release(status: number): void;
  /** Resolves once `n` requests have arrived. */
  until(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const answers: Array<number | 'hold'> = [];
  const held: ServerResponse[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      const answer = answers.shift() ?? 200;
      if (answer === 'hold') {
        held.push(response);
        return;
      }
      response.statusCode = answer;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answers,
    release(status) {
      for (const response of held.splice(0)) {
        response.statusCode = status;
        response.end();
      }
    },
    async until(n) {
      for (let i = 0; i < 2000 && received.length < n; i++) await new Promise((r) => setTimeout(r, 5));
      if (received.length < n) throw new Error(`the receiver got ${received.length} of ${n} requests`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
