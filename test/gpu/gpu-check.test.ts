// `matchsim gpu-check` on whatever adapter this host has (llvmpipe in CI), at a tiny scale: a software
// adapter is refused without --allow-software (exit 4, naming it); with a watchdog deadline no dispatch
// can meet, the engine's jobs fall back to the CPU and the records and exit code say so (6: the watchdog,
// more severe than 7: jobs on the CPU), with no GPU time or GPU rate shown for them, while the kernel's
// parity cases still pass. --tune compares workgroup sizes, times the kernel with each stage left out,
// and tells a compared kernel that counts differently from this one without failing the check.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseAdapter } from '../../gpu/adapter.js';
import { readShader } from '../../gpu/shader-source.js';
import { gpuCheckOptions } from '../../src/cli/gpu-check/command.js';
import { STAGE_VARIANTS } from '../../src/cli/gpu-check/kernel-variants.js';
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

describe('gpu-check --compare-kernel (no adapter needed)', () => {
  it('needs --tune and files it can read, and takes several separated by commas', () => {
    const own = fileURLToPath(new URL('../../shaders/match.wgsl', import.meta.url));
    expect(() => gpuCheckOptions({ 'compare-kernel': own })).toThrow(/needs --tune/);
    expect(() => gpuCheckOptions({ tune: true, 'compare-kernel': `${own},/nonexistent.wgsl` })).toThrow(
      /cannot read \/nonexistent\.wgsl/,
    );
    expect(gpuCheckOptions({ tune: true, 'compare-kernel': `${own},${own}` }).compareKernels).toEqual([
      own,
      own,
    ]);
  });
});

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

  it('--tune: workgroup sizes, stage costs, a compared kernel that counts otherwise, one that does not build', async () => {
    const out = join(folder, 'tune.jsonl');
    // A kernel that counts every goal as a yellow card: its parity cases must differ.
    const otherKernel = join(folder, 'other-match.wgsl');
    const source = readShader('match');
    expect(source).toContain('    count(team + TEAM_GOALS);\n');
    writeFileSync(
      otherKernel,
      source.replace('    count(team + TEAM_GOALS);\n', '    count(team + TEAM_YELLOWS);\n'),
    );
    // A kernel whose pipeline cannot be built (more workgroup memory than any adapter offers, say).
    const brokenKernel = join(folder, 'broken-match.wgsl');
    writeFileSync(brokenKernel, `${source}\nfn not_wgsl( {\n`);
    const code = await runGpuCheck(
      {
        out,
        deadlineSeconds: 300,
        scale: 10_000,
        allowSoftware: true,
        batchFixtures: 20,
        tune: true,
        tuneSizes: [64, 256],
        compareKernels: [otherKernel, brokenKernel],
      },
      quiet,
    );
    const lines = records(out);
    const sizes = lines.filter((record) => record.record === 'tune' && !record.skipped);
    expect(sizes.map((record) => record.workgroup_size)).toEqual([64, 256]);
    for (const record of sizes) expect(record).toMatchObject({ parity_identical: true });
    expect(lines.find((record) => record.record === 'tune-summary')).toMatchObject({
      batch_counters_identical_across_sizes: true,
    });
    const stages = lines.filter((record) => record.record === 'stage-cost');
    expect(stages.map((record) => record.stage)).toEqual(STAGE_VARIANTS.map((variant) => variant.stage));
    for (const record of stages) expect(record.without_stage_gpu_ms).toBeGreaterThan(0);
    const compared = lines.filter(
      (record) => record.record === 'kernel-compare' && record.file === otherKernel,
    );
    expect(compared.length).toBeGreaterThan(0);
    for (const record of compared) {
      expect(record).toMatchObject({
        parity_identical: false,
        batch_counters_identical_to_this_kernel: false,
      });
    }
    // The kernel that does not build is reported at each size, and the steps after it still run.
    const broken = lines.filter(
      (record) => record.record === 'kernel-compare' && record.file === brokenKernel,
    );
    expect(broken.map((record) => record.workgroup_size)).toEqual([64, 256]);
    for (const record of broken) expect(record.error).toMatch(/match kernel/);
    expect(lines.find((record) => record.record === 'robustness-off')).toBeDefined();
    // A compared kernel's differences are its own, not this build's: the check passes.
    expect(code).toBe(GPU_CHECK_EXIT.ok);
    // The check's own deadline (300 s) bounds it: on llvmpipe its kernel variants took 62 s of a loaded
    // 2-core CI run, past the suite's 60 s default.
  }, 330_000);
});
