// API keys (decisions 1): `ms_live_…` / `ms_test_…` secrets shown once, stored as SHA-256 hashes.
import { createHash } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { Sql } from '../db/connection.js';
import { ApiError } from '../errors.js';
import { newId, randomBase62 } from '../ids.js';
import { type Org, orgFromRow } from './orgs.js';

export const SCOPES = ['simulations.run', 'data.read'] as const;
export type Scope = (typeof SCOPES)[number];
export type KeyMode = 'live' | 'test';

/** NOTIFY channel telling every process to forget cached keys (see key-cache.ts). */
export const AUTH_CHANGED_CHANNEL = 'matchsim_auth_changed';

const SECRET_RANDOM_LENGTH = 40;
/** Well formed: the prefix of a mode and at least 32 base62 characters (decisions 1). */
export const SECRET_PATTERN = /^ms_(live|test)_[0-9A-Za-z]{32,128}$/;

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export interface ApiKey {
  id: string;
  orgId: string;
  mode: KeyMode;
  secretPrefix: string;
  scopes: Scope[];
  ipAllowlist: string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

interface KeyRow {
  id: string;
  org_id: string;
  mode: KeyMode;
  secret_prefix: string;
  scopes: Scope[];
  ip_allowlist: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

function keyFromRow(row: KeyRow): ApiKey {
  return {
    id: row.id,
    orgId: row.org_id,
    mode: row.mode,
    secretPrefix: row.secret_prefix,
    scopes: row.scopes,
    ipAllowlist: row.ip_allowlist,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
  };
}

/** Normalise a CIDR (or a bare address) and refuse anything that is not one. */
export function parseCidr(value: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } {
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

export interface NewKey {
  orgId: string;
  mode: KeyMode;
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
  const [row] = await sql<KeyRow[]>`
    INSERT INTO api_keys (id, org_id, mode, secret_hash, secret_prefix, scopes, ip_allowlist, expires_at)
    SELECT ${newId('key')}, id, ${input.mode}, ${hashSecret(secret)}, ${secret.slice(0, 12)},
           ${sql.array(scopes)}, ${sql.array(ipAllowlist)}, ${input.expiresAt ?? null}
    FROM orgs WHERE id = ${input.orgId}
    RETURNING *`;
  if (!row)
    throw new ApiError('resource_missing', { message: `No organisation ${input.orgId}.`, param: 'org_id' });
  return { key: keyFromRow(row), secret };
}

export async function revokeKey(sql: Sql, keyId: string, now: Date): Promise<ApiKey> {
  const [row] = await sql<KeyRow[]>`
    UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${now}) WHERE id = ${keyId} RETURNING *`;
  if (!row) throw new ApiError('resource_missing', { message: `No API key ${keyId}.`, param: 'key_id' });
  await sql`SELECT pg_notify(${AUTH_CHANGED_CHANNEL}, ${keyId})`;
  return keyFromRow(row);
}

export async function listKeys(sql: Sql, orgId: string): Promise<ApiKey[]> {
  const rows = await sql<KeyRow[]>`SELECT * FROM api_keys WHERE org_id = ${orgId} ORDER BY created_at, id`;
  return rows.map(keyFromRow);
}

/** The key of a secret and its organisation, in one round trip; null when unknown. */
export async function findKeyBySecret(sql: Sql, secret: string): Promise<{ key: ApiKey; org: Org } | null> {
  const rows = await sql`
    SELECT row_to_json(k.*) AS key, row_to_json(o.*) AS org
    FROM api_keys k JOIN orgs o ON o.id = k.org_id
    WHERE k.secret_hash = ${hashSecret(secret)}`;
  const row = rows[0];
  if (!row) return null;
  const key = row.key as KeyRow & {
    expires_at: string | null;
    revoked_at: string | null;
    created_at: string;
  };
  const org = row.org as Parameters<typeof orgFromRow>[0] & { created_at: string };
  return {
    key: keyFromRow({
      ...key,
      expires_at: key.expires_at ? new Date(key.expires_at) : null,
      revoked_at: key.revoked_at ? new Date(key.revoked_at) : null,
      created_at: new Date(key.created_at),
    }),
    org: orgFromRow({ ...org, created_at: new Date(org.created_at) }),
  };
}
