// The Matchsim-Signature header (docs/api.md §6): `t=<unix seconds>,v1=<hex HMAC-SHA256 of
// "<t>.<raw body>" with the endpoint's secret>`, with a second v1= while a rotated secret is still valid.
// Clients verify with the typed client's verifyWebhook (clients/typescript/src/webhooks.ts).
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'matchsim-signature';

function signatureOf(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** The header for `body` sent at `timestamp`, one v1= per secret (the current one first). */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${signatureOf(secret, timestamp, body)}`)].join(
    ',',
  );
}
