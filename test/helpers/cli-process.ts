// `matchsim` as an operator runs it: a separate process on the compiled CLI (test/helpers/built-cli.ts),
// answering its exit code and output. Each suite gives the environment it needs (its DATA_DIR, its
// database).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll } from 'vitest';
import { BUILD_TIMEOUT_MS, builtCli, CLI_ENTRY } from './built-cli.js';

const run = promisify(execFile);

// Built before the file's first test, under a hook's time limit rather than a test's.
beforeAll(() => builtCli(), BUILD_TIMEOUT_MS);

export interface CliAnswer {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI with `args` in `env`, less BASE_URL (set to '/' by vitest, Vite's BASE_URL, not by an operator). */
export async function runCli(args: string[], env: Record<string, string | undefined>): Promise<CliAnswer> {
  const processEnv = { ...env };
  delete processEnv.BASE_URL;
  await builtCli();
  try {
    const { stdout, stderr } = await run('node', [CLI_ENTRY, ...args], {
      env: processEnv,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as CliAnswer;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
