// Organisations: plan, status, spend cap and per-organisation limit overrides (docs/decisions.md §1, §3, §8).
import type { Sql } from '../db/connection.js';
import { databaseRead, databaseWrite, inTransaction } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { notifyAuthChanged } from './auth-changes.js';

export const PLANS = ['none', 'plus', 'pro'] as const;
export type Plan = (typeof PLANS)[number];
export const ORG_STATUSES = ['active', 'suspended'] as const;
export type OrgStatus = (typeof ORG_STATUSES)[number];

export interface Org {
  id: string;
  name: string;
  status: OrgStatus;
  plan: Plan;
  planActive: boolean;
  spendCapMilli: number | null;
  limitOverrides: Record<string, number>;
  createdAt: Date;
}

/** Names of the limits an operator may override (docs/decisions.md §3). */
export const LIMIT_NAMES = [
  'data_rpm',
  'simulations_rpm',
  'concurrent_simulations',
  'batches_per_day',
  'submissions_per_day',
  'gpu_seconds_per_day',
] as const;

export interface NewOrg {
  name: string;
  plan: Plan;
  status?: OrgStatus | undefined;
  spendCapMilli?: number | null | undefined;
  limitOverrides?: Record<string, number> | undefined;
}

export async function createOrg(sql: Sql, input: NewOrg): Promise<Org> {
  const id = newId('org');
  const [row] = await databaseWrite(
    () => sql<Org[]>`
      INSERT INTO orgs (id, name, plan, status, spend_cap_milli, limit_overrides)
      VALUES (${id}, ${input.name}, ${input.plan}, ${input.status ?? 'active'}, ${input.spendCapMilli ?? null},
              ${sql.json(input.limitOverrides ?? {})})
      RETURNING *`,
  );
  return row!;
}

export async function getOrg(sql: Sql, orgId: string): Promise<Org | null> {
  const [row] = await databaseRead(() => sql<Org[]>`SELECT * FROM orgs WHERE id = ${orgId}`);
  return row ?? null;
}

/** Every organisation, oldest first (the operators' `org list`). */
export async function listOrgs(sql: Sql): Promise<Org[]> {
  return sql<Org[]>`SELECT * FROM orgs ORDER BY created_at, id`;
}

export async function requireOrg(sql: Sql, orgId: string): Promise<Org> {
  const org = await getOrg(sql, orgId);
  if (!org) throw new ApiError('resource_missing', { message: `No organisation ${orgId}.`, param: 'org_id' });
  return org;
}

export interface OrgChanges {
  name?: string | undefined;
  plan?: Plan | undefined;
  status?: OrgStatus | undefined;
  planActive?: boolean | undefined;
  /** null restores the default cap. */
  spendCapMilli?: number | null | undefined;
  /** Merged into the existing overrides; a null value removes an override. */
  limitOverrides?: Record<string, number | null> | undefined;
}

export async function updateOrg(sql: Sql, orgId: string, changes: OrgChanges): Promise<Org> {
  return inTransaction(sql, {}, async (tx) => {
    const [current] = await tx<Org[]>`SELECT * FROM orgs WHERE id = ${orgId} FOR UPDATE`;
    if (!current)
      throw new ApiError('resource_missing', { message: `No organisation ${orgId}.`, param: 'org_id' });
    const overrides: Record<string, number> = { ...current.limitOverrides };
    for (const [name, value] of Object.entries(changes.limitOverrides ?? {})) {
      if (value === null) delete overrides[name];
      else overrides[name] = value;
    }
    const spendCap = changes.spendCapMilli === undefined ? current.spendCapMilli : changes.spendCapMilli;
    const [row] = await tx<Org[]>`
      UPDATE orgs SET
        name = ${changes.name ?? current.name},
        plan = ${changes.plan ?? current.plan},
        status = ${changes.status ?? current.status},
        plan_active = ${changes.planActive ?? current.planActive},
        spend_cap_milli = ${spendCap},
        limit_overrides = ${tx.json(overrides)}
      WHERE id = ${orgId}
      RETURNING *`;
    // Delivered on commit: cached keys of this organisation must see the new status and plan.
    await notifyAuthChanged(tx, orgId);
    return row!;
  });
}
