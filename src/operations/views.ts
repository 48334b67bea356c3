// The JSON operators see, the same from the CLI (`--json`) and the admin HTTP API.
import type { ApiKey } from '../accounts/keys.js';
import type { Org } from '../accounts/orgs.js';
import { creditsNumber } from '../billing/amounts.js';
import type { Balance } from '../billing/types.js';
import { limitsFor } from '../limits/plans.js';

export function orgView(org: Org) {
  return {
    object: 'org' as const,
    org_id: org.id,
    name: org.name,
    plan: org.plan,
    plan_active: org.planActive,
    status: org.status,
    spend_cap_credits: org.spendCapMilli === null ? null : creditsNumber(org.spendCapMilli),
    limit_overrides: org.limitOverrides,
    limits: limitsFor(org),
    created_at: org.createdAt.toISOString(),
  };
}

export function keyView(key: ApiKey) {
  return {
    object: 'api_key' as const,
    key_id: key.id,
    org_id: key.orgId,
    mode: key.mode,
    scopes: key.scopes,
    ip_allowlist: key.ipAllowlist,
    expires_at: key.expiresAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
    secret_prefix: key.secretPrefix,
    created_at: key.createdAt.toISOString(),
  };
}

export function newKeyView({ key, secret }: { key: ApiKey; secret: string }) {
  return { ...keyView(key), secret };
}

export function creditsView(balance: Balance) {
  return {
    object: 'org_credits' as const,
    org_id: balance.orgId,
    available: creditsNumber(balance.available),
    monthly_remaining: creditsNumber(balance.monthlyRemaining),
    topup_remaining: creditsNumber(balance.topupRemaining),
    held: creditsNumber(balance.held),
    spent_this_month: creditsNumber(balance.spentThisMonth),
    spend_cap: creditsNumber(balance.spendCap),
  };
}

export function orgDetailView(detail: { org: Org; keys: ApiKey[]; balance: Balance }) {
  return { ...orgView(detail.org), credits: creditsView(detail.balance), keys: detail.keys.map(keyView) };
}
