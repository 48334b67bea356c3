// The container's HEALTHCHECK (Dockerfile.gpu): exit 0 when this process's liveness probe answers 200.
// It asks METRICS_PORT when set (every role serves it there, workers included), else the API's PORT.
import { loadConfig } from '../config.js';

/** A probe that does not answer within this counts as failed; Docker's own timeout is longer. */
const PROBE_TIMEOUT_MS = 4000;

const config = loadConfig();
const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.METRICS_PORT ?? config.PORT}/healthz`;
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
