// The operators' CLI as an operator runs it: a separate process over the same database.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const run = promisify(execFile);
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
  delete fullEnv.BASE_URL; // set to '/' by vitest (Vite's BASE_URL), not by an operator
  if (serverDb?.url) fullEnv.DATABASE_URL = serverDb.url;
  else delete fullEnv.DATABASE_URL;
  try {
    const { stdout, stderr } = await run('node', ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: fullEnv,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
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
