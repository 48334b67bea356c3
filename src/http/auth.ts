// Authentication and authorization of API requests (docs/decisions.md §1), in the order it fixes:
// well formed → known → revoked → expired → IP allowed → org suspended → plan → scope.
// Failed authentications count per client IP; past the limit the IP gets 429 rate_limited. Wrong admin
// tokens count the same way, in a window of their own.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../accounts/caller.js';
import type { KeyCache } from '../accounts/key-cache.js';
import { ipAllowed, type Scope, SECRET_PATTERN } from '../accounts/keys.js';
import { ApiError } from '../errors.js';
import type { WindowCounter } from '../limits/window-counter.js';

/** Failed authentications allowed per client IP and minute (docs/decisions.md §1). */
export const AUTH_FAILURES_PER_MINUTE = 30;
const AUTH_FAILURE_WINDOW_MS = 60_000;

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

/**
 * Failed authentications per client address and realm. API keys and the admin token are guessed
 * separately: an operator's provisioning system behind the same address as a client with a bad key
 * keeps working, and the other way round.
 */
type Realm = 'api' | 'admin';

function makeFailureLimit(counters: WindowCounter, clock: () => Date) {
  const failureKey = (ip: string, realm: Realm) =>
    realm === 'api' ? `auth_failures:${ip}` : `admin_auth_failures:${ip}`;

  function lockedOut(ttlMs: number): ApiError {
    const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
    return new ApiError('rate_limited', {
      message: 'Too many failed authentications from this address.',
      rule: 'auth_failures',
      reason: `more than ${AUTH_FAILURES_PER_MINUTE} failed authentications per minute from one address`,
      retryAfterSeconds: seconds,
      recovery: { retry_at: new Date(clock().getTime() + seconds * 1000).toISOString() },
    });
  }

  return {
    /** 429 while the address has failed too often in this realm, whatever it sends now. */
    async refuseIfLockedOut(ip: string, realm: Realm): Promise<void> {
      const { count, ttlMs } = await counters.peek(failureKey(ip, realm));
      if (count >= AUTH_FAILURES_PER_MINUTE) throw lockedOut(ttlMs);
    },
    /** Counts the failure and throws it, or the 429 once past the limit. */
    async fail(ip: string, error: ApiError, realm: Realm = 'api'): Promise<never> {
      const { count, ttlMs } = await counters.hit(failureKey(ip, realm), AUTH_FAILURE_WINDOW_MS);
      if (count > AUTH_FAILURES_PER_MINUTE) throw lockedOut(ttlMs);
      throw error;
    },
  };
}

export function makeAuthenticator(deps: {
  keys: KeyCache;
  counters: WindowCounter;
  clock: () => Date;
  adminToken: string | undefined;
}): Authenticator {
  const { refuseIfLockedOut, fail } = makeFailureLimit(deps.counters, deps.clock);

  async function authenticate(request: FastifyRequest, scope: Scope | null): Promise<Caller> {
    const ip = request.ip;
    await refuseIfLockedOut(ip, 'api');
    const secret = bearerToken(request);
    if (!secret || !SECRET_PATTERN.test(secret)) {
      return fail(
        ip,
        new ApiError('invalid_api_key', {
          message: secret
            ? 'The API key is malformed.'
            : 'No API key: send `Authorization: Bearer <API key>`.',
        }),
      );
    }
    const found = await deps.keys.lookup(secret);
    if (!found) return fail(ip, new ApiError('invalid_api_key', { message: 'Unknown API key.' }));
    const { key, org } = found;
    const now = deps.clock();
    if (key.revokedAt) return fail(ip, new ApiError('key_revoked'));
    if (key.expiresAt && key.expiresAt.getTime() <= now.getTime())
      return fail(ip, new ApiError('key_expired'));
    if (!ipAllowed(key.ipAllowlist, ip)) {
      throw new ApiError('ip_not_allowed', { message: `Address ${ip} is outside the key's IP allowlist.` });
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
    await refuseIfLockedOut(request.ip, 'admin');
    const token = Buffer.from(bearerToken(request) ?? '');
    const ok = token.length === adminToken.length && timingSafeEqual(token, adminToken);
    if (!ok)
      await fail(request.ip, new ApiError('invalid_api_key', { message: 'Invalid admin token.' }), 'admin');
  }

  return { authenticate, authenticateAdmin };
}
