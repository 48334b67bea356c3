// API keys (docs/decisions.md §1): `ms_live_…` / `ms_test_…` secrets shown once, stored as SHA-256 hashes.
import { hash } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { Sql } from '../db/connection.js';
import { databaseRead, databaseWrite } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { newId, randomBase62 } from '../ids.js';
import { notifyAuthChanged } from './auth-changes.js';
import type { Org } from './orgs.js';

export const SCOPES = ['simulations.run', 'data.read'] as const;
export type Scope = (typeof SCOPES)[number];
export type KeyMode = 'live' | 'test';

/** Whose a thing is: an organisation and its key's mode (a test key sees test objects only). */
export interface Owner {
  orgId: string;
  mode: KeyMode;
}

const SECRET_RANDOM_LENGTH = 40;
/** Well formed: the prefix of a mode and at least 32 base62 characters (docs/decisions.md §1). */
export const SECRET_PATTERN = /^ms_(live|test)_[0-9A-Za-z]{32,128}$/;

// Every authenticated request hashes its key: the one-shot hash, without a Hash object per call.
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export interface ApiKey extends Owner {
  id: string;
  secretPrefix: string;
  scopes: Scope[];
  ipAllowlist: string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

/** Normalise a CIDR (or a bare address) and refuse anything that is not one. */
function parseCidr(value: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } {
  const [address = '', prefixText] = value.trim().split('/');
  const version = isIP(address);
  if (version === 0) throw new Error(`not an IP address: ${value}`);
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText ?? '0').trim() === '') {
    throw new Error(`invalid prefix length in ${value}`);
  }
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** An IPv4 client seen through an IPv6 socket arrives as ::ffff:a.b.c.d. */
function normaliseClientIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1]! : ip;
}

export function ipAllowed(allowlist: readonly string[], clientIp: string): boolean {
  if (allowlist.length === 0) return true;
  const ip = normaliseClientIp(clientIp);
  const version = isIP(ip);
  if (version === 0) return false;
  const list = new BlockList();
  for (const entry of allowlist) {
    const cidr = parseCidr(entry);
    list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  return list.check(ip, version === 4 ? 'ipv4' : 'ipv6');
}

/** Every column but the secret's hash, which never leaves the database. */
function keyColumns(sql: Sql) {
  return sql`id, org_id, mode, secret_prefix, scopes, ip_allowlist, expires_at, revoked_at, created_at`;
}

export interface NewKey extends Owner {
  scopes?: Scope[] | undefined;
  expiresAt?: Date | null | undefined;
  ipAllowlist?: string[] | undefined;
}

export async function createKey(sql: Sql, input: NewKey): Promise<{ key: ApiKey; secret: string }> {
  const ipAllowlist = (input.ipAllowlist ?? []).map((entry) => {
    try {
      const cidr = parseCidr(entry);
      return `${cidr.address}/${cidr.prefix}`;
    } catch (error) {
      throw new ApiError('parameter_invalid', { param: 'ip_allowlist', message: (error as Error).message });
    }
  });
  const scopes = [...new Set(input.scopes ?? SCOPES)];
  const secret = `ms_${input.mode}_${randomBase62(SECRET_RANDOM_LENGTH)}`;
  const [row] = await databaseWrite(
    () => sql<ApiKey[]>`
      INSERT INTO api_keys (id, org_id, mode, secret_hash, secret_prefix, scopes, ip_allowlist, expires_at)
      SELECT ${newId('key')}, id, ${input.mode}, ${hashSecret(secret)}, ${secret.slice(0, 12)},
             ${sql.array(scopes)}, ${sql.array(ipAllowlist)}, ${input.expiresAt ?? null}
      FROM orgs WHERE id = ${input.orgId}
      RETURNING ${keyColumns(sql)}`,
  );
  if (!row)
    throw new ApiError('resource_missing', { message: `No organisation ${input.orgId}.`, param: 'org_id' });
  return { key: row, secret };
}

export async function revokeKey(sql: Sql, keyId: string, now: Date): Promise<ApiKey> {
  const [row] = await databaseWrite(
    () => sql<ApiKey[]>`
      UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${now}) WHERE id = ${keyId}
      RETURNING ${keyColumns(sql)}`,
  );
  if (!row) throw new ApiError('resource_missing', { message: `No API key ${keyId}.`, param: 'key_id' });
  await databaseWrite(() => notifyAuthChanged(sql, keyId));
  return row;
}

export async function listKeys(sql: Sql, orgId: string): Promise<ApiKey[]> {
  return databaseRead(
    () => sql<ApiKey[]>`
      SELECT ${keyColumns(sql)} FROM api_keys WHERE org_id = ${orgId} ORDER BY created_at, id`,
  );
}

/** The key of a secret and its organisation (two statements sent together); null when unknown. */
export async function findKeyBySecret(sql: Sql, secret: string): Promise<{ key: ApiKey; org: Org } | null> {
  const hash = hashSecret(secret);
  const [[key], [org]] = await Promise.all([
    sql<ApiKey[]>`SELECT ${keyColumns(sql)} FROM api_keys WHERE secret_hash = ${hash}`,
    sql<Org[]>`SELECT * FROM orgs WHERE id = (SELECT org_id FROM api_keys WHERE secret_hash = ${hash})`,
  ]);
  return key && org ? { key, org } : null;
}
