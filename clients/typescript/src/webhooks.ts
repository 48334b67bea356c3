// Verifying a webhook delivery (docs/api.md §6): the Matchsim-Signature header is
// `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` (two v1= while a rotated secret is still
// valid). Verify against the raw body as received, before any JSON parsing; reject old timestamps so a
// captured delivery cannot be replayed later. Web Crypto: runs in Node 22+, Deno, Bun and browsers.
import type { components } from './schema.js';

export type WebhookEvent = components['schemas']['Event'];

/** The delivery is not one matchsim signed with this secret (or it is older than the tolerance). */
export class WebhookSignatureError extends Error {
  override name = 'WebhookSignatureError';
}

const encoder = new TextEncoder();

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(message)));
  return Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Equal strings of equal length, compared in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * The event of a delivery whose signature is valid: one of its v1= is the HMAC of `<t>.<rawBody>` with
 * `secret`, and t is within `toleranceSeconds` of now. Throws WebhookSignatureError otherwise. Events
 * may arrive more than once (at least once): deduplicate on `event.id`.
 */
export async function verifyWebhook(
  rawBody: string,
  header: string | null | undefined,
  secret: string,
  toleranceSeconds = 300,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): Promise<WebhookEvent> {
  if (!header) throw new WebhookSignatureError('No Matchsim-Signature header.');
  const pairs = header.split(',').map((part) => {
    const at = part.indexOf('=');
    return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
  });
  const timestamp = Number(pairs.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(timestamp)) throw new WebhookSignatureError('The header has no timestamp.');
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) {
    throw new WebhookSignatureError('The timestamp is outside the tolerance.');
  }
  const expected = await hmacHex(secret, `${timestamp}.${rawBody}`);
  const signed = pairs.some(([key, value]) => key === 'v1' && sameText(value, expected));
  if (!signed) throw new WebhookSignatureError('No signature matches this secret.');
  return JSON.parse(rawBody) as WebhookEvent;
}
