// The CLI as an operator runs it, a separate process, on a database of its own loaded with the demo
// data: on the embedded PGlite in a temporary DATA_DIR, or on a fresh test database of the PostgreSQL
// server when DATABASE_URL is set. Registers the suite's set-up and clean-up; returns the runner.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { type CliAnswer, runCli } from './cli-process.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { demoClockOffset } from './demo-day.js';

export type CliRun = (args: string[]) => Promise<CliAnswer>;

export function cliOnDemoData(name: string): CliRun {
  const dataDir = mkdtempSync(path.join(tmpdir(), `matchsim-${name}-cli-`));
  let serverDb: TestDatabase | undefined;
  const matchsim: CliRun = async (args) => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      CLOCK_OFFSET_SECONDS: demoClockOffset(),
    };
    if (serverDb?.url) env.DATABASE_URL = serverDb.url;
    else delete env.DATABASE_URL;
    return runCli(args, env);
  };
  beforeAll(async () => {
    if (process.env.DATABASE_URL) serverDb = await createTestDatabase({ max: 1 });
    const demo = await matchsim(['demo']);
    expect(demo.code, demo.stderr).toBe(0);
  });
  afterAll(async () => {
    await serverDb?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return matchsim;
}
