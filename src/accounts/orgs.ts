// Organisations: plan, status, spend cap and per-organisation limit overrides (decisions 1, 3, 8).
import { z } from 'zod';
import type { Sql } from '../db/connection.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { AUTH_CHANGED_CHANNEL } from './keys.js';

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

interface OrgRow {
  id: string;
  name: string;
  status: OrgStatus;
  plan: Plan;
  plan_active: boolean;
  spend_cap_milli: number | null;
  limit_overrides: Record<string, number>;
  created_at: Date;
}

export function orgFromRow(row: OrgRow): Org {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    plan: row.plan,
    planActive: row.plan_active,
    spendCapMilli: row.spend_cap_milli,
    limitOverrides: row.limit_overrides ?? {},
    createdAt: row.created_at,
  };
}

/** Names of the limits an operator may override (decisions 3). */
export const LIMIT_NAMES = [
  'data_rpm',
  'simulations_rpm',
  'concurrent_simulations',
  'batches_per_day',
  'submissions_per_day',
  'gpu_seconds_per_day',
] as const;
export const limitOverridesSchema = z.partialRecord(
  z.enum(LIMIT_NAMES),
  z.number().int().min(0).max(1_000_000_000),
);

export interface NewOrg {
  name: string;
  plan: Plan;
  status?: OrgStatus | undefined;
  spendCapMilli?: number | null | undefined;
  limitOverrides?: Record<string, number> | undefined;
}

export async function createOrg(sql: Sql, input: NewOrg): Promise<Org> {
  const id = newId('org');
  const [row] = await sql<OrgRow[]>`
    INSERT INTO orgs (id, name, plan, status, spend_cap_milli, limit_overrides)
    VALUES (${id}, ${input.name}, ${input.plan}, ${input.status ?? 'active'}, ${input.spendCapMilli ?? null},
            ${sql.json(input.limitOverrides ?? {})})
    RETURNING *`;
  return orgFromRow(row!);
}

export async function getOrg(sql: Sql, orgId: string): Promise<Org | null> {
  const [row] = await sql<OrgRow[]>`SELECT * FROM orgs WHERE id = ${orgId}`;
  return row ? orgFromRow(row) : null;
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
  return sql.begin(async (tx) => {
    const [current] = await tx<OrgRow[]>`SELECT * FROM orgs WHERE id = ${orgId} FOR UPDATE`;
    if (!current)
      throw new ApiError('resource_missing', { message: `No organisation ${orgId}.`, param: 'org_id' });
    const overrides: Record<string, number> = { ...current.limit_overrides };
    for (const [name, value] of Object.entries(changes.limitOverrides ?? {})) {
      if (value === null) delete overrides[name];
      else overrides[name] = value;
    }
    const spendCap = changes.spendCapMilli === undefined ? current.spend_cap_milli : changes.spendCapMilli;
    const [row] = await tx<OrgRow[]>`
      UPDATE orgs SET
        name = ${changes.name ?? current.name},
        plan = ${changes.plan ?? current.plan},
        status = ${changes.status ?? current.status},
        plan_active = ${changes.planActive ?? current.plan_active},
        spend_cap_milli = ${spendCap},
        limit_overrides = ${tx.json(overrides)}
      WHERE id = ${orgId}
      RETURNING *`;
    // Delivered on commit: cached keys of this organisation must see the new status and plan.
    await tx`SELECT pg_notify(${AUTH_CHANGED_CHANNEL}, ${orgId})`;
    return orgFromRow(row!);
  });
}
