// The SSRF guard (docs/api.md §6, Safety): in production, URLs must be https and must not be, nor
// resolve to, loopback, private, link-local or metadata addresses, checked at registration and again on
// each connection (the socket's own lookup), unless WEBHOOKS_ALLOW_PRIVATE; outside production anything
// http(s) goes, so the demo can post to a local receiver.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ApiError } from '../../src/errors.js';
import { isPrivateAddress } from '../../src/webhooks/reserved-addresses.js';
import { makeSender } from '../../src/webhooks/sender.js';
import { checkEndpointUrl } from '../../src/webhooks/url-guard.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

const production = { publicOnly: true };
const development = { publicOnly: false };

async function refusal(url: string): Promise<string> {
  try {
    await checkEndpointUrl(url, production);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('webhook_url_refused');
    return (error as ApiError).message;
  }
  throw new Error(`${url} was accepted`);
}

describe('the address check', () => {
  it('calls loopback, private, link-local, metadata and mapped addresses private, public ones not', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.100.100.200',
      '0.0.0.0',
      '::1',
      'fd00:ec2::254',
      'fe80::1',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });
});

describe('registration in production', () => {
  it('refuses http, private address literals and a name that resolves to loopback', async () => {
    expect(await refusal('http://hooks.example.com/x')).toMatch(/https/);
    expect(await refusal('https://127.0.0.1/hook')).toMatch(/127\.0\.0\.1/);
    expect(await refusal('https://10.0.0.7:8443/hook')).toMatch(/10\.0\.0\.7/);
    expect(await refusal('https://169.254.169.254/latest/meta-data')).toMatch(/169\.254\.169\.254/);
    expect(await refusal('https://[::ffff:10.0.0.1]/hook')).toMatch(/not public/);
    // A name: resolved with the system's resolver, every address checked.
    expect(await refusal('https://localhost/hook')).toMatch(/localhost resolves to/);
    expect(await refusal('https://user:pw@93.184.216.34/hook')).toMatch(/credentials/);
    expect(await refusal('not a url')).toMatch(/valid/);
  });

  it('accepts a public https address, and anything http(s) outside production', async () => {
    await expect(checkEndpointUrl('https://93.184.216.34/hook', production)).resolves.toBeInstanceOf(URL);
    await expect(checkEndpointUrl('http://127.0.0.1:9/hook', development)).resolves.toBeInstanceOf(URL);
    await expect(checkEndpointUrl('http://localhost/hook', development)).resolves.toBeInstanceOf(URL);
    await expect(checkEndpointUrl('ftp://example.com/x', development)).rejects.toThrow(/http or https/);
  });
});

describe('each connection in production', () => {
  let receiver: Server;
  let port = 0;
  let hits = 0;
  beforeAll(async () => {
    receiver = createServer((_request, response) => {
      hits++;
      response.end('ok');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(async () => new Promise<void>((resolve) => receiver.close(() => resolve())));

  it('refuses a name that resolves to loopback when the socket looks it up, whatever registration saw', async () => {
    const post = { body: '{}', headers: {} };
    // Registered while the name was public, say: the sender still asks the resolver at connection time.
    const refused = await makeSender(production)({ ...post, url: `https://localhost:${port}/hook` });
    expect(refused).toMatchObject({ ok: false, status: null });
    expect(refused.error).toMatch(/localhost resolves to (127\.0\.0\.1|::1), which is not public/);
    const literal = await makeSender(production)({ ...post, url: `https://127.0.0.1:${port}/hook` });
    expect(literal).toMatchObject({ ok: false, status: null });
    expect(hits).toBe(0);
    // Outside production the same name is reached.
    const reached = await makeSender(development)({ ...post, url: `http://localhost:${port}/hook` });
    expect(reached).toMatchObject({ ok: true, status: 200 });
    expect(hits).toBe(1);
  });
});

describe('the routes with NODE_ENV=production', () => {
  let t: TestContext;
  let open: TestContext;
  beforeAll(async () => {
    t = await createTestContext({ env: { NODE_ENV: 'production', MATCHSIM_DEMO: 'off' } });
    open = await createTestContext({
      env: { NODE_ENV: 'production', MATCHSIM_DEMO: 'off', WEBHOOKS_ALLOW_PRIVATE: 'true' },
    });
  });
  afterAll(async () => {
    await t.close();
    await open.close();
  });

  it('answers webhook_url_refused for private targets, unless WEBHOOKS_ALLOW_PRIVATE', async () => {
    const { auth } = await t.newOrg();
    for (const url of [
      'https://127.0.0.1/hook',
      'https://10.2.3.4/hook',
      'https://169.254.169.254/latest',
      'https://localhost/hook',
      'http://93.184.216.34/hook',
    ]) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/v1/webhook_endpoints',
        headers: auth,
        payload: { url, events: ['simulation.succeeded'] },
      });
      expect(response.statusCode, url).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'webhook_url_refused', param: 'url' });
    }
    const allowed = await open.app.inject({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      headers: (await open.newOrg()).auth,
      payload: { url: 'http://10.2.3.4/hook', events: ['simulation.succeeded'] },
    });
    expect(allowed.statusCode).toBe(200);
  });

  it('reads WEBHOOKS_ALLOW_PRIVATE as a boolean, false unless set', () => {
    expect(loadConfig({}).WEBHOOKS_ALLOW_PRIVATE).toBe(false);
    expect(loadConfig({ WEBHOOKS_ALLOW_PRIVATE: 'true' }).WEBHOOKS_ALLOW_PRIVATE).toBe(true);
    expect(() => loadConfig({ WEBHOOKS_ALLOW_PRIVATE: 'maybe' })).toThrow(/WEBHOOKS_ALLOW_PRIVATE/);
  });
});
