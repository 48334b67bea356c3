// `matchsim projection --competition ID` as an operator runs it: a separate process over the demo data.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const run = promisify(execFile);
const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-projection-cli-'));
let serverDb: TestDatabase | undefined;

async function matchsim(args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  delete env.BASE_URL;
  if (serverDb?.url) env.DATABASE_URL = serverDb.url;
  else delete env.DATABASE_URL;
  try {
    const { stdout, stderr } = await run('node', ['--import', 'tsx', 'src/cli/main.ts', ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  if (process.env.DATABASE_URL) serverDb = await createTestDatabase({ max: 1 });
  const demo = await matchsim(['demo']);
  expect(demo.code, demo.stderr).toBe(0);
});
afterAll(async () => {
  await serverDb?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('matchsim projection', () => {
  it('projects a competition of the database: the table and the odds, as JSON or a table', async () => {
    const json = await matchsim(['projection', '--competition', '1', '--seasons', '1000', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const projection = JSON.parse(json.stdout);
    expect(projection).toMatchObject({ competition: { competition_id: 1 }, seasons: 1000 });
    expect(projection.teams).toHaveLength(20);
    const titles = projection.teams.reduce((sum: number, team: { title: number }) => sum + team.title, 0);
    expect(titles).toBeCloseTo(1, 12);
    const table = await matchsim(['projection', '--competition', '1', '--seasons', '1000']);
    expect(table.stdout.split('\n')[1]).toMatch(
      /^rank\s+club\s+played\s+points\s+expected_points\s+title\s+top_four\s+relegation/,
    );
  });

  it('refuses a seasons count out of range (exit 2) and an unknown competition (exit 1)', async () => {
    const few = await matchsim(['projection', '--competition', '1', '--seasons', '20']);
    expect(few.code).toBe(2);
    expect(few.stderr).toContain('--seasons must be a whole number from 1000 to 100000');
    const unknown = await matchsim(['projection', '--competition', '77']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No competition 77.');
  });
});
