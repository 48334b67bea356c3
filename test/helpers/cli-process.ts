// `matchsim` as an operator runs it: a separate process on the TypeScript sources, answering its exit
// code and output. Each suite gives the environment it needs (its DATA_DIR, its database).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CliAnswer {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI with `args` in `env`, less BASE_URL (set to '/' by vitest, Vite's BASE_URL, not by an operator). */
export async function runCli(args: string[], env: Record<string, string | undefined>): Promise<CliAnswer> {
  const processEnv = { ...env };
  delete processEnv.BASE_URL;
  try {
    const { stdout, stderr } = await run('node', ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: processEnv,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as CliAnswer;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
