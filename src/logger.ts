// The service's one log stream: JSON lines (pino) on stdout, one object per line, for the HTTP API, the
// workers and the boot and shutdown steps alike. Nothing else is written to stdout by `serve`; the demo's
// secrets go to the terminal only (src/server.ts), never through this logger.
//
// Whatever stdout's reader does, the process must be able to exit (docs/decisions.md §10):
// pino flushes its stdout buffer synchronously at exit (sonic-boom's flushSync), which in sonic-boom 4
// retried every write error, EPIPE included, forever, sleeping with Atomics.wait so that no timer or
// signal handler could run. package.json's `overrides` takes sonic-boom 5, which gives up on errors
// other than EAGAIN/EBUSY; a write to a reader that is gone is dropped here, and one to a reader that has
// stopped reading (the pipe full) is given EXIT_FLUSH_MS at exit, then dropped (issue 51); and
// armExitDeadline kills the process from a thread of its own should anything still block the exit.
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

/**
 * How long the flush at exit may wait for a reader that has stopped reading (the pipe full, EAGAIN):
 * what is still unwritten then is dropped, so that the exit takes at most this long whatever the reader
 * does (issue 51). A reader that reads gets everything long before.
 */
export const EXIT_FLUSH_MS = 1000;
/** Log bytes kept while stdout's reader is not reading; lines beyond it are dropped, never waited for. */
export const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;

/**
 * stdout as pino builds it by default (written asynchronously, flushed synchronously at exit), except
 * that the flush at exit never waits: for a reader that is gone (EPIPE) not at all, for one that has
 * stopped reading (EAGAIN: stdout is a non-blocking pipe) at most EXIT_FLUSH_MS. While running, a full
 * pipe is retried on a timer, never on the main thread, and at most LOG_BUFFER_MAX_BYTES wait for it.
 */
function standardOutput(): DestinationStream {
  let flushDeadline: number | null = null;
  const stream = pino.destination({
    dest: process.stdout.fd || 1,
    sync: false,
    maxLength: LOG_BUFFER_MAX_BYTES,
    // Asked by sonic-boom before each retry of a full pipe: always outside the flush at exit (a timer
    // retries), within the flush only until its deadline (there it sleeps on the main thread).
    retryEAGAIN: () => flushDeadline === null || Date.now() < flushDeadline,
  });
  const flushSync = stream.flushSync.bind(stream);
  stream.flushSync = () => {
    flushDeadline = Date.now() + EXIT_FLUSH_MS;
    try {
      flushSync();
    } catch (error) {
      // Nobody reads the log any more, or not in time: what is left is dropped, and exit does not wait.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EPIPE' && code !== 'EAGAIN' && code !== 'EBUSY') throw error;
    } finally {
      flushDeadline = null;
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
