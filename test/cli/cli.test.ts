// The operators' CLI as an operator runs it: a separate process over the same database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-cli-'));
let serverDb: TestDatabase | undefined;

beforeAll(async () => {
  if (process.env.DATABASE_URL) serverDb = await createTestDatabase({ max: 1 });
});
afterAll(async () => {
  await serverDb?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function matchsim(args: string[], env: Record<string, string> = {}) {
  const fullEnv: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...env,
  };
  if (serverDb?.url) fullEnv.DATABASE_URL = serverDb.url;
  else delete fullEnv.DATABASE_URL;
  return runCli(args, fullEnv);
}

describe('matchsim CLI', () => {
  it('creates an organisation, a key, a top-up, a change and a revocation, with JSON output', async () => {
    const org = await matchsim(['org', 'create', '--name', 'Acme', '--plan', 'plus', '--json']);
    expect(org.code, org.stderr).toBe(0);
    const orgJson = JSON.parse(org.stdout);
    expect(orgJson).toMatchObject({ object: 'org', name: 'Acme', plan: 'plus' });

    const key = JSON.parse(
      (
        await matchsim([
          'key',
          'create',
          '--org',
          orgJson.org_id,
          '--mode',
          'test',
          '--scopes',
          'data.read',
          '--json',
        ])
      ).stdout,
    );
    expect(key.secret).toMatch(/^ms_test_/);
    expect(key.scopes).toEqual(['data.read']);

    const topup = JSON.parse(
      (await matchsim(['credits', 'topup', '--org', orgJson.org_id, '--credits', '12.5', '--json'])).stdout,
    );
    expect(topup).toMatchObject({ available: 112.5, topup_remaining: 12.5 });
    const shown = JSON.parse((await matchsim(['credits', 'show', '--org', orgJson.org_id, '--json'])).stdout);
    expect(shown.available).toBe(112.5);

    const set = JSON.parse(
      (await matchsim(['org', 'set', orgJson.org_id, '--plan', 'pro', '--spend-cap', '50', '--json'])).stdout,
    );
    expect(set).toMatchObject({ plan: 'pro', spend_cap_credits: 50 });

    const revoked = JSON.parse((await matchsim(['key', 'revoke', key.key_id, '--json'])).stdout);
    expect(revoked.revoked_at).not.toBeNull();

    // Lists: JSON without secrets, tables for people.
    const keys = JSON.parse((await matchsim(['key', 'list', '--org', orgJson.org_id, '--json'])).stdout);
    expect(keys.data).toHaveLength(1);
    expect(keys.data[0]).toMatchObject({ key_id: key.key_id, secret_prefix: key.secret.slice(0, 12) });
    expect(JSON.stringify(keys)).not.toContain(key.secret);
    const keyTable = await matchsim(['key', 'list', '--org', orgJson.org_id]);
    expect(keyTable.stdout.split('\n')[0]).toMatch(/^KEY\s+MODE\s+PREFIX\s+SCOPES/);
    expect(keyTable.stdout).toContain(key.key_id);
    expect(keyTable.stdout).not.toContain(key.secret);
    const orgTable = await matchsim(['org', 'list']);
    expect(orgTable.code).toBe(0);
    expect(orgTable.stdout.split('\n')[0]).toMatch(/^ORG\s+NAME\s+PLAN/);
    expect(orgTable.stdout).toMatch(new RegExp(`${orgJson.org_id}\\s+Acme\\s+pro`));
  }, 120_000);

  it('shows help per command, and answers bad usage with exit code 2 and the usage (JSON under --json)', async () => {
    const help = await matchsim(['key', 'create', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: matchsim key create --org ORG --mode live\|test/);
    expect((await matchsim(['help', 'org'])).stdout).toContain('org set ORG');
    const flag = await matchsim(['org', 'list', '--colour', 'red']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Unknown option '--colour'");
    expect(flag.stderr).toContain('usage: matchsim org list');
    expect(flag.stderr).not.toContain('    at '); // no stack trace
    const group = await matchsim(['key']);
    expect(group.code).toBe(2);
    expect(group.stderr).toContain('key revoke KEY');
    const json = await matchsim(['key', 'revoke', '--json']);
    expect(json.code).toBe(2);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toMatchObject({
      error: {
        code: 'usage_invalid',
        message: expect.stringContaining('KEY'),
        usage: expect.stringContaining('key revoke'),
      },
    });
    const missing = await matchsim(['credits', 'show', '--org', 'org_doesnotexist', '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toEqual({
      error: { code: 'resource_missing', message: 'No organisation org_doesnotexist.', param: 'org_id' },
    });
  }, 120_000);

  it('refuses bad arguments and bad configuration with exit code 2 and a message', async () => {
    const plan = await matchsim(['org', 'create', '--name', 'X', '--plan', 'gold']);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toContain('--plan must be one of');
    const unknown = await matchsim(['frobnicate']);
    expect(unknown.code).toBe(2);
    const config = await matchsim(['migrate'], { PORT: 'eighty' });
    expect(config.code).toBe(2);
    expect(config.stderr).toContain('PORT');
    const missing = await matchsim(['credits', 'show', '--org', 'org_doesnotexist']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('org_doesnotexist');
  }, 120_000);
});
