import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeKeyCache } from '../../src/accounts/key-cache.js';
import { createKey, revokeKey } from '../../src/accounts/keys.js';
import { createOrg, updateOrg } from '../../src/accounts/orgs.js';
import { createTestDatabase, type TestDatabase, usingServer } from '../helpers/database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.close());

async function until(condition: () => Promise<boolean>) {
  for (let i = 0; i < 100; i++) {
    if (await condition()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe('key cache', () => {
  it('serves a found key from memory until invalidated', async () => {
    const org = await createOrg(db.sql, { name: 'A', plan: 'pro' });
    const { secret, key } = await createKey(db.sql, { orgId: org.id, mode: 'live' });
    const cache = await makeKeyCache(db, { ttlMs: 60_000 });
    expect((await cache.lookup(secret))?.key.revokedAt).toBeNull();
    await db.sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${key.id}`; // no notification
    expect((await cache.lookup(secret))?.key.revokedAt).toBeNull();
    cache.invalidate();
    expect((await cache.lookup(secret))?.key.revokedAt).not.toBeNull();
    await cache.close();
  });

  it('expires entries after the time to live', async () => {
    const org = await createOrg(db.sql, { name: 'B', plan: 'pro' });
    const { secret, key } = await createKey(db.sql, { orgId: org.id, mode: 'live' });
    const cache = await makeKeyCache(db, { ttlMs: 1 });
    await cache.lookup(secret);
    await db.sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${key.id}`;
    await new Promise((r) => setTimeout(r, 5));
    expect((await cache.lookup(secret))?.key.revokedAt).not.toBeNull();
    await cache.close();
  });

  it.skipIf(!usingServer)(
    'forgets keys in another process when a key is revoked or an org suspended (NOTIFY)',
    async () => {
      const org = await createOrg(db.sql, { name: 'C', plan: 'pro' });
      const a = await createKey(db.sql, { orgId: org.id, mode: 'live' });
      const b = await createKey(db.sql, { orgId: org.id, mode: 'live' });
      const cache = await makeKeyCache(db, { ttlMs: 60_000 });
      await cache.lookup(a.secret);
      await cache.lookup(b.secret);
      await revokeKey(db.sql, a.key.id, new Date());
      expect(await until(async () => (await cache.lookup(a.secret))?.key.revokedAt !== null)).toBe(true);
      await updateOrg(db.sql, org.id, { status: 'suspended' });
      expect(await until(async () => (await cache.lookup(b.secret))?.org.status === 'suspended')).toBe(true);
      await cache.close();
    },
  );
});
if (!usingServer) console.log('key-cache: NOTIFY test skipped: it needs a PostgreSQL server (DATABASE_URL)');
