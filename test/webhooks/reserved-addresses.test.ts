// Reserved addresses in production (docs/api.md §6.3, "Where events may go"; issue 51 item 2): every
// block the IANA special-purpose registries mark as not globally reachable, IPv6 outside global unicast,
// and the IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) judged by what
// they embed, refused at registration (the route) and at connection (the sender's literal check and the
// socket's DNS lookup); public controls accepted at each step.
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedIpv4, isPrivateAddress } from '../../src/webhooks/reserved-addresses.js';
import { makeSender } from '../../src/webhooks/sender.js';
import { guardedLookup } from '../../src/webhooks/url-guard.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

const production = { publicOnly: true };

/** One address inside each refused block, with the block. */
const REFUSED: Array<[block: string, address: string]> = [
  ['0.0.0.0/8 this network', '0.1.2.3'],
  ['10.0.0.0/8 private', '10.1.2.3'],
  ['100.64.0.0/10 shared', '100.100.100.200'],
  ['127.0.0.0/8 loopback', '127.0.0.1'],
  ['169.254.0.0/16 link local', '169.254.169.254'],
  ['172.16.0.0/12 private', '172.31.255.254'],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.8'],
  ['192.0.0.0/24 holds 192.0.0.9 (PCP anycast), refused with it', '192.0.0.9'],
  ['192.0.2.0/24 documentation', '192.0.2.1'],
  ['192.88.99.0/24 6to4 relay anycast', '192.88.99.1'],
  ['192.168.0.0/16 private', '192.168.1.1'],
  ['198.18.0.0/15 benchmarking', '198.19.0.1'],
  ['198.51.100.0/24 documentation', '198.51.100.1'],
  ['203.0.113.0/24 documentation', '203.0.113.1'],
  ['224.0.0.0/4 multicast', '239.255.255.250'],
  ['240.0.0.0/4 reserved', '240.0.0.1'],
  ['255.255.255.255/32 limited broadcast', '255.255.255.255'],
  ['::/128 unspecified', '::'],
  ['::1/128 loopback', '::1'],
  ['::ffff:0:0/96 IPv4-mapped loopback', '::ffff:127.0.0.1'],
  ['::ffff:0:0/96 IPv4-mapped private', '::ffff:10.0.0.1'],
  ['::/96 IPv4-compatible loopback', '::127.0.0.1'],
  ['64:ff9b::/96 NAT64 of metadata', '64:ff9b::a9fe:a9fe'],
  ['64:ff9b:1::/48 local-use NAT64', '64:ff9b:1::7f00:1'],
  ['64:ff9b:1::/48 local-use NAT64 of a public address', '64:ff9b:1::808:808'],
  ['100::/64 discard only', '100::1'],
  ['2001::/23 IETF protocol assignments (benchmarking 2001:2::/48)', '2001:2::1'],
  ['2001::/32 Teredo with server 0.0.0.0', '2001::7f00:1'],
  ['2001::/32 Teredo with a documentation client', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ['2001:db8::/32 documentation', '2001:db8::1'],
  ['2002::/16 6to4 of loopback', '2002:7f00:1::'],
  ['2002::/16 6to4 of metadata', '2002:a9fe:a9fe::'],
  ['3fff::/20 documentation', '3fff::1'],
  ['5f00::/16 segment routing', '5f00::1'],
  ['fc00::/7 unique local', 'fd00:ec2::254'],
  ['fe80::/10 link local', 'fe80::1'],
  ['fec0::/10 site local', 'fec0::1'],
  ['ff00::/8 multicast', 'ff02::1'],
  ['unassigned IPv6 outside 2000::/3', '4000::1'],
];

/** Public addresses, also in the embedded forms. */
const PUBLIC = [
  '93.184.216.34',
  '1.1.1.1',
  '192.31.196.1', // AS112, globally reachable
  '2606:4700:4700::1111',
  '2620:4f:8000::1', // AS112-v6, globally reachable
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // Teredo: server 65.54.227.120, client 8.8.8.8
];

/** The addresses issue 51 found accepted. */
const FROM_THE_ISSUE = [
  '[::127.0.0.1]',
  '[64:ff9b:1::7f00:1]',
  '[2002:7f00:1::]',
  '[2002:a9fe:a9fe::]',
  '[2001::7f00:1]',
  '[100::1]',
  '[2001:db8::1]',
  '192.0.2.1',
  '198.51.100.1',
  '203.0.113.1',
  '192.88.99.1',
  '[fec0::1]',
];

/** A resolver that answers `address` for every name (what a hostile DNS zone can do). */
function answering(address: string) {
  return ((_host: string, _options: object, callback: (e: null, a: LookupAddress[]) => void) =>
    callback(null, [{ address, family: isIP(address) }])) as never;
}

function lookupThrough(address: string): Promise<Error | null> {
  return new Promise((resolve) => {
    guardedLookup(production, answering(address))('hooks.example.com', { all: true }, (error) =>
      resolve(error),
    );
  });
}

describe('the address check', () => {
  it.each(REFUSED)('refuses %s (%s)', (_block, address) => {
    expect(isIP(address), address).not.toBe(0);
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(PUBLIC)('accepts the public address %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it('reads the IPv4 address each IPv6 form embeds', () => {
    expect(embeddedIpv4('::ffff:7f00:1')).toEqual(['127.0.0.1']);
    expect(embeddedIpv4('::a9fe:a9fe')).toEqual(['169.254.169.254']);
    expect(embeddedIpv4('64:ff9b::c000:201')).toEqual(['192.0.2.1']);
    expect(embeddedIpv4('2002:c000:0201:1::')).toEqual(['192.0.2.1']);
    expect(embeddedIpv4('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual(['65.54.227.120', '192.0.2.45']);
    expect(embeddedIpv4('2606:4700::1111')).toBeNull();
  });
});

describe('at connection time in production', () => {
  it.each(REFUSED)('a name resolving into %s (%s) is refused by the socket lookup', async (_b, address) => {
    expect((await lookupThrough(address))?.message).toBe(
      `hooks.example.com resolves to ${address}, which is not public`,
    );
  });

  it('a name resolving to a public address is looked up as usual', async () => {
    for (const address of PUBLIC) expect(await lookupThrough(address), address).toBeNull();
  });

  it.each(FROM_THE_ISSUE)('a literal %s is refused before any connection', async (host) => {
    const sent = await makeSender(production)({ url: `https://${host}/hook`, body: '{}', headers: {} });
    expect(sent).toEqual({ ok: false, status: null, error: expect.stringMatching(/is not public/) });
  });
});

describe('registration with NODE_ENV=production', () => {
  let t: TestContext;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await createTestContext({ env: { NODE_ENV: 'production', MATCHSIM_DEMO: 'off' } });
    auth = (await t.newOrg()).auth;
  });
  afterAll(async () => {
    await t.close();
  });

  const register = (host: string) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      headers: auth,
      payload: { url: `https://${host}/hook`, events: ['simulation.succeeded'] },
    });

  it.each(FROM_THE_ISSUE)('answers 400 webhook_url_refused for %s', async (host) => {
    const response = await register(host);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'webhook_url_refused', param: 'url' });
  });

  it('registers public controls, in the embedded forms too', async () => {
    for (const host of [
      '93.184.216.34',
      '[2606:4700:4700::1111]',
      '[64:ff9b::808:808]',
      '[2002:808:808::1]',
    ]) {
      const response = await register(host);
      expect(response.statusCode, `${host}: ${response.body}`).toBe(200);
      await t.app.inject({
        method: 'DELETE',
        url: `/v1/webhook_endpoints/${response.json().id}`,
        headers: auth,
      });
    }
  });
});
