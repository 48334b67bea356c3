// Wire schemas of the operators' admin API (docs/decisions.md §8); the views are in
// src/operations/views.ts, shared with the CLI.
import { z } from 'zod';
import { SCOPES } from '../../accounts/keys.js';
import { LIMIT_NAMES, ORG_STATUSES, PLANS } from '../../accounts/orgs.js';

const limitsSchema = z.record(z.enum(LIMIT_NAMES), z.number());

export const adminOrgSchema = z.object({
  object: z.literal('org'),
  org_id: z.string(),
  name: z.string(),
  plan: z.enum(PLANS),
  plan_active: z.boolean(),
  status: z.enum(ORG_STATUSES),
  spend_cap_credits: z.number().nullable(),
  limit_overrides: z.record(z.string(), z.number()),
  limits: limitsSchema,
  created_at: z.string(),
});

export const adminKeySchema = z.object({
  object: z.literal('api_key'),
  key_id: z.string(),
  org_id: z.string(),
  mode: z.enum(['live', 'test']),
  scopes: z.array(z.enum(SCOPES)),
  ip_allowlist: z.array(z.string()),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  secret_prefix: z.string(),
  created_at: z.string(),
});

export const adminNewKeySchema = adminKeySchema.extend({
  secret: z.string().describe('The key itself: shown in this response only.'),
});

export const adminOrgCreditsSchema = z.object({
  object: z.literal('org_credits'),
  org_id: z.string(),
  available: z.number(),
  monthly_remaining: z.number(),
  topup_remaining: z.number(),
  held: z.number(),
  spent_this_month: z.number(),
  spend_cap: z.number(),
});

export const adminOrgDetailSchema = adminOrgSchema.extend({
  credits: adminOrgCreditsSchema,
  keys: z.array(adminKeySchema),
});
