// Wire schemas of the operators' admin API (docs/decisions.md §8): its requests, built from the
// primitives every route uses, and its responses (the views are in src/operations/views.ts, shared with
// the CLI).
import { z } from 'zod';
import { SCOPES } from '../../accounts/keys.js';
import { LIMIT_NAMES, ORG_STATUSES, PLANS } from '../../accounts/orgs.js';
import { MAX_DRAWS_PER_JOB, MIN_DRAWS_PER_JOB } from '../../engine-contract/run.js';
import { OPERATOR_DRAWS } from '../../operations/operator-simulation.js';
import { fromStateRequestSchema } from './in-play.js';
import {
  boundedText,
  creditAmount,
  int4Id,
  isoDateTime,
  limitValue,
  positiveCreditAmount,
} from './primitives.js';
import { projectionBodySchema, projectionSchema } from './projections.js';
import { named } from './registry.js';
import { marketRequestSchema } from './simulations.js';

const MAX_ALLOWLIST_ENTRIES = 100;
const MAX_ID_LENGTH = 64;

export const orgIdParams = z.object({
  org_id: z
    .string()
    .max(MAX_ID_LENGTH)
    .regex(/^org_[0-9A-Za-z]+$/),
});
export const keyIdParams = z.object({
  key_id: z
    .string()
    .max(MAX_ID_LENGTH)
    .regex(/^key_[0-9A-Za-z]+$/),
});

const orgName = boundedText(200);

export const createOrgBody = z.strictObject({
  name: orgName,
  plan: z.enum(PLANS),
  status: z.enum(ORG_STATUSES).optional(),
  spend_cap_credits: creditAmount.nullable().optional(),
  limits: z.partialRecord(z.enum(LIMIT_NAMES), limitValue).optional(),
});

export const patchOrgBody = z.strictObject({
  name: orgName.optional(),
  plan: z.enum(PLANS).optional(),
  plan_active: z.boolean().optional(),
  status: z.enum(ORG_STATUSES).optional(),
  spend_cap_credits: creditAmount.nullable().optional(),
  limits: z.partialRecord(z.enum(LIMIT_NAMES), limitValue.nullable()).optional(),
});

export const createKeyBody = z.strictObject({
  mode: z.enum(['live', 'test']),
  scopes: z.array(z.enum(SCOPES)).min(1).optional(),
  expires_at: isoDateTime.nullable().optional(),
  ip_allowlist: z.array(boundedText(64)).max(MAX_ALLOWLIST_ENTRIES).optional(),
});

export const topUpBody = z.strictObject({ credits: positiveCreditAmount });

/** Every limit by name: an object with one required number per name, so generated clients name them. */
const limitsSchema = z.object(
  Object.fromEntries(LIMIT_NAMES.map((name) => [name, z.number()])) as Record<
    (typeof LIMIT_NAMES)[number],
    z.ZodNumber
  >,
);

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

// Component names in the admin OpenAPI document (src/http/schemas/registry.ts).
export const adminOrgListSchema = z.object({ object: z.literal('list'), data: z.array(adminOrgSchema) });

/** An operator's projection: the competition and seasons, as a customer's request has them. */
export const adminProjectionBody = projectionBodySchema.pick({ competition_id: true, seasons: true });
/** The projection's table without a customer's delivery: no id, receipt or charge. */
export const adminProjectionSchema = projectionSchema
  .pick({
    competition: true,
    as_of: true,
    data_version: true,
    seasons: true,
    played_fixtures: true,
    remaining_fixtures: true,
    model: true,
    rules: true,
    zones: true,
    teams: true,
  })
  .extend({ object: z.literal('projection_table') });

named('CreateOrgRequest', createOrgBody);
named('UpdateOrgRequest', patchOrgBody);
named('CreateApiKeyRequest', createKeyBody);
named('TopUpRequest', topUpBody);
named('Org', adminOrgSchema);
named('ApiKey', adminKeySchema);
named('NewApiKey', adminNewKeySchema);
named('OrgCredits', adminOrgCreditsSchema);
named('OrgDetail', adminOrgDetailSchema);

/** `matchsim simulate`'s run through the admin API: a fixture, its draws and the CLI's market or state. */
export const adminSimulationBody = z.strictObject({
  fixture_id: int4Id.describe('The fixture to simulate, with its current inputs and automatic lineups.'),
  draws: z
    .number()
    .int()
    .min(MIN_DRAWS_PER_JOB)
    .max(MAX_DRAWS_PER_JOB)
    .optional()
    .describe(`Simulated matches, ${MIN_DRAWS_PER_JOB} to ${MAX_DRAWS_PER_JOB}; default ${OPERATOR_DRAWS}.`),
  market: marketRequestSchema.optional(),
  from_state: fromStateRequestSchema.optional(),
});
