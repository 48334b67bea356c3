// Vitest's global setup (vitest.config.ts): names the migrated database this run copies for each test
// file (test/helpers/database.ts makes it on first use, so a run with no database test makes none), and
// removes it when the run ends. On a PostgreSQL server it is a database of its own, cloned with
// CREATE DATABASE … TEMPLATE; on PGlite a file of its data directory, loaded into each new in-memory
// PGlite. A new PGlite otherwise runs initdb and every migration, about two seconds of CPU each time.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';

export interface DatabaseTemplate {
  /** The template database's name on the server at DATABASE_URL, this run's own. */
  serverName: string;
  /** Where the migrated PGlite data directory's tar is written. */
  embeddedFile: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseTemplate: DatabaseTemplate;
  }
}

export default function setup(project: TestProject): () => Promise<void> {
  const folder = mkdtempSync(path.join(tmpdir(), 'matchsim-test-template-'));
  const template: DatabaseTemplate = {
    serverName: `matchsim_template_${randomBytes(6).toString('hex')}`,
    embeddedFile: path.join(folder, 'migrated.tar'),
  };
  project.provide('databaseTemplate', template);
  return async () => {
    rmSync(folder, { recursive: true, force: true });
    const serverUrl = process.env.DATABASE_URL;
    if (!serverUrl) return;
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    try {
      for (const name of [template.serverName, `${template.serverName}_migrating`]) {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    } finally {
      await admin.end({ timeout: 5 });
    }
  };
}
