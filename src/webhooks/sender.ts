// One POST of an event to an endpoint (docs/api.md §6, Delivery): a 2xx within 10 s is success,
// anything else (another status, a timeout, a refused or failed connection) is a failure to retry.
// Redirects are not followed (a 3xx is a failure); the answer's body is read up to 4 KiB and dropped.
// Under the production policy the socket's own DNS lookup refuses private addresses (url-guard.ts).
import http from 'node:http';
import https from 'node:https';
import { checkUrlForm, guardedLookup, type UrlPolicy } from './url-guard.js';

/** A 2xx must arrive within this (docs/api.md §6). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** How much of an answer is read; the rest is cut off (an endpoint's answer is not stored). */
const ANSWER_BYTES_MAX = 4096;

export interface Sent {
  ok: boolean;
  /** The HTTP status, null when none arrived. */
  status: number | null;
  /** Why it failed, for the delivery record; null on success. */
  error: string | null;
}

export interface Post {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export type SendEvent = (post: Post) => Promise<Sent>;

export function makeSender(policy: UrlPolicy, timeoutMs = DELIVERY_TIMEOUT_MS): SendEvent {
  const lookup = guardedLookup(policy);
  return (post) =>
    new Promise<Sent>((resolve) => {
      let url: URL;
      try {
        url = checkUrlForm(post.url, policy);
      } catch (error) {
        resolve({ ok: false, status: null, error: (error as Error).message });
        return;
      }
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'content-length': String(Buffer.byteLength(post.body)),
          'user-agent': 'matchsim-webhooks/1',
          ...post.headers,
        },
        lookup: lookup as never,
        agent: false,
        timeout: timeoutMs,
      });
      // The whole exchange, not only socket idleness, must fit in the time limit.
      const deadline = setTimeout(
        () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const finish = (sent: Sent) => {
        clearTimeout(deadline);
        resolve(sent);
      };
      request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      request.on('error', (error) => finish({ ok: false, status: null, error: error.message }));
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > ANSWER_BYTES_MAX) response.destroy();
        });
        const done = () => {
          const ok = status >= 200 && status < 300;
          finish({ ok, status, error: ok ? null : `HTTP ${status}` });
        };
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      });
      request.end(post.body);
    });
}
