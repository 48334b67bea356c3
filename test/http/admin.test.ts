import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/app.js';

describe('admin API without ADMIN_TOKEN', () => {
  it('answers 404 on every admin path', async () => {
    const t = await createTestContext({ adminToken: null });
    try {
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/orgs',
        payload: { name: 'x', plan: 'pro' },
      });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('resource_missing');
      const withToken = await t.app.inject({
        method: 'GET',
        url: '/admin/v1/orgs/org_abc',
        headers: { authorization: 'Bearer anything-at-all-here' },
      });
      expect(withToken.statusCode).toBe(404);
    } finally {
      await t.close();
    }
  });
});

describe('admin API', () => {
  let t: TestContext;
  let headers: Record<string, string>;
  beforeAll(async () => {
    t = await createTestContext();
    headers = { authorization: `Bearer ${t.adminToken}` };
  });
  afterAll(async () => t.close());

  it('refuses a wrong token', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/orgs',
      headers: { authorization: 'Bearer wrong-token-wrong-token' },
      payload: { name: 'x', plan: 'pro' },
    });
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('invalid_api_key');
  });

  it('provisions an organisation, a key, a top-up, a change and a revocation', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/orgs',
      headers,
      payload: { name: 'Acme', plan: 'plus', spend_cap_credits: 300, limits: { simulations_rpm: 10 } },
    });
    expect(created.statusCode).toBe(201);
    const org = created.json();
    expect(org).toMatchObject({
      object: 'org',
      name: 'Acme',
      plan: 'plus',
      status: 'active',
      spend_cap_credits: 300,
    });
    expect(org.org_id).toMatch(/^org_/);
    expect(org.limits.simulations_rpm).toBe(10);

    const keyResponse = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/orgs/${org.org_id}/keys`,
      headers,
      payload: { mode: 'live', scopes: ['data.read'], ip_allowlist: ['10.0.0.0/8'] },
    });
    expect(keyResponse.statusCode).toBe(201);
    const key = keyResponse.json();
    expect(key.secret).toMatch(/^ms_live_[0-9A-Za-z]{32,}$/);
    expect(key).toMatchObject({ scopes: ['data.read'], ip_allowlist: ['10.0.0.0/8'] });
    const apiHeaders = { authorization: `Bearer ${key.secret}` };
    const balance = await t.app.inject({
      method: 'GET',
      url: '/v1/credits',
      headers: apiHeaders,
      remoteAddress: '10.2.3.4',
    });
    expect(balance.json().total).toBe(100);

    const topup = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/orgs/${org.org_id}/topups`,
      headers,
      payload: { credits: 25.5 },
    });
    expect(topup.statusCode).toBe(201);
    expect(topup.json()).toMatchObject({ available: 125.5, topup_remaining: 25.5 });

    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/admin/v1/orgs/${org.org_id}`,
      headers,
      payload: { status: 'suspended', limits: { simulations_rpm: null } },
    });
    expect(patched.json()).toMatchObject({ status: 'suspended', limit_overrides: {} });
    const suspended = await t.app.inject({
      method: 'GET',
      url: '/v1/credits',
      headers: apiHeaders,
      remoteAddress: '10.2.3.4',
    });
    expect(suspended.json().error.code).toBe('org_suspended');

    const read = (await t.app.inject({ method: 'GET', url: `/admin/v1/orgs/${org.org_id}`, headers })).json();
    expect(read.keys).toHaveLength(1);
    expect(read.keys[0].secret).toBeUndefined();
    expect(read.credits.available).toBe(125.5);

    const revoked = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/keys/${key.key_id}/revoke`,
      headers,
    });
    expect(revoked.json().revoked_at).not.toBeNull();
    await t.app.inject({
      method: 'PATCH',
      url: `/admin/v1/orgs/${org.org_id}`,
      headers,
      payload: { status: 'active' },
    });
    const afterRevoke = await t.app.inject({
      method: 'GET',
      url: '/v1/credits',
      headers: apiHeaders,
      remoteAddress: '10.2.3.4',
    });
    expect(afterRevoke.json().error.code).toBe('key_revoked');
  });

  it('answers resource_missing for unknown organisations and keys, parameter_invalid for bad CIDRs', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/admin/v1/orgs/org_nothing', headers });
    expect(missing.statusCode).toBe(404);
    const key = await t.app.inject({ method: 'POST', url: '/admin/v1/keys/key_nothing/revoke', headers });
    expect(key.statusCode).toBe(404);
    const org = await t.newOrg();
    const cidr = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/orgs/${org.orgId}/keys`,
      headers,
      payload: { mode: 'test', ip_allowlist: ['10.0.0.0/33'] },
    });
    expect(cidr.statusCode).toBe(400);
    expect(cidr.json().error).toMatchObject({ code: 'parameter_invalid', param: 'ip_allowlist' });
  });
});
