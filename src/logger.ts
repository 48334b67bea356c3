// The service's one log stream: JSON lines (pino) on stdout, one object per line, for the HTTP API, the
// workers and the boot and shutdown steps alike. Nothing else is written to stdout by `serve`; the demo's
// secrets go to the terminal only (src/server.ts), never through this logger.
//
// Whatever stdout's reader does, the process must be able to exit (docs/decisions.md §10):
// pino flushes its stdout buffer synchronously at exit (sonic-boom's flushSync), which in sonic-boom 4
// retried every write error, EPIPE included, forever, sleeping with Atomics.wait so that no timer or
// signal handler could run. package.json's `overrides` takes sonic-boom 5, which gives up on errors
// other than EAGAIN/EBUSY; a write to a reader that is gone is dropped here; and armExitDeadline kills
// the process from a thread of its own should a flush still block (a full pipe nobody reads).
import { Worker } from 'node:worker_threads';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.js';

export type { Logger };

// Belt and braces: no code logs these, but a secret that reached a log line by mistake is censored.
const REDACTED_PATHS = [
  'secret',
  'token',
  'authorization',
  '*.secret',
  '*.token',
  '*.authorization',
  'req.headers.authorization',
];

export function makeLogger(
  config: Pick<Config, 'LOG_LEVEL'>,
  bindings: Record<string, unknown> = {},
  destination?: DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    level: config.LOG_LEVEL,
    base: { service: 'matchsim', pid: process.pid, ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return pino(options, destination ?? standardOutput());
}

/** stdout as pino builds it by default, except that a flush to a reader that is gone ends quietly. */
function standardOutput(): DestinationStream {
  const stream = pino.destination({ dest: process.stdout.fd || 1, sync: false });
  const flushSync = stream.flushSync.bind(stream);
  stream.flushSync = () => {
    try {
      flushSync();
    } catch (error) {
      // Nobody reads the log any more: what is left cannot be delivered, and exit must not wait for it.
      if ((error as NodeJS.ErrnoException).code !== 'EPIPE') throw error;
    }
  };
  return stream;
}

// Runs in a worker thread: its timer fires even while the main thread is blocked in a synchronous flush.
const EXIT_DEADLINE_SOURCE = `
const { workerData } = require('node:worker_threads');
setTimeout(() => process.kill(workerData.pid, 'SIGKILL'), workerData.ms);
`;

/**
 * The last resort of a shutdown: after `ms` the process is killed (SIGKILL) from a worker thread, which
 * nothing on the main thread can block. The thread is unreferenced, so a process that exits in time is
 * not held by it.
 */
export function armExitDeadline(ms: number): void {
  const worker = new Worker(EXIT_DEADLINE_SOURCE, { eval: true, workerData: { pid: process.pid, ms } });
  worker.unref();
}
