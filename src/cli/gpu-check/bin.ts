// The gpu-check entry point of the GPU bundle (scripts/gpu-bundle-run.sh runs dist/src/cli/gpu-check/bin.js):
// the same flags and exit codes as `matchsim gpu-check`, without the rest of the CLI (database, HTTP server).
import { COMMANDS, commandUsage, parseCommandLine, UsageError } from '../parse.js';
import { gpuCheckCommand } from './command.js';

async function main(argv: string[]): Promise<number> {
  try {
    const parsed = parseCommandLine(['gpu-check', ...argv]);
    if (parsed.kind === 'help') {
      process.stdout.write(`${parsed.text}\n`);
      return 0;
    }
    return await gpuCheckCommand(parsed.flags);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    const usage = error.usage || commandUsage(COMMANDS.find((command) => command.name === 'gpu-check')!);
    process.stderr.write(`gpu-check: ${error.message}\n\n${usage}\n`);
    return 2;
  }
}

// Exit explicitly: abandoned GPU workers (the watchdog's) must not keep a finished check alive.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `gpu-check: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
