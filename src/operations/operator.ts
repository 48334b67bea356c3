// What operators do, shared by the CLI and the admin HTTP API (docs/decisions.md §8): one function per
// operation, returning domain values; views.ts turns them into the JSON both print.

import { type ApiKey, createKey, listKeys, type NewKey, revokeKey } from '../accounts/keys.js';
import {
  createOrg,
  listOrgs,
  type NewOrg,
  type Org,
  type OrgChanges,
  requireOrg,
  updateOrg,
} from '../accounts/orgs.js';
import type { Ledger } from '../billing/ledger.js';
import type { Balance } from '../billing/types.js';
import type { Sql } from '../db/connection.js';

export interface OperatorDeps {
  sql: Sql;
  ledger: Ledger;
  clock: () => Date;
}

const toMilli = (credits: number | null | undefined) => (credits == null ? null : Math.round(credits * 1000));

/** A new organisation as an operator gives it (the admin API, the CLI): NewOrg with its spend cap in credits. */
export type OperatorNewOrg = Omit<NewOrg, 'spendCapMilli' | 'limitOverrides'> & {
  spendCapCredits?: number | null | undefined;
  /** The organisation's limit overrides (NewOrg's limitOverrides). */
  limits?: Record<string, number> | undefined;
};

/** An organisation's changes as an operator gives them: OrgChanges with the spend cap in credits. */
export type OperatorOrgChanges = Omit<OrgChanges, 'spendCapMilli'> & {
  /** null: back to the plan's default. */
  spendCapCredits?: number | null | undefined;
};

export function makeOperator(deps: OperatorDeps) {
  const { sql, ledger } = deps;
  return {
    async createOrg(input: OperatorNewOrg): Promise<Org> {
      const org = await createOrg(sql, {
        name: input.name,
        plan: input.plan,
        status: input.status,
        spendCapMilli: toMilli(input.spendCapCredits),
        limitOverrides: input.limits,
      });
      await ledger.openAccount(org.id);
      return org;
    },

    async listOrgs(): Promise<Org[]> {
      return listOrgs(sql);
    },

    /** The organisation's keys, without secrets (only their hashes are stored). */
    async listKeys(orgId: string): Promise<ApiKey[]> {
      await requireOrg(sql, orgId);
      return listKeys(sql, orgId);
    },

    async getOrg(orgId: string): Promise<{ org: Org; keys: ApiKey[]; balance: Balance }> {
      const org = await requireOrg(sql, orgId);
      const keys = await listKeys(sql, orgId);
      return { org, keys, balance: await ledger.balance(orgId) };
    },

    async updateOrg(orgId: string, input: OperatorOrgChanges): Promise<Org> {
      const { spendCapCredits, ...rest } = input;
      const changes: OrgChanges = { ...rest };
      if (spendCapCredits !== undefined) changes.spendCapMilli = toMilli(spendCapCredits);
      const org = await updateOrg(sql, orgId, changes);
      // Opens the account if it has none yet; a plan change applies to the allowance from the next
      // monthly reset (docs/decisions.md §2).
      await ledger.openAccount(org.id);
      return org;
    },

    async createKey(input: NewKey): Promise<{ key: ApiKey; secret: string }> {
      return createKey(sql, input);
    },

    async revokeKey(keyId: string): Promise<ApiKey> {
      return revokeKey(sql, keyId, deps.clock());
    },

    async topUp(orgId: string, credits: number, requestId?: string): Promise<Balance> {
      await requireOrg(sql, orgId);
      await ledger.topUp(orgId, Math.round(credits * 1000), { requestId: requestId ?? null });
      return ledger.balance(orgId);
    },

    async showCredits(orgId: string): Promise<Balance> {
      await requireOrg(sql, orgId);
      return ledger.balance(orgId);
    },
  };
}

export type Operator = ReturnType<typeof makeOperator>;
