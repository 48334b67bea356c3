// The curl tour (docs/api.md §4.11, /docs) runs as written: its commands, taken from the one list the page
// renders (src/http/views/curl-tour.ts), run in order in one bash with `set -euo pipefail` against the
// demo service a fresh `npm start` gives, with the demo's live key. Any command that fails fails the test.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlTour } from '../../src/http/views/curl-tour.js';
import { type DemoService, startDemoService } from '../helpers/demo-service.js';

const run = promisify(execFile);
let demo: DemoService;
const workDir = mkdtempSync(path.join(tmpdir(), 'matchsim-tour-'));

beforeAll(async () => {
  demo = await startDemoService();
});
afterAll(async () => {
  await demo.close();
  rmSync(workDir, { recursive: true, force: true });
});

/** One bash script: each step's marker, then its command as the page shows it. */
function tourScript(baseUrl: string): string {
  const steps = curlTour(baseUrl).map((step, index) => `echo "@@step ${index + 1}"\n${step.command}\necho`);
  return ['set -euo pipefail', ...steps, 'echo "@@done"'].join('\n');
}

/** The output of each step, by its number. */
function stepOutputs(stdout: string): Map<number, string> {
  const outputs = new Map<number, string>();
  for (const part of stdout.split('@@step ').slice(1)) {
    const newline = part.indexOf('\n');
    outputs.set(
      Number(part.slice(0, newline)),
      part
        .slice(newline + 1)
        .replace(/@@done\s*$/, '')
        .trim(),
    );
  }
  return outputs;
}

describe('the curl tour', () => {
  it('runs every step as written against the demo service', async () => {
    const script = tourScript(demo.baseUrl);
    const result = await run('bash', ['-c', script], {
      cwd: workDir,
      env: { PATH: process.env.PATH, MATCHSIM_KEY: demo.liveKey },
    }).catch((error: { stdout: string; stderr: string; code: number }) => {
      const steps = stepOutputs(error.stdout);
      throw new Error(
        `the tour failed at step ${Math.max(...steps.keys())} (exit ${error.code}):\n${error.stdout}\n${error.stderr}`,
      );
    });
    expect(result.stdout).toContain('@@done');
    const out = stepOutputs(result.stdout);
    const [fixtureId, otherId] = out.get(1)!.split(/\s+/).map(Number);
    expect(fixtureId).toBeGreaterThan(0);
    expect(otherId).toBeGreaterThan(0);
    expect(otherId).not.toBe(fixtureId);
    expect(JSON.parse(out.get(2)!)).toMatchObject({ object: 'simulation_quote', fixture_id: fixtureId });
    const job = JSON.parse(out.get(3)!);
    expect(job.object).toBe('simulation_job');
    const [resultPath, followed] = out.get(4)!.split('\n');
    expect(resultPath).toBe(job.result_url);
    expect(['simulation_job', 'simulation']).toContain(JSON.parse(followed!).object);
    const batchLines = out.get(5)!.split('\n');
    const batch = JSON.parse(batchLines[0]!);
    expect(batch).toMatchObject({ object: 'simulation_batch', counts: { total: 2 } });
    expect(batchLines[1]).toBe(`/v1/simulations/batch/${batch.batch_id}`);
    const results = out
      .get(6)!
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(results.map((line) => [line.object, line.fixture])).toEqual([
      ['simulation_batch_result', fixtureId],
      ['simulation_batch_result', otherId],
    ]);
    expect(JSON.parse(out.get(7)!)).toMatchObject({ object: 'simulation_batch', batch_id: batch.batch_id });
  });
});
