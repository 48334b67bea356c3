// The service's one log stream: JSON lines (pino) on stdout, one object per line, for the HTTP API, the
// workers and the boot and shutdown steps alike. Nothing else is written to stdout by `serve`; the demo's
// secrets go to the terminal only (src/server.ts), never through this logger.
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
  return destination ? pino(options, destination) : pino(options);
}
