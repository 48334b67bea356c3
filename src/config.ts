// The one place that reads process.env. Parsed once at boot; an invalid value stops the service
// with a message naming the variable (docs/decisions.md §10).
import { z } from 'zod';

const booleanString = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const optionalUrl = z.url().optional();

/** A time limit of the HTTP server in whole seconds (docs/decisions.md §10). */
const seconds = (fallback: number) => z.coerce.number().int().min(1).max(3600).default(fallback);

const YEAR_SECONDS = 366 * 86_400;

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  BASE_URL: optionalUrl,
  DOCS_URL: optionalUrl,
  ENGINE: z.enum(['auto', 'gpu', 'cpu']).default('auto'),
  HOLD_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
  TRUST_PROXY: booleanString.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Worker threads of the CPU engine; 0 = one per core. */
  CPU_THREADS: z.coerce.number().int().min(0).max(256).default(0),
  /** Draws a worker holds claimed at most; 0 = what its engine begins in about a second. */
  WORKER_CLAIM_DRAWS: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  /** The request line and headers must arrive within this. */
  HEADERS_TIMEOUT_SECONDS: seconds(10),
  /** The whole request, body included, must arrive within this. */
  REQUEST_TIMEOUT_SECONDS: seconds(60),
  /** A handler must answer within this; above wait_seconds' 25 so a waiting run answers first. */
  HANDLER_TIMEOUT_SECONDS: z.coerce.number().int().min(30).max(3600).default(60),
  /** A connection with no traffic for this long is closed. */
  CONNECTION_TIMEOUT_SECONDS: seconds(120),
  /** `production` turns the demo off (docs/decisions.md §8); any other value is development. */
  NODE_ENV: z.string().optional(),
  /** The first-start demo: `auto` = on unless NODE_ENV is production. */
  MATCHSIM_DEMO: z.enum(['auto', 'on', 'off']).default('auto'),
  /** A separate listener for /metrics, /healthz and /readyz; unset = /metrics on PORT behind ADMIN_TOKEN. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** After SIGTERM: seconds /readyz answers 503 while the listener still accepts (load balancers notice). */
  SHUTDOWN_DELAY_SECONDS: z.coerce.number().min(0).max(300).default(0),
  /** After SIGTERM: seconds in-flight requests and running jobs get to finish; unfinished jobs are queued again. */
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().min(0).max(3600).default(30),
  /** With NODE_ENV=production: let webhook endpoints be http and resolve to private addresses (docs/api.md §6). */
  WEBHOOKS_ALLOW_PRIVATE: booleanString.default(false),
  /** Mean event-loop delay past which requests answer 503 with retry advice; 0 turns the check off. */
  MAX_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /** The service's clock runs this far ahead of the host's (behind when negative): demos and tests of other days. */
  CLOCK_OFFSET_SECONDS: z.coerce.number().int().min(-YEAR_SECONDS).max(YEAR_SECONDS).default(0),
});

/** The relations the time limits must keep; each violation names its variable. */
function timeLimitProblems(env: z.infer<typeof envSchema>): string[] {
  const problems: string[] = [];
  if (env.HEADERS_TIMEOUT_SECONDS > env.REQUEST_TIMEOUT_SECONDS) {
    problems.push('HEADERS_TIMEOUT_SECONDS: must not exceed REQUEST_TIMEOUT_SECONDS');
  }
  const busiest = Math.max(env.REQUEST_TIMEOUT_SECONDS, env.HANDLER_TIMEOUT_SECONDS);
  if (env.CONNECTION_TIMEOUT_SECONDS <= busiest) {
    problems.push(
      'CONNECTION_TIMEOUT_SECONDS: must exceed REQUEST_TIMEOUT_SECONDS and HANDLER_TIMEOUT_SECONDS, or a slow answer loses its connection',
    );
  }
  return problems;
}

export type Config = z.infer<typeof envSchema> & {
  /** Public base address used in result_url values. */
  baseUrl: string;
  /** Address of the docs page; doc_url values are `${docsUrl}#<code>`. */
  docsUrl: string;
  /** NODE_ENV is `production`. */
  production: boolean;
  /** Load the demo data and create the demo organisation on a fresh database (docs/decisions.md §8). */
  demo: boolean;
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parse the environment. Empty strings count as unset so `FOO= npm start` behaves as expected. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') present[key] = value;
  }
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  const base = parsed.data;
  const problems = timeLimitProblems(base);
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  const host = base.HOST === '0.0.0.0' || base.HOST === '::' ? 'localhost' : base.HOST;
  const baseUrl = (base.BASE_URL ?? `http://${host}:${base.PORT}`).replace(/\/$/, '');
  const docsUrl = base.DOCS_URL ?? `${baseUrl}/docs`;
  const production = base.NODE_ENV === 'production';
  // Demo keys are live secrets printed to a terminal: never where NODE_ENV says production.
  if (production && base.MATCHSIM_DEMO === 'on') {
    throw new ConfigError('invalid configuration: MATCHSIM_DEMO: on is refused with NODE_ENV=production');
  }
  // Leases, holds and the ledger's times follow the service's clock: production keeps the host's.
  if (production && base.CLOCK_OFFSET_SECONDS !== 0) {
    throw new ConfigError('invalid configuration: CLOCK_OFFSET_SECONDS: is refused with NODE_ENV=production');
  }
  const demo = base.MATCHSIM_DEMO === 'on' || (base.MATCHSIM_DEMO === 'auto' && !production);
  return { ...base, baseUrl, docsUrl, production, demo };
}

/** The service's clock: the host's, moved by CLOCK_OFFSET_SECONDS. Every process of a service reads this one. */
export function serviceClock(config: Pick<Config, 'CLOCK_OFFSET_SECONDS'>): () => Date {
  const offsetMs = config.CLOCK_OFFSET_SECONDS * 1000;
  return offsetMs === 0 ? () => new Date() : () => new Date(Date.now() + offsetMs);
}
