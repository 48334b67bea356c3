import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, revokeKey } from '../../src/accounts/keys.js';
import { updateOrg } from '../../src/accounts/orgs.js';
import {
  ADDRESS_AUTH_FAILURES_PER_MINUTE,
  AUTH_FAILURES_PER_MINUTE,
  CREDENTIAL_PREFIX_LENGTH,
} from '../../src/http/auth.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

const credits = (headers: Record<string, string>, remoteAddress = '10.1.1.1') =>
  t.app.inject({ method: 'GET', url: '/v1/credits', headers, remoteAddress });

async function expectError(response: Awaited<ReturnType<typeof credits>>, status: number, code: string) {
  expect(response.statusCode, response.body).toBe(status);
  const body = response.json();
  expect(body.error.code).toBe(code);
  expect(body.error.request_id).toBe(response.headers['request-id']);
  return body.error;
}

describe('authentication outcomes', () => {
  it('accepts a valid live key', async () => {
    const { auth } = await t.newOrg();
    const response = await credits(auth);
    expect(response.statusCode).toBe(200);
    expect(response.json().livemode).toBe(true);
  });

  it('refuses a missing, malformed or unknown key with invalid_api_key', async () => {
    await expectError(await credits({}, '10.2.0.1'), 401, 'invalid_api_key');
    await expectError(await credits({ authorization: 'Bearer nope' }, '10.2.0.1'), 401, 'invalid_api_key');
    await expectError(await credits({ authorization: 'Basic abc' }, '10.2.0.1'), 401, 'invalid_api_key');
    const unknown = `ms_live_${'a'.repeat(40)}`;
    const error = await expectError(
      await credits({ authorization: `Bearer ${unknown}` }, '10.2.0.1'),
      401,
      'invalid_api_key',
    );
    expect(error.type).toBe('authentication_error');
  });

  it('refuses a revoked key with key_revoked and an expired key with key_expired', async () => {
    const revoked = await t.newOrg();
    await revokeKey(t.db.sql, revoked.keyId, new Date());
    await expectError(await credits(revoked.auth), 401, 'key_revoked');
    const expired = await t.newOrg({ expiresAt: new Date(Date.now() - 1000) });
    await expectError(await credits(expired.auth), 401, 'key_expired');
  });

  it('applies IPv4 and IPv6 allowlists', async () => {
    const v4 = await t.newOrg({ ipAllowlist: ['192.168.10.0/24'] });
    expect((await credits(v4.auth, '192.168.10.77')).statusCode).toBe(200);
    expect((await credits(v4.auth, '::ffff:192.168.10.77')).statusCode).toBe(200);
    await expectError(await credits(v4.auth, '192.168.11.1'), 403, 'ip_not_allowed');
    const v6 = await t.newOrg({ ipAllowlist: ['2001:db8::/32', '10.0.0.1'] });
    expect((await credits(v6.auth, '2001:db8:1::5')).statusCode).toBe(200);
    expect((await credits(v6.auth, '10.0.0.1')).statusCode).toBe(200);
    await expectError(await credits(v6.auth, '2001:db9::1'), 403, 'ip_not_allowed');
    await expectError(await credits(v6.auth, '10.0.0.2'), 403, 'ip_not_allowed');
  });

  it('refuses a suspended organisation and one without an active Plus or Pro plan', async () => {
    const suspended = await t.newOrg();
    await updateOrg(t.db.sql, suspended.orgId, { status: 'suspended' });
    await expectError(await credits(suspended.auth), 403, 'org_suspended');
    const none = await t.newOrg({ plan: 'none' });
    await expectError(await credits(none.auth), 403, 'tier_restricted');
    const lapsed = await t.newOrg({ plan: 'plus' });
    await updateOrg(t.db.sql, lapsed.orgId, { planActive: false });
    await expectError(await credits(lapsed.auth), 403, 'tier_restricted');
  });

  it('checks in the order of docs/decisions.md §1', async () => {
    // revoked and expired → revoked
    const a = await t.newOrg({ expiresAt: new Date(Date.now() - 1000) });
    await revokeKey(t.db.sql, a.keyId, new Date());
    await expectError(await credits(a.auth), 401, 'key_revoked');
    // expired and outside the allowlist → expired
    const b = await t.newOrg({ expiresAt: new Date(Date.now() - 1000), ipAllowlist: ['10.9.9.9'] });
    await expectError(await credits(b.auth), 401, 'key_expired');
    // outside the allowlist and suspended → ip_not_allowed
    const c = await t.newOrg({ ipAllowlist: ['10.9.9.9'] });
    await updateOrg(t.db.sql, c.orgId, { status: 'suspended' });
    await expectError(await credits(c.auth), 403, 'ip_not_allowed');
    // suspended and no plan → org_suspended
    const d = await t.newOrg({ plan: 'none' });
    await updateOrg(t.db.sql, d.orgId, { status: 'suspended' });
    await expectError(await credits(d.auth), 403, 'org_suspended');
  });

  it('gives test keys livemode false', async () => {
    const { auth } = await t.newOrg({ mode: 'test' });
    const response = await credits(auth);
    expect(response.statusCode).toBe(200);
    expect(response.json().livemode).toBe(false);
  });

  it('limits failed authentications per address and presented prefix with 429 rate_limited', async () => {
    const ip = '203.0.113.9';
    const good = await t.newOrg();
    const bad = { authorization: `Bearer ms_live_${'b'.repeat(40)}` };
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) {
      await expectError(await credits(bad, ip), 401, 'invalid_api_key');
    }
    const limited = await credits(bad, ip);
    const error = await expectError(limited, 429, 'rate_limited');
    expect(error.rule).toBe('auth_failures');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(error.retry.after_seconds).toBe(Number(limited.headers['retry-after']));
    expect(error.retryAfterMs).toBe(error.retry.after_seconds * 1000);
    expect(Date.parse(error.recovery.retry_at)).toBeGreaterThan(Date.now());
    // Guessing the rest of a known prefix stays limited: any secret with that prefix is refused unread.
    const samePrefix = { authorization: `Bearer ms_live_${'b'.repeat(4)}${'c'.repeat(36)}` };
    await expectError(await credits(samePrefix, ip), 429, 'rate_limited');
    // Somebody else's failures never refuse a valid key from the same address (issue 33, item 5).
    expect((await credits(good.auth, ip)).statusCode).toBe(200);
    expect((await credits(good.auth, '203.0.113.10')).statusCode).toBe(200);
  });

  it('limits guessing across prefixes per address, without refusing a key that worked from there', async () => {
    const ip = '203.0.113.30';
    const used = await t.newOrg();
    const unused = await t.newOrg();
    expect((await credits(used.auth, ip)).statusCode).toBe(200);
    const guess = (i: number) => ({
      authorization: `Bearer ms_live_${String(i).padStart(4, '0')}${'g'.repeat(36)}`,
    });
    for (let i = 0; i < ADDRESS_AUTH_FAILURES_PER_MINUTE; i++) {
      await expectError(await credits(guess(i), ip), 401, 'invalid_api_key');
    }
    const sprayed = await expectError(
      await credits(guess(ADDRESS_AUTH_FAILURES_PER_MINUTE), ip),
      429,
      'rate_limited',
    );
    expect(sprayed.rule).toBe('auth_failures');
    // A key never seen from this address waits like a guess; one that authenticated from it does not.
    await expectError(await credits(unused.auth, ip), 429, 'rate_limited');
    expect((await credits(used.auth, ip)).statusCode).toBe(200);
    expect((await credits(unused.auth, '203.0.113.31')).statusCode).toBe(200);
  });

  it('limits wrong admin tokens the same way, apart from API keys; the right token is never refused', async () => {
    const ip = '203.0.113.20';
    const orgs = (authorization: string, from: string) =>
      t.app.inject({
        method: 'GET',
        url: '/admin/v1/orgs/org_none',
        headers: { authorization },
        remoteAddress: from,
      });
    const wrong = `Bearer ${'x'.repeat(t.adminToken.length)}`;
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) {
      await expectError(await orgs(wrong, ip), 401, 'invalid_api_key');
    }
    const limited = await orgs(wrong, ip);
    const error = await expectError(limited, 429, 'rate_limited');
    expect(error.rule).toBe('auth_failures');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // The right token from the same address answers (issue 33, item 5), as API keys from it do.
    await expectError(await orgs(`Bearer ${t.adminToken}`, ip), 404, 'resource_missing');
    const good = await t.newOrg();
    expect((await credits(good.auth, ip)).statusCode).toBe(200);
    // Wrong tokens that start like the right one are limited with it: only its holder's prefix locks it.
    const near = `Bearer ${t.adminToken.slice(0, CREDENTIAL_PREFIX_LENGTH)}${'y'.repeat(8)}`;
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) {
      await expectError(await orgs(near, '203.0.113.22'), 401, 'invalid_api_key');
    }
    await expectError(await orgs(`Bearer ${t.adminToken}`, '203.0.113.22'), 429, 'rate_limited');
  });

  it('refuses keys lacking a scope on scoped operations', async () => {
    const { makeAuthenticator } = await import('../../src/http/auth.js');
    const { makeMemoryWindowCounter } = await import('../../src/limits/window-counter.js');
    const org = await t.newOrg();
    const { secret } = await createKey(t.db.sql, { orgId: org.orgId, mode: 'live', scopes: ['data.read'] });
    const { makeKeyCache } = await import('../../src/accounts/key-cache.js');
    const authenticator = makeAuthenticator({
      keys: await makeKeyCache(t.db, { ttlMs: 0 }),
      counters: makeMemoryWindowCounter(),
      clock: () => new Date(),
      adminToken: undefined,
    });
    const request = { ip: '10.0.0.1', headers: { authorization: `Bearer ${secret}` } } as never;
    await expect(authenticator.authenticate(request, 'data.read')).resolves.toMatchObject({ mode: 'live' });
    await expect(authenticator.authenticate(request, 'simulations.run')).rejects.toMatchObject({
      code: 'scope_missing',
    });
  });
});
