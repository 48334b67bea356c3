// `matchsim gpu-check` on whatever adapter this host has (llvmpipe in CI), at a tiny scale: a software
// adapter is refused without --allow-software (exit 4, naming it); with a watchdog deadline no dispatch
// can meet, the engine's jobs fall back to the CPU and the records and exit code say so (6: the watchdog,
// more severe than 7: jobs on the CPU), with no GPU time or GPU rate shown for them, while the kernel's
// parity cases still pass.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseAdapter } from '../../gpu/adapter.js';
import { GPU_CHECK_EXIT, runGpuCheck } from '../../src/cli/gpu-check/run.js';

const chosen = await chooseAdapter({ mode: 'gpu' });
if (!chosen) console.warn('gpu-check test skipped: no WebGPU adapter (not even llvmpipe) on this host');

const folder = mkdtempSync(join(tmpdir(), 'gpu-check-'));
const quiet = () => true;

function records(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe.skipIf(!chosen)(`gpu-check on ${chosen?.description ?? 'no adapter'}`, () => {
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it.skipIf(!chosen?.software)('refuses a software adapter without --allow-software, naming it', async () => {
    const out = join(folder, 'refused.jsonl');
    const code = await runGpuCheck({ out, deadlineSeconds: 60, scale: 10_000, allowSoftware: false }, quiet);
    expect(code).toBe(GPU_CHECK_EXIT.softwareAdapter);
    const problem = records(out).find((record) => record.record === 'problem');
    expect(problem?.problem).toBe('softwareAdapter');
    expect(String(problem?.message)).toContain(chosen!.description);
  });

  it('reports engine jobs re-run on the CPU as such, never as GPU speed', async () => {
    const out = join(folder, 'fallback.jsonl');
    const code = await runGpuCheck(
      {
        out,
        deadlineSeconds: 300,
        scale: 10_000,
        allowSoftware: true,
        watchdog: { floorMs: 1, multiple: 0 },
        batchFixtures: 20,
      },
      quiet,
    );
    const lines = records(out);
    expect(lines.find((record) => record.record === 'parity-summary')).toMatchObject({ identical: true });
    const engine = lines.filter((record) => record.record === 'engine');
    expect(engine).toHaveLength(2);
    for (const record of engine) {
      expect(record.engine).toMatch(/cpu/);
      expect(record.jobs_on_cpu).toBeGreaterThan(0);
      expect(record.gpu_ms).toBeNull();
      expect(record.draws_per_s_gpu_time).toBeNull();
      expect(record.draws_per_s_wall).toBeNull();
      expect(record.identical_to_cpu).toBe(true);
    }
    const problems = new Set(lines.filter((r) => r.record === 'problem').map((r) => r.problem));
    expect(problems).toEqual(new Set(['watchdog', 'ranOnCpu']));
    expect(code).toBe(GPU_CHECK_EXIT.watchdog);
    expect(lines.at(-1)).toMatchObject({ record: 'summary', exit_code: GPU_CHECK_EXIT.watchdog });
  });
});
