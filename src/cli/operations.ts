// What the CLI's database commands do, in one shape whichever way they reach the database: on it
// directly (a PostgreSQL server, or the embedded database when no process holds it), or, when a running
// service holds the embedded database (PGlite belongs to one process), through that service's admin API
// at the address it recorded (src/operations/service-address.ts), with the admin token it uses. Each
// operation answers the view the admin API answers, so a command prints the same either way.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { NewKey } from '../accounts/keys.js';
import { makeLedger } from '../billing/ledger.js';
import { type Config, serviceClock } from '../config.js';
import type { Database } from '../db/connection.js';
import { EmbeddedDatabaseInUse } from '../db/embedded-lock.js';
import { openServiceDatabase, runMigrations } from '../db/migrations.js';
import type { SimulationDocument } from '../engine/document-schema.js';
import { ApiError, type ErrorCode } from '../errors.js';
import { loadDemoData } from '../fixtures/demo-data.js';
import { ingestFeed } from '../fixtures/feed-loader.js';
import { DEMO_SEED } from '../operations/demo.js';
import { makeOperator, type OperatorNewOrg, type OperatorOrgChanges } from '../operations/operator.js';
import { operatorSimulation, type SimulateArguments } from '../operations/operator-simulation.js';
import { readServiceAddress, type ServiceAddress } from '../operations/service-address.js';
import { creditsView, keyView, newKeyView, type orgDetailView, orgView } from '../operations/views.js';
import { type OperatorProjection, projectCompetition } from '../projections/operator-projection.js';

type OrgView = ReturnType<typeof orgView>;
type KeyView = ReturnType<typeof keyView>;
type NewKeyView = ReturnType<typeof newKeyView>;
type CreditsView = ReturnType<typeof creditsView>;

/** What the CLI sets of a new organisation and of an organisation's changes (the admin API takes more). */
type NewOrg = Pick<OperatorNewOrg, 'name' | 'plan' | 'spendCapCredits'>;
type OrgChanges = Pick<OperatorOrgChanges, 'name' | 'plan' | 'status' | 'spendCapCredits'>;

export interface Operations {
  /** The running service the commands go through, or null on the database itself. */
  through: ServiceAddress | null;
  migrate(): Promise<{ applied: number[]; database: string }>;
  demo(): Promise<Record<string, unknown>>;
  ingest(feedText: string): Promise<Record<string, unknown>>;
  listOrgs(): Promise<OrgView[]>;
  createOrg(org: NewOrg): Promise<OrgView>;
  updateOrg(orgId: string, changes: OrgChanges): Promise<OrgView>;
  listKeys(orgId: string): Promise<KeyView[]>;
  createKey(key: NewKey): Promise<NewKeyView>;
  revokeKey(keyId: string): Promise<KeyView>;
  topUp(orgId: string, credits: number): Promise<CreditsView>;
  showCredits(orgId: string): Promise<CreditsView>;
  project(competitionId: number, seasons: number): Promise<OperatorProjection>;
  simulate(args: SimulateArguments): Promise<SimulationDocument>;
}

/** Runs `work` on the configured database, or through the service that holds the embedded one. */
export async function withOperations<T>(config: Config, work: (ops: Operations) => Promise<T>): Promise<T> {
  let db: Database;
  try {
    db = await openServiceDatabase(config);
  } catch (error) {
    if (!(error instanceof EmbeddedDatabaseInUse)) throw error;
    const address = readServiceAddress(config.DATA_DIR);
    // A worker or a CLI command holds it, or a service that has not listened yet: nothing to go through.
    if (!address || address.pid !== error.pid) throw error;
    return work(throughService(address, adminToken(config)));
  }
  try {
    return await work(onDatabase(db, serviceClock(config)));
  } finally {
    await db.close();
  }
}

function onDatabase(db: Database, clock: () => Date): Operations {
  const operator = makeOperator({ sql: db.sql, ledger: makeLedger({ sql: db.sql, clock }), clock });
  return {
    through: null,
    migrate: async () => ({ applied: await runMigrations(db.sql), database: db.kind }),
    demo: async () => ({ ...(await loadDemoData(db.sql, { seed: DEMO_SEED, now: clock() })) }),
    ingest: async (text) => ({ object: 'feed_load', ...(await ingestFeed(db.sql, text, { clock })) }),
    listOrgs: async () => (await operator.listOrgs()).map(orgView),
    createOrg: async (org) => orgView(await operator.createOrg(org)),
    updateOrg: async (orgId, changes) => orgView(await operator.updateOrg(orgId, changes)),
    listKeys: async (orgId) => (await operator.listKeys(orgId)).map(keyView),
    createKey: async (key) => newKeyView(await operator.createKey(key)),
    revokeKey: async (keyId) => keyView(await operator.revokeKey(keyId)),
    topUp: async (orgId, credits) => creditsView(await operator.topUp(orgId, credits)),
    showCredits: async (orgId) => creditsView(await operator.showCredits(orgId)),
    project: (competitionId, seasons) => projectCompetition(db.sql, competitionId, seasons, clock()),
    simulate: (args) => operatorSimulation(db.sql, args),
  };
}

/** The token the service uses: ADMIN_TOKEN, else the one it generated into DATA_DIR (src/server.ts). */
function adminToken(config: Config): string {
  if (config.ADMIN_TOKEN) return config.ADMIN_TOKEN;
  const file = path.resolve(config.DATA_DIR, 'admin-token');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new Error(`the running service's admin token is not in ${file}: set ADMIN_TOKEN to it`);
  }
}

function throughService(address: ServiceAddress, token: string): Operations {
  const call = async <T>(method: string, route: string, body?: unknown, raw = false): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(`${address.url}/admin/v1${route}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: raw ? (body as string) : JSON.stringify(body) }),
      });
    } catch (error) {
      throw new Error(
        `the embedded database is held by process ${address.pid}, whose admin API at ${address.url} did not answer (${(error as Error).message})`,
      );
    }
    const answer = (await response.json().catch(() => null)) as
      | (T & { error?: { code: ErrorCode; message: string; param?: string } })
      | null;
    if (response.ok && answer) return answer;
    const failure = answer?.error;
    if (failure) throw new ApiError(failure.code, { message: failure.message, param: failure.param ?? null });
    throw new Error(`${method} ${address.url}/admin/v1${route} answered HTTP ${response.status}`);
  };
  const org = (orgId: string) =>
    call<ReturnType<typeof orgDetailView>>('GET', `/orgs/${encodeURIComponent(orgId)}`);
  return {
    through: address,
    // The service migrated the database at its start, as every process does (docs/decisions.md §8).
    migrate: async () => ({ applied: [], database: 'embedded' }),
    demo: async () => {
      throw new Error(
        `the running service (process ${address.pid}) loaded the demo at its first start; to load it again, ` +
          'stop the service and run matchsim demo',
      );
    },
    ingest: (text) => call('POST', '/feed', text, true),
    listOrgs: async () => (await call<{ data: OrgView[] }>('GET', '/orgs')).data,
    createOrg: (input) =>
      call('POST', '/orgs', {
        name: input.name,
        plan: input.plan,
        ...(input.spendCapCredits === null ? {} : { spend_cap_credits: input.spendCapCredits }),
      }),
    updateOrg: (orgId, changes) =>
      call('PATCH', `/orgs/${encodeURIComponent(orgId)}`, {
        name: changes.name,
        plan: changes.plan,
        status: changes.status,
        spend_cap_credits: changes.spendCapCredits,
      }),
    listKeys: async (orgId) => (await org(orgId)).keys,
    createKey: (key) =>
      call('POST', `/orgs/${encodeURIComponent(key.orgId)}/keys`, {
        mode: key.mode,
        scopes: key.scopes,
        expires_at: key.expiresAt?.toISOString(),
        ip_allowlist: key.ipAllowlist,
      }),
    revokeKey: (keyId) => call('POST', `/keys/${encodeURIComponent(keyId)}/revoke`),
    topUp: (orgId, credits) => call('POST', `/orgs/${encodeURIComponent(orgId)}/topups`, { credits }),
    showCredits: async (orgId) => (await org(orgId)).credits,
    project: (competitionId, seasons) =>
      call('POST', '/projections', { competition_id: competitionId, seasons }),
    simulate: (args) =>
      call('POST', '/simulations', {
        fixture_id: args.fixtureId,
        draws: args.draws,
        ...(args.market ? { market: args.market } : {}),
        ...(args.fromState ? { from_state: args.fromState } : {}),
      }),
  };
}
