// The operators' CLI beside a running service on the embedded default (docs/decisions.md §8): PGlite
// belongs to the service, so each command goes through its admin API at the address it recorded in
// DATA_DIR/service.json, with the admin token it generated, and prints what it prints on the database
// itself (`simulate` too, fitted or in play: POST /admin/v1/simulations); `demo` names what to do instead. Once the service stops, the same commands open the database.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { type ServiceProcess, startServiceProcess } from '../helpers/service-process.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-cli-beside-'));
let service: ServiceProcess;

/** The CLI on the service's DATA_DIR, on the embedded default whatever the test run's DATABASE_URL. */
async function matchsim(args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  delete env.ADMIN_TOKEN;
  return runCli(args, env);
}

async function json(args: string[]) {
  const answer = await matchsim([...args, '--json']);
  expect(answer.code, `${args.join(' ')}: ${answer.stderr}`).toBe(0);
  return JSON.parse(answer.stdout);
}

beforeAll(async () => {
  // The demo's first start (migrations, demo data) on a loaded 2-core machine can take over a minute.
  service = await startServiceProcess(
    { DATA_DIR: dataDir, MATCHSIM_DEMO: 'on', LOG_LEVEL: 'info' },
    [],
    'matchsim listening',
    170_000,
  );
}, 180_000);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('the CLI while a service holds the embedded database', () => {
  it('creates, lists and changes organisations, keys and credits through the admin API', async () => {
    expect(existsSync(path.join(dataDir, 'service.json'))).toBe(true);
    const org = await json(['org', 'create', '--name', 'Beside', '--plan', 'pro']);
    expect(org).toMatchObject({ object: 'org', name: 'Beside', plan: 'pro' });
    const listed = await json(['org', 'list']);
    expect(listed.data.map((entry: { org_id: string }) => entry.org_id)).toContain(org.org_id);
    const key = await json(['key', 'create', '--org', org.org_id, '--mode', 'live']);
    expect(key.secret).toMatch(/^ms_live_/);
    expect(await json(['credits', 'topup', '--org', org.org_id, '--credits', '5'])).toMatchObject({
      object: 'org_credits',
    });
    const credits = await json(['credits', 'show', '--org', org.org_id]);
    expect(credits.topup_remaining).toBe(5);
    expect((await json(['key', 'list', '--org', org.org_id])).data).toHaveLength(1);
    expect(await json(['org', 'set', org.org_id, '--status', 'suspended'])).toMatchObject({
      status: 'suspended',
    });
    expect(await json(['key', 'revoke', key.key_id])).toMatchObject({ key_id: key.key_id });
    // The key is refused by the service at once: the revoke went through it.
    const refused = await fetch(`${service.baseUrl}/v1/credits`, {
      headers: { authorization: `Bearer ${key.secret}` },
    });
    expect(refused.status).toBe(401);
    const human = await matchsim(['org', 'list']);
    expect(human.stdout).toContain('(through the service running at http://127.0.0.1:');
  }, 120_000); // a dozen CLI processes, each a Node start with tsx, on a loaded 2-core machine

  it('loads a feed, projects a competition and says the migrations are the service’s', async () => {
    const feed = path.join(dataDir, 'feed.json');
    writeFileSync(
      feed,
      JSON.stringify({ format: 'matchsim.feed.v1', competitions: [], teams: [], fixtures: [] }),
    );
    const loaded = await matchsim(['ingest', feed, '--json']);
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(JSON.parse(loaded.stdout)).toMatchObject({ object: 'feed_load' });
    const table = await json(['projection', '--competition', '1', '--seasons', '1000']);
    expect(table).toMatchObject({
      object: 'projection_table',
      seasons: 1000,
      competition: { competition_id: 1 },
    });
    expect(table.teams).toHaveLength(20);
    const again = await json(['projection', '--competition', '1', '--seasons', '1000']);
    expect(again.teams).toEqual(table.teams); // the API's seed: the same inputs, the same table
    const migrate = await matchsim(['migrate']);
    expect(migrate.stdout).toContain('migrated by the running service at its start');
    const demo = await matchsim(['demo']);
    expect(demo.code).toBe(1);
    expect(demo.stderr).toContain('stop the service and run matchsim demo');
  }, 120_000);

  it('simulates a fixture, fitted to odds and from an in-play state, through the admin API', async () => {
    // A fixture of the demo on sale (not kicked off), whatever the day: fixture discovery is free and
    // answers a live key, the demo's, printed on the terminal.
    const liveKey = /live key: (ms_live_\w+)/.exec(service.stderr.join('\n'))?.[1];
    const fixtures = await fetch(`${service.baseUrl}/v1/fixtures?status=fresh&limit=1`, {
      headers: { authorization: `Bearer ${liveKey}` },
    });
    const fixtureId = String((await fixtures.json()).data[0].fixture_id);
    const base = ['simulate', '--fixture', fixtureId, '--draws', '1000'];
    const fitted = await json([...base, '--odds', '2.10,3.40,3.60', '--total', '1.90,1.95']);
    expect(fitted.calibration.fitted_to).toEqual(['home_win_minus_away_win', 'over_2_5']);
    const inPlay = await json([...base, '--from-minute', '67', '--score', '0-1', '--red-cards', '0-1']);
    expect(inPlay.state).toMatchObject({ minute: '67', score: { home: 0, away: 1 } });
    const table = await matchsim([...base, '--from-minute', '67', '--score', '0-2']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toContain("from 67' at 0-2");
    expect(table.stdout).toContain('(through the service running at http://127.0.0.1:');
    const refused = await matchsim([...base, '--odds', '1.98,40,1.98']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('cannot reproduce these prices');
  }, 120_000);

  it('opens the database itself once the service has stopped', async () => {
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(existsSync(path.join(dataDir, 'service.json'))).toBe(false);
    const listed = await matchsim(['org', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('Beside');
    expect(listed.stdout).not.toContain('through the service');
  }, 60_000);
});
