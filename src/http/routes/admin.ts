// The operators' HTTP API under /admin/v1 (docs/decisions.md §8). It exists only when ADMIN_TOKEN is set.
import type { KeyCache } from '../../accounts/key-cache.js';
import { simulationDocumentSchema } from '../../engine/document-schema.js';
import type { Operator } from '../../operations/operator.js';
import { OPERATOR_DRAWS, operatorSimulation } from '../../operations/operator-simulation.js';
import { creditsView, keyView, newKeyView, orgDetailView, orgView } from '../../operations/views.js';
import { projectCompetition } from '../../projections/operator-projection.js';
import { DEFAULT_SEASONS } from '../../projections/types.js';
import type { App, AppDeps } from '../app-types.js';
import {
  adminKeySchema,
  adminNewKeySchema,
  adminOrgCreditsSchema,
  adminOrgDetailSchema,
  adminOrgListSchema,
  adminOrgSchema,
  adminProjectionBody,
  adminProjectionSchema,
  adminSimulationBody,
  createKeyBody,
  createOrgBody,
  keyIdParams,
  orgIdParams,
  patchOrgBody,
  topUpBody,
} from '../schemas/admin.js';
import { COMPETITION_ERRORS } from './job-routing.js';

const admin = { access: 'admin' as const };
const tags = ['admin'];

/** What the admin routes use: the operator's operations and the key cache they must empty. */
interface AdminRouting {
  operator: Operator;
  keyCache: KeyCache;
}

export function registerAdminRoutes(app: App, deps: AppDeps, keyCache: KeyCache) {
  const routing: AdminRouting = { operator: deps.services.operator, keyCache };
  registerCreateOrg(app, routing);
  registerReadOrg(app, routing);
  registerUpdateOrg(app, routing);
  registerCreateKey(app, routing);
  registerRevokeKey(app, routing);
  registerTopUp(app, routing);
  registerListOrgs(app, routing);
  registerProjection(app, deps);
  registerSimulation(app, deps);
}

function registerListOrgs(app: App, { operator }: AdminRouting) {
  app.get(
    '/admin/v1/orgs',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'listOrgs',
        summary: 'List organisations, as `matchsim org list`',
        response: { 200: adminOrgListSchema },
      },
    },
    async () => ({ object: 'list' as const, data: (await operator.listOrgs()).map(orgView) }),
  );
}

function registerProjection(app: App, deps: AppDeps) {
  app.post(
    '/admin/v1/projections',
    {
      config: { ...admin, errors: COMPETITION_ERRORS },
      schema: {
        tags,
        operationId: 'projectCompetition',
        summary: 'Project a competition now, without a charge, as `matchsim projection`',
        description:
          "A customer's projection (docs/api.md §4.12) with the same seed, so the same table, run at once in " +
          'this process: no job, hold or charge.',
        body: adminProjectionBody,
        response: { 200: adminProjectionSchema },
      },
    },
    async (request) =>
      projectCompetition(
        deps.db.sql,
        request.body.competition_id,
        request.body.seasons ?? DEFAULT_SEASONS,
        deps.clock(),
      ),
  );
}

function registerSimulation(app: App, deps: AppDeps) {
  app.post(
    '/admin/v1/simulations',
    {
      config: { ...admin, errors: ['fixture_not_found', 'market_unreachable'] },
      schema: {
        tags,
        operationId: 'simulateFixture',
        summary: 'Simulate a fixture now, without a charge, as `matchsim simulate`',
        description:
          "The fixture's current inputs with automatic lineups, fitted to `market` or run from `from_state` " +
          "when given (checked as a customer's request is, docs/api.md §4.3), run whole on the CPU engine " +
          'on a thread of this process with a fixed seed: no job, hold or charge. The answer is the document.',
        body: adminSimulationBody,
        response: { 200: simulationDocumentSchema },
      },
    },
    async (request) => {
      const { fixture_id, draws, market, from_state } = request.body;
      return operatorSimulation(deps.db.sql, {
        fixtureId: fixture_id,
        draws: draws ?? OPERATOR_DRAWS,
        ...(market ? { market } : {}),
        ...(from_state ? { fromState: from_state } : {}),
      });
    },
  );
}

function registerCreateOrg(app: App, { operator }: AdminRouting) {
  app.post(
    '/admin/v1/orgs',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'createOrg',
        summary: 'Create an organisation',
        body: createOrgBody,
        response: { 201: adminOrgSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const org = await operator.createOrg({
        name: body.name,
        plan: body.plan,
        status: body.status,
        spendCapCredits: body.spend_cap_credits,
        limits: body.limits as Record<string, number> | undefined,
      });
      return reply.code(201).send(orgView(org));
    },
  );
}

function registerReadOrg(app: App, { operator }: AdminRouting) {
  app.get(
    '/admin/v1/orgs/:org_id',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'getOrg',
        summary: 'Read an organisation, its keys and credits',
        params: orgIdParams,
        response: { 200: adminOrgDetailSchema },
      },
    },
    async (request) => orgDetailView(await operator.getOrg(request.params.org_id)),
  );
}

function registerUpdateOrg(app: App, { operator, keyCache }: AdminRouting) {
  app.patch(
    '/admin/v1/orgs/:org_id',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'updateOrg',
        summary: 'Change plan, status, spend cap or limits',
        params: orgIdParams,
        body: patchOrgBody,
        response: { 200: adminOrgSchema },
      },
    },
    async (request) => {
      const body = request.body;
      const org = await operator.updateOrg(request.params.org_id, {
        name: body.name,
        plan: body.plan,
        planActive: body.plan_active,
        status: body.status,
        spendCapCredits: body.spend_cap_credits,
        limitOverrides: body.limits as Record<string, number | null> | undefined,
      });
      // Without NOTIFY (embedded database) only this process holds cached keys: forget them now.
      keyCache.invalidate();
      return orgView(org);
    },
  );
}

function registerCreateKey(app: App, { operator }: AdminRouting) {
  app.post(
    '/admin/v1/orgs/:org_id/keys',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'createApiKey',
        summary: 'Create an API key (the secret is shown once)',
        params: orgIdParams,
        body: createKeyBody,
        response: { 201: adminNewKeySchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const key = await operator.createKey({
        orgId: request.params.org_id,
        mode: body.mode,
        scopes: body.scopes,
        expiresAt: body.expires_at ? new Date(body.expires_at) : null,
        ipAllowlist: body.ip_allowlist,
      });
      return reply.code(201).send(newKeyView(key));
    },
  );
}

function registerRevokeKey(app: App, { operator, keyCache }: AdminRouting) {
  app.post(
    '/admin/v1/keys/:key_id/revoke',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key',
        params: keyIdParams,
        response: { 200: adminKeySchema },
      },
    },
    async (request) => {
      const key = await operator.revokeKey(request.params.key_id);
      keyCache.invalidate();
      return keyView(key);
    },
  );
}

function registerTopUp(app: App, { operator }: AdminRouting) {
  app.post(
    '/admin/v1/orgs/:org_id/topups',
    {
      // A connection lost as the top-up commits leaves its outcome unknown (src/billing/charges.ts).
      config: { ...admin, errors: ['settlement_unknown'] },
      schema: {
        tags,
        operationId: 'createTopUp',
        summary: 'Add top-up credits',
        params: orgIdParams,
        body: topUpBody,
        response: { 201: adminOrgCreditsSchema },
      },
    },
    async (request, reply) => {
      const balance = await operator.topUp(request.params.org_id, request.body.credits, request.id);
      return reply.code(201).send(creditsView(balance));
    },
  );
}
