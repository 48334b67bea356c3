// Authentication and authorization of API requests (docs/decisions.md §1), in the order it fixes:
// well formed → known → revoked → expired → IP allowed → org suspended → plan → scope.
// Failed authentications count by what was presented, so that nobody's failures refuse somebody else's
// valid credential (docs/decisions.md §1): per client address and credential prefix (30 a minute: a
// credential whose prefix is known is guessed no faster), and per client address in all (300 a minute:
// guessing across prefixes is bounded too). A credential that authenticated from an address within a
// day is not refused by that address's total; a valid one never shares a prefix bucket with other
// people's mistakes unless they present its own prefix. Wrong admin tokens count the same way, apart.
import { hash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../accounts/caller.js';
import type { KeyCache } from '../accounts/key-cache.js';
import { ipAllowed, type Scope, SECRET_PATTERN } from '../accounts/keys.js';
import { ApiError } from '../errors.js';
import type { WindowCounter } from '../limits/window-counter.js';

/** Failed authentications allowed per client address, credential prefix and minute (docs/decisions.md §1). */
export const AUTH_FAILURES_PER_MINUTE = 30;
/** Failed authentications allowed per client address and minute, whatever was presented. */
export const ADDRESS_AUTH_FAILURES_PER_MINUTE = 300;
const AUTH_FAILURE_WINDOW_MS = 60_000;
/** The characters of a credential that name its bucket: an API key's displayed `secret_prefix`. */
export const CREDENTIAL_PREFIX_LENGTH = 12;
/** How long a credential that authenticated from an address is exempt from that address's total. */
const KNOWN_GOOD_MS = 24 * 60 * 60 * 1000;
/** A process writes a credential's known-good mark again after this, not on every request. */
const KNOWN_GOOD_REFRESH_MS = 60 * 60 * 1000;
const KNOWN_GOOD_MEMO_ENTRIES = 10_000;

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

export interface Authenticator {
  authenticate(request: FastifyRequest, scope: Scope | null): Promise<Caller>;
  authenticateAdmin(request: FastifyRequest): Promise<void>;
}

/** API keys and the admin token are counted apart: one realm's failures never refuse the other's. */
type Realm = 'api' | 'admin';

/** What a request presented, as the failure limit sees it. */
interface Presented {
  ip: string;
  realm: Realm;
  /** The credential as sent ('' when none). */
  credential: string;
}

// Counter keys hold no secret: a prefix bucket is named by a hash of the prefix, a mark by a hash of the
// whole credential.
const digest = (text: string) => hash('sha256', text, 'base64url').slice(0, 22);
const prefixKey = (p: Presented) =>
  `auth_failures:${p.realm}:${p.ip}:${digest(p.credential.slice(0, CREDENTIAL_PREFIX_LENGTH))}`;
const addressKey = (p: Presented) => `auth_failures:${p.realm}:${p.ip}`;
const knownGoodKey = (p: Presented) => `auth_ok:${p.realm}:${p.ip}:${digest(p.credential)}`;

function makeFailureLimit(counters: WindowCounter, clock: () => Date) {
  // Known-good marks this process wrote lately, so that a busy key does not write one per request.
  const marked = new Map<string, number>();

  function lockedOut(ttlMs: number, perAddress: boolean): ApiError {
    const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
    const reason = perAddress
      ? `more than ${ADDRESS_AUTH_FAILURES_PER_MINUTE} failed authentications per minute from one address`
      : `more than ${AUTH_FAILURES_PER_MINUTE} failed authentications per minute from one address with this credential prefix`;
    return new ApiError('rate_limited', {
      message: 'Too many failed authentications from this address.',
      rule: 'auth_failures',
      reason,
      retryAfterSeconds: seconds,
      recovery: { retry_at: new Date(clock().getTime() + seconds * 1000).toISOString() },
    });
  }

  return {
    /** 429 while what is presented, or its address in all, has failed too often (nothing is revealed). */
    async refuseIfLockedOut(p: Presented): Promise<void> {
      const [prefix, address] = await Promise.all([
        counters.peek(prefixKey(p)),
        counters.peek(addressKey(p)),
      ]);
      if (prefix.count >= AUTH_FAILURES_PER_MINUTE) throw lockedOut(prefix.ttlMs, false);
      if (address.count < ADDRESS_AUTH_FAILURES_PER_MINUTE) return;
      if (p.credential !== '' && (await counters.lockedFor(knownGoodKey(p))) > 0) return;
      throw lockedOut(address.ttlMs, true);
    },
    /** Counts the failure and throws it, or the 429 once past a limit. */
    async fail(p: Presented, error: ApiError): Promise<never> {
      const [prefix, address] = await Promise.all([
        counters.hit(prefixKey(p), AUTH_FAILURE_WINDOW_MS),
        counters.hit(addressKey(p), AUTH_FAILURE_WINDOW_MS),
      ]);
      if (prefix.count > AUTH_FAILURES_PER_MINUTE) throw lockedOut(prefix.ttlMs, false);
      if (address.count > ADDRESS_AUTH_FAILURES_PER_MINUTE) throw lockedOut(address.ttlMs, true);
      throw error;
    },
    /** Marks a credential that authenticated from this address (refreshed at most hourly per process). */
    async succeeded(p: Presented): Promise<void> {
      const key = knownGoodKey(p);
      const now = clock().getTime();
      if ((marked.get(key) ?? 0) > now) return;
      if (marked.size >= KNOWN_GOOD_MEMO_ENTRIES) marked.clear();
      marked.set(key, now + KNOWN_GOOD_REFRESH_MS);
      await counters.lock(key, KNOWN_GOOD_MS);
    },
  };
}

export function makeAuthenticator(deps: {
  keys: KeyCache;
  counters: WindowCounter;
  clock: () => Date;
  adminToken: string | undefined;
}): Authenticator {
  const { refuseIfLockedOut, fail, succeeded } = makeFailureLimit(deps.counters, deps.clock);

  async function authenticate(request: FastifyRequest, scope: Scope | null): Promise<Caller> {
    const secret = bearerToken(request);
    const presented: Presented = { ip: request.ip, realm: 'api', credential: secret ?? '' };
    await refuseIfLockedOut(presented);
    if (!secret || !SECRET_PATTERN.test(secret)) {
      return fail(
        presented,
        new ApiError('invalid_api_key', {
          message: secret
            ? 'The API key is malformed.'
            : 'No API key: send `Authorization: Bearer <API key>`.',
        }),
      );
    }
    const found = await deps.keys.lookup(secret);
    if (!found) return fail(presented, new ApiError('invalid_api_key', { message: 'Unknown API key.' }));
    const { key, org } = found;
    const now = deps.clock();
    if (key.revokedAt) return fail(presented, new ApiError('key_revoked'));
    if (key.expiresAt && key.expiresAt.getTime() <= now.getTime())
      return fail(presented, new ApiError('key_expired'));
    await succeeded(presented);
    if (!ipAllowed(key.ipAllowlist, request.ip)) {
      throw new ApiError('ip_not_allowed', {
        message: `Address ${request.ip} is outside the key's IP allowlist.`,
      });
    }
    if (org.status === 'suspended') throw new ApiError('org_suspended');
    if (org.plan === 'none' || !org.planActive) {
      throw new ApiError('tier_restricted', { message: 'An active Plus or Pro plan is required.' });
    }
    if (scope && !key.scopes.includes(scope)) {
      throw new ApiError('scope_missing', { message: `The API key lacks the \`${scope}\` scope.` });
    }
    return { org, key, mode: key.mode, livemode: key.mode === 'live' };
  }

  const adminToken = deps.adminToken ? Buffer.from(deps.adminToken) : null;

  async function authenticateAdmin(request: FastifyRequest): Promise<void> {
    // Without ADMIN_TOKEN the admin API does not exist (404 on every path, docs/decisions.md §8).
    if (!adminToken) throw new ApiError('resource_missing', { message: 'No such route.' });
    const sent = bearerToken(request) ?? '';
    const presented: Presented = { ip: request.ip, realm: 'admin', credential: sent };
    await refuseIfLockedOut(presented);
    const token = Buffer.from(sent);
    const ok = token.length === adminToken.length && timingSafeEqual(token, adminToken);
    if (!ok) await fail(presented, new ApiError('invalid_api_key', { message: 'Invalid admin token.' }));
    await succeeded(presented);
  }

  return { authenticate, authenticateAdmin };
}
