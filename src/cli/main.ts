#!/usr/bin/env node
// `matchsim`: the operators' CLI (docs/decisions.md §8). JSON on stdout with --json; human lines otherwise.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SCOPES, type Scope } from '../accounts/keys.js';
import { ORG_STATUSES, type OrgStatus, PLANS, type Plan } from '../accounts/orgs.js';
import { makeLedger } from '../billing/ledger.js';
import { ConfigError, loadConfig } from '../config.js';
import { runMigrations } from '../db/migrations.js';
import { loadDemoData } from '../fixtures/demo-data.js';
import { ingestFeed } from '../fixtures/feed-loader.js';
import { DEMO_SEED } from '../operations/demo.js';
import { makeOperator, type Operator } from '../operations/operator.js';
import { creditsView, keyView, newKeyView, orgView } from '../operations/views.js';
import { openServiceDatabase, type Role, startService } from '../server.js';

const USAGE = `usage: matchsim <command> [options] [--json]
  serve [--role api|worker|all]          run the service (default role: all)
  migrate                                apply database migrations
  org create --name N --plan plus|pro|none [--spend-cap CREDITS]
  org set ORG [--plan P] [--status active|suspended] [--spend-cap CREDITS|default] [--name N]
  key create --org ORG --mode live|test [--scopes a,b] [--expires ISO] [--ip CIDR,...]
  key revoke KEY
  credits topup --org ORG --credits N
  credits show --org ORG
  demo                                   load the demo data set (fictional clubs, fixtures around today)
  ingest FILE                            load a fixture-inputs feed (docs/feed.md)
  model fit [--data DIR]                 fit the model's constants; rewrites
                                         src/engine/contract/model-params.json
  model backtest [--data DIR]            walk-forward backtest; rewrites src/engine/model-accuracy.json`;

class UsageError extends Error {}

function oneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  flag: string,
): T | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}`);
  return value as T;
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`--${flag} is required`);
  return value;
}

function creditsArgument(value: string, flag: string): number {
  const credits = Number(value);
  if (!Number.isFinite(credits) || credits < 0 || Math.round(credits * 1000) !== credits * 1000) {
    throw new UsageError(`--${flag} must be a non-negative number of credits with at most three decimals`);
  }
  return credits;
}

const OPTIONS = {
  json: { type: 'boolean', default: false },
  role: { type: 'string' },
  name: { type: 'string' },
  plan: { type: 'string' },
  status: { type: 'string' },
  'spend-cap': { type: 'string' },
  org: { type: 'string' },
  mode: { type: 'string' },
  scopes: { type: 'string' },
  expires: { type: 'string' },
  ip: { type: 'string' },
  credits: { type: 'string' },
  data: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Flags = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  const [command, sub, arg] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const config = loadConfig();
  const output = (result: unknown) =>
    console.log(values.json ? JSON.stringify(result) : JSON.stringify(result, null, 2));
  if (command === 'serve') return serve(config, values);
  if (command === 'model') return modelCommand(sub, values.data, output);

  const db = await openServiceDatabase(config);
  try {
    const clock = () => new Date();
    const operator = makeOperator({ sql: db.sql, ledger: makeLedger({ sql: db.sql, clock }), clock });
    const line = `${command} ${sub ?? ''}`.trim();
    if (line === 'migrate') output({ applied: await runMigrations(db.sql), database: db.kind });
    else if (line === 'demo') output(await loadDemoData(db.sql, { seed: DEMO_SEED, now: clock() }));
    else if (command === 'ingest') {
      const file = sub ?? required(undefined, 'FILE');
      output(await ingestFeed(db.sql, readFileSync(file, 'utf8'), { clock }));
    } else output(await operatorCommand(operator, line, arg, values, positionals));
    return 0;
  } finally {
    await db.close();
  }
}

/** `serve`: runs until SIGINT or SIGTERM. */
async function serve(config: ReturnType<typeof loadConfig>, values: Flags): Promise<number> {
  const role = oneOf(values.role ?? 'all', ['api', 'worker', 'all'] as Role[], 'role')!;
  const service = await startService(config, role, (line) => console.log(line));
  const shutdown = async (signal: string) => {
    console.log(`${signal}: shutting down`);
    await service.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  return -1; // keep running
}

/** The operator's commands on organisations, keys and credits; what they print. */
async function operatorCommand(
  operator: Operator,
  line: string,
  arg: string | undefined,
  values: Flags,
  positionals: string[],
): Promise<unknown> {
  switch (line) {
    case 'org create':
      return orgView(
        await operator.createOrg({
          name: required(values.name, 'name'),
          plan: oneOf(required(values.plan, 'plan'), PLANS, 'plan') as Plan,
          spendCapCredits: values['spend-cap'] ? creditsArgument(values['spend-cap'], 'spend-cap') : null,
        }),
      );
    case 'org set': {
      const cap = values['spend-cap'];
      return orgView(
        await operator.updateOrg(arg ?? required(undefined, 'ORG'), {
          name: values.name,
          plan: oneOf(values.plan, PLANS, 'plan'),
          status: oneOf(values.status, ORG_STATUSES, 'status') as OrgStatus | undefined,
          spendCapCredits:
            cap === undefined ? undefined : cap === 'default' ? null : creditsArgument(cap, 'spend-cap'),
        }),
      );
    }
    case 'key create':
      return newKeyView(await operator.createKey(newKeyArguments(values)));
    case 'key revoke':
      return keyView(await operator.revokeKey(arg ?? required(undefined, 'KEY')));
    case 'credits topup':
      return creditsView(
        await operator.topUp(
          required(values.org, 'org'),
          creditsArgument(required(values.credits, 'credits'), 'credits'),
        ),
      );
    case 'credits show':
      return creditsView(await operator.showCredits(required(values.org, 'org')));
    default:
      throw new UsageError(`unknown command: ${positionals.join(' ')}`);
  }
}

function newKeyArguments(values: Flags) {
  const scopes = values.scopes?.split(',').map((s) => oneOf(s.trim(), SCOPES, 'scopes') as Scope);
  const expires = values.expires ? new Date(values.expires) : null;
  if (expires && Number.isNaN(expires.getTime()))
    throw new UsageError('--expires must be an ISO 8601 date-time');
  return {
    orgId: required(values.org, 'org'),
    mode: oneOf(required(values.mode, 'mode'), ['live', 'test'] as const, 'mode')!,
    scopes,
    expiresAt: expires,
    ipAllowlist: values.ip?.split(',').map((s) => s.trim()),
  };
}

/** `model fit` and `model backtest`: offline work on ../shared/data (or --data), no database. */
async function modelCommand(
  sub: string | undefined,
  data: string | undefined,
  output: (result: unknown) => void,
) {
  const { resolveDataDir } = await import('../../model/data-dir.js');
  const files = await import('../../model/model-files.js');
  const dataDir = resolveDataDir(data);
  const progress = (message: string) => console.error(message);
  if (sub === 'fit') {
    const { fitModel, writeModelParams } = await import('../../model/fit-model.js');
    const { params, report } = await fitModel({ dataDir, onProgress: progress });
    writeModelParams(files.modelParamsPath(), params);
    output({ written: files.modelParamsPath(), model_version: params.model_version, report });
    return 0;
  }
  if (sub === 'backtest') {
    const { backtestModel } = await import('../../model/backtest.js');
    const result = await backtestModel({ dataDir, onProgress: progress });
    files.writeModelAccuracy(files.modelAccuracyPath(), result);
    output(result);
    return 0;
  }
  throw new UsageError(`unknown command: model ${sub ?? ''}`);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      console.error(`matchsim: ${error.message}`);
      if (error instanceof UsageError) console.error(USAGE);
      process.exit(2);
    }
    const message = (error as { message?: string })?.message ?? String(error);
    console.error(`matchsim: ${message}`);
    process.exit(1);
  },
);
