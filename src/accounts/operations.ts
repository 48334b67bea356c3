// What operators do, shared by the CLI and the admin HTTP API (decisions 8): one function per
// operation, returning the JSON both print.

import { creditsNumber } from '../billing/amounts.js';
import type { Ledger } from '../billing/ledger.js';
import type { Sql } from '../db/connection.js';
import { limitsFor } from '../limits/plans.js';
import { type ApiKey, createKey, type KeyMode, listKeys, revokeKey, type Scope } from './keys.js';
import {
  createOrg,
  type Org,
  type OrgChanges,
  type OrgStatus,
  type Plan,
  requireOrg,
  updateOrg,
} from './orgs.js';

export interface OperatorDeps {
  sql: Sql;
  ledger: Ledger;
  clock: () => Date;
}

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

export function makeOperator(deps: OperatorDeps) {
  const { sql, ledger } = deps;

  async function balanceView(orgId: string) {
    const balance = await ledger.balance(orgId);
    return {
      object: 'org_credits' as const,
      org_id: orgId,
      available: creditsNumber(balance.available),
      monthly_remaining: creditsNumber(balance.monthlyRemaining),
      topup_remaining: creditsNumber(balance.topupRemaining),
      held: creditsNumber(balance.held),
      spent_this_month: creditsNumber(balance.spentThisMonth),
      spend_cap: creditsNumber(balance.spendCap),
    };
  }

  return {
    async createOrg(input: {
      name: string;
      plan: Plan;
      status?: OrgStatus | undefined;
      spendCapCredits?: number | null | undefined;
      limits?: Record<string, number> | undefined;
    }) {
      const org = await createOrg(sql, {
        name: input.name,
        plan: input.plan,
        status: input.status,
        spendCapMilli: input.spendCapCredits == null ? null : Math.round(input.spendCapCredits * 1000),
        limitOverrides: input.limits,
      });
      await ledger.openAccount(org.id);
      return orgView(org);
    },

    async getOrg(orgId: string) {
      const org = await requireOrg(sql, orgId);
      const keys = await listKeys(sql, orgId);
      return { ...orgView(org), credits: await balanceView(orgId), keys: keys.map(keyView) };
    },

    async updateOrg(
      orgId: string,
      input: Omit<OrgChanges, 'spendCapMilli'> & { spendCapCredits?: number | null | undefined },
    ) {
      const { spendCapCredits, ...rest } = input;
      const changes: OrgChanges = { ...rest };
      if (spendCapCredits !== undefined) {
        changes.spendCapMilli = spendCapCredits === null ? null : Math.round(spendCapCredits * 1000);
      }
      const org = await updateOrg(sql, orgId, changes);
      // A plan change takes effect on the allowance now (an upgrade grants the difference).
      await ledger.openAccount(org.id);
      return orgView(org);
    },

    async createKey(input: {
      orgId: string;
      mode: KeyMode;
      scopes?: Scope[] | undefined;
      expiresAt?: Date | null | undefined;
      ipAllowlist?: string[] | undefined;
    }) {
      const { key, secret } = await createKey(sql, input);
      return { ...keyView(key), secret };
    },

    async revokeKey(keyId: string) {
      return keyView(await revokeKey(sql, keyId, deps.clock()));
    },

    async topUp(orgId: string, credits: number, requestId?: string) {
      await requireOrg(sql, orgId);
      await ledger.topUp(orgId, Math.round(credits * 1000), { requestId: requestId ?? null });
      return balanceView(orgId);
    },

    async showCredits(orgId: string) {
      await requireOrg(sql, orgId);
      return balanceView(orgId);
    },
  };
}

export type Operator = ReturnType<typeof makeOperator>;
