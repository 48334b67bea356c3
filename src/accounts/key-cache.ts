// Authentication runs on every request; looking the key up in the database each time costs a round
// trip. Found keys are kept for a few seconds; any change to keys or organisations (revocation,
// suspension, plan) empties the cache at once in this process and, through NOTIFY on a PostgreSQL
// server, in every other process. The short lifetime bounds staleness should a notification be lost.
import type { Database } from '../db/connection.js';
import { databaseRead } from '../db/transactions.js';
import { AUTH_CHANGED_CHANNEL } from './auth-changes.js';
import { type ApiKey, findKeyBySecret, hashSecret } from './keys.js';
import type { Org } from './orgs.js';

const DEFAULT_TTL_MS = 2_000;
const MAX_ENTRIES = 10_000;

export interface KeyCache {
  lookup(secret: string): Promise<{ key: ApiKey; org: Org } | null>;
  invalidate(): void;
  close(): Promise<void>;
}

export async function makeKeyCache(db: Database, options: { ttlMs?: number } = {}): Promise<KeyCache> {
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const entries = new Map<string, { value: { key: ApiKey; org: Org }; expiresAt: number }>();
  let unlisten: (() => Promise<void>) | null = null;
  if (db.kind === 'server') {
    const listener = await db.sql.listen(AUTH_CHANGED_CHANNEL, () => entries.clear());
    unlisten = listener.unlisten;
  }
  return {
    async lookup(secret) {
      const hash = hashSecret(secret);
      const cached = entries.get(hash);
      if (cached && cached.expiresAt > Date.now()) return cached.value;
      const found = await databaseRead(() => findKeyBySecret(db.sql, secret));
      if (found) {
        if (entries.size >= MAX_ENTRIES) entries.clear();
        entries.set(hash, { value: found, expiresAt: Date.now() + ttlMs });
      } else {
        entries.delete(hash);
      }
      return found;
    },
    invalidate() {
      entries.clear();
    },
    async close() {
      await unlisten?.();
    },
  };
}
