// The demo of the embedded default (docs/decisions.md §8): on a fresh database `npm start` loads the
// demo data set and creates a demo organisation (Pro) with a live and a test key, once.
import type { Sql } from '../db/connection.js';
import { readSetting, writeSetting } from '../db/service-settings.js';
import { loadDemoData } from '../fixtures/demo-data.js';
import { anyFixtureStored } from '../fixtures/fixture-record.js';
import type { Operator } from './operator.js';

/** Demo seed: the same demo world on every fresh start. */
export const DEMO_SEED = 'matchsim-demo';

const DEMO_ORG_SETTING = 'demo_org_id';

/** Create the demo organisation (Pro) with a live and a test key, once per database. */
export async function ensureDemoOrganisation(
  sql: Sql,
  operator: Operator,
): Promise<{ orgId: string; created: boolean; liveSecret?: string; testSecret?: string }> {
  const existing = await readSetting(sql, DEMO_ORG_SETTING);
  if (existing) return { orgId: existing, created: false };
  const org = await operator.createOrg({ name: 'Demo organisation', plan: 'pro' });
  const live = await operator.createKey({ orgId: org.id, mode: 'live' });
  const test = await operator.createKey({ orgId: org.id, mode: 'test' });
  await writeSetting(sql, DEMO_ORG_SETTING, org.id);
  return { orgId: org.id, created: true, liveSecret: live.secret, testSecret: test.secret };
}

/** Load the demo data set when the database has no fixtures yet. */
export async function ensureDemoData(sql: Sql, now: Date): Promise<boolean> {
  if (await anyFixtureStored(sql)) return false;
  await loadDemoData(sql, { seed: DEMO_SEED, now });
  return true;
}
