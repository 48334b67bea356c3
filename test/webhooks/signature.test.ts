// The signature's worked example in docs/api.md §6.3 is what the service's signer writes and what the
// typed client's verifyWebhook accepts, so the document cannot drift from the code.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookSignatureError } from '../../clients/typescript/src/index.js';
import { signatureHeader } from '../../src/webhooks/signature.js';

const api = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
const field = (name: string) => {
  const match = new RegExp(`^${name}: (.*)$`, 'm').exec(api);
  if (!match) throw new Error(`docs/api.md §6.3 has no "${name}:" line`);
  return match[1]!;
};

describe('the worked example of docs/api.md §6.3', () => {
  const secret = field('secret');
  const t = Number(field('t'));
  const body = field('body');
  const header = field('header');

  it('is the header the service writes', () => {
    expect(signatureHeader([secret], t, body)).toBe(header);
  });

  it('verifies with the typed client within the tolerance, and only then', async () => {
    const event = await verifyWebhook(body, header, secret, 300, t + 300);
    expect(event).toMatchObject({ id: 'evt_1a2b3c4d5e6f7g8h9i0jKLMN', type: 'simulation.succeeded' });
    await expect(verifyWebhook(body, header, secret, 300, t + 301)).rejects.toBeInstanceOf(
      WebhookSignatureError,
    );
    await expect(verifyWebhook(body, header, secret, 300, t - 301)).rejects.toThrow(/tolerance/);
    await expect(verifyWebhook(body, undefined, secret)).rejects.toThrow(/No Matchsim-Signature/);
    await expect(verifyWebhook(body, 'v1=00', secret)).rejects.toThrow(/timestamp/);
  });

  it('accepts either secret during a rotation: two v1= values, the new secret first', async () => {
    const rotated = signatureHeader(['whsec_new', secret], t, body);
    expect(rotated.split(',')).toHaveLength(3);
    await verifyWebhook(body, rotated, 'whsec_new', 300, t);
    await verifyWebhook(body, rotated, secret, 300, t);
    await expect(verifyWebhook(body, rotated, 'whsec_other', 300, t)).rejects.toThrow(/No signature/);
  });
});
