// `--help`, `-h` and an unknown flag on every command an operator runs: each of the CLI's commands
// (src/cli/parse.ts COMMANDS), each group, and each command of the GPU bundle's run.sh (gpu-check and
// serve-bench, scripts/gpu-bundle-run.sh). Help prints the usage on stdout and exits 0 (the CLI's
// convention, README "Operators' CLI"); an unknown flag prints what is wrong and the usage on stderr and
// exits 2; neither ever a stack trace.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS, commandUsage, parseCommandLine, UsageError } from '../../src/cli/parse.js';
import { builtCli } from '../helpers/built-cli.js';
import { runCli } from '../helpers/cli-process.js';

const root = path.resolve(import.meta.dirname, '../..');
/** A line of a Node stack trace. */
const STACK_LINE = /^\s+at .+[:(]/m;

function usageErrorOf(argv: string[]): UsageError {
  try {
    parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`${argv.join(' ')} parsed without a usage error`);
}

describe("every CLI command's usage", () => {
  it('is what --help and -h answer, and what comes with an unknown flag', () => {
    for (const command of COMMANDS) {
      const words = command.name.split(' ');
      const usage = commandUsage(command);
      for (const help of ['--help', '-h']) {
        expect(parseCommandLine([...words, help]), `${command.name} ${help}`).toEqual({
          kind: 'help',
          text: usage,
        });
        expect(parseCommandLine(['help', ...words]), `help ${command.name}`).toEqual({
          kind: 'help',
          text: usage,
        });
      }
      const refused = usageErrorOf([...words, '--no-such-flag']);
      expect(refused.message, command.name).toBe("Unknown option '--no-such-flag'");
      expect(refused.usage).toBe(usage);
    }
    const groups = new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!));
    for (const group of groups) {
      const help = parseCommandLine([group, '--help']);
      expect(help.kind, group).toBe('help');
      // `projection` is a command as well as a group: its unknown flag is the command's, tried above.
      if (COMMANDS.some((command) => command.name === group)) continue;
      expect(usageErrorOf([group, '--no-such-flag']).message).toBe(`${group} needs a subcommand`);
    }
  });

  it('prints as a process: help on stdout with 0, an unknown flag on stderr with 2, no stack trace', async () => {
    const env = { ...process.env, LOG_LEVEL: 'silent' };
    const help = await runCli(['simulate', '-h'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: matchsim simulate --fixture ID/);
    const unknown = await runCli(['model', 'backtest', '--no-such-flag'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--no-such-flag'");
    expect(unknown.stderr).toContain('usage: matchsim model backtest');
    for (const answer of [help, unknown]) expect(answer.stdout + answer.stderr).not.toMatch(STACK_LINE);
  });
});

// The bundle's run.sh as it is shipped, in a folder laid out as the bundle is (scripts/gpu-bundle.sh):
// its node/bin/node is this Node, app/dist/… its two entries as `npm run build` compiles them (dist/,
// built for this file's CLI runs by test/helpers/cli-process.ts; through tsx each of the six runs cost
// about 0.7 s more CPU), and app/node_modules/webgpu the dawn.node whose loading run.sh checks. Building
// the real bundle takes minutes; CI checks that one (scripts/check-gpu-bundle.sh).
const bundle = mkdtempSync(path.join(tmpdir(), 'matchsim-run-sh-'));
afterAll(() => rmSync(bundle, { recursive: true, force: true }));

async function layOutBundle(): Promise<string> {
  await builtCli();
  mkdirSync(path.join(bundle, 'node/bin'), { recursive: true });
  const node = path.join(bundle, 'node/bin/node');
  writeFileSync(node, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} "$@"\n`, { mode: 0o755 });
  for (const entry of ['dist/src/cli/gpu-check/bin.js', 'dist/bench/serve-bench.js']) {
    mkdirSync(path.dirname(path.join(bundle, 'app', entry)), { recursive: true });
    symlinkSync(path.join(root, entry), path.join(bundle, 'app', entry));
  }
  mkdirSync(path.join(bundle, 'app/node_modules'), { recursive: true });
  symlinkSync(path.join(root, 'node_modules/webgpu'), path.join(bundle, 'app/node_modules/webgpu'));
  const runSh = path.join(bundle, 'run.sh');
  copyFileSync(path.join(root, 'scripts/gpu-bundle-run.sh'), runSh);
  return runSh;
}

async function runBundle(runSh: string, args: string[]) {
  try {
    const { stdout, stderr } = await promisify(execFile)(runSh, args, { cwd: bundle });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("the GPU bundle's run.sh commands", () => {
  it('answer --help and -h with their usage and an unknown flag with exit code 2, never a stack trace', async () => {
    const runSh = await layOutBundle();
    for (const [command, usage] of [
      [[], 'usage: matchsim gpu-check'],
      [['serve-bench'], 'usage: serve-bench --out FILE'],
    ] as const) {
      for (const help of ['--help', '-h']) {
        const answer = await runBundle(runSh, [...command, help]);
        expect(answer.code, `${command} ${help}: ${answer.stderr}`).toBe(0);
        expect(answer.stdout).toContain(usage);
        expect(answer.stdout + answer.stderr).not.toMatch(STACK_LINE);
      }
      const unknown = await runBundle(runSh, [...command, '--no-such-flag']);
      expect(unknown.code, unknown.stderr).toBe(2);
      expect(unknown.stderr).toContain("Unknown option '--no-such-flag'");
      expect(unknown.stderr).toContain(usage);
      expect(unknown.stdout + unknown.stderr).not.toMatch(STACK_LINE);
    }
  }, 120_000);
});
