// A job the GPU engine re-ran on the CPU is never shown as GPU speed: the bench's rows (bench/gpu.ts)
// and gpu-check's engine records (src/cli/gpu-check/engine-steps.ts) name the engine that ran every job,
// mark a set partly re-run on the CPU, and give no GPU time or GPU rate for it (no division by a zero or
// partial GPU share); so do serve-bench's records (bench/serve-load.ts), from the worker's metrics. And the proof that Dawn's timestamp quantization is off. Needs no adapter.
import { describe, expect, it } from 'vitest';
import { kernelRows } from '../../bench/gpu.js';
import { jobsBetween } from '../../bench/serve-load.js';
import { type GpuEngineRun, runsEngine } from '../../gpu/engine.js';
import { summarizeRuns } from '../../src/cli/gpu-check/engine-steps.js';
import { quantizationVerdict } from '../../src/cli/gpu-check/kernel-steps.js';
import { COUNTER_WORDS } from '../../src/engine-contract/layout.js';

function run(engine: 'gpu' | 'cpu', gpuMs: number): GpuEngineRun {
  return {
    counts: new Uint32Array(COUNTER_WORDS),
    engine,
    backend: engine === 'gpu' ? 'nvidia / NVIDIA H100 (vulkan)' : 'cpu',
    runMs: 50,
    gpuMs,
    timing: engine === 'gpu' ? 'timestamp' : 'cpu',
  };
}

const cpu = { rate: 1_000_000, draws: 2_000_000, cores: 16 };

describe('honest GPU figures', () => {
  it('all jobs on the GPU: a wall row and a GPU-time row, both saying the GPU ran every job', () => {
    const ran = runsEngine([run('gpu', 10), run('gpu', 30)]);
    expect(ran).toEqual({ label: 'gpu', jobs: 2, jobsOnCpu: 0, gpuMs: 40, timing: 'timestamp' });
    const rows = kernelRows('g', 'batch', { wallMs: 100, draws: 200_000, ran }, cpu, '');
    expect(rows.map((row) => row.name)).toEqual(['batch, wall', 'batch, GPU time (timestamp)']);
    expect(rows[1]!.value).toBe(5_000_000);
    expect(rows.every((row) => row.note?.includes('engine gpu (every job)'))).toBe(true);
  });

  it('jobs partly re-run on the CPU: one row marked as such, no GPU time, no GPU rate', () => {
    const ran = runsEngine([run('gpu', 10), run('cpu', 0), run('cpu', 0)]);
    expect(ran).toMatchObject({ label: 'gpu, partly re-run on the CPU', jobsOnCpu: 2, gpuMs: null });
    const rows = kernelRows('g', 'batch', { wallMs: 100, draws: 300_000, ran }, cpu, '');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.name).toBe('batch, wall, NOT GPU speed: 2 of 3 jobs re-run on the CPU');
    expect(rows[0]!.note).toContain('engine gpu, partly re-run on the CPU');
    expect(rows.some((row) => row.name.includes('GPU time'))).toBe(false);
  });

  it('every job on the CPU (the GPU share is zero): labelled cpu, never divided by the zero GPU time', () => {
    const ran = runsEngine([run('cpu', 0)]);
    expect(ran.label).toBe('cpu');
    const rows = kernelRows('g', 'one job', { wallMs: 100, draws: 100_000, ran }, cpu, '');
    expect(rows.map((row) => row.value).every(Number.isFinite)).toBe(true);
    expect(rows[0]!.name).toContain('NOT GPU speed: 1 of 1 jobs re-run on the CPU');
  });

  it("gpu-check's engine record: the engine, the jobs on the CPU, and no GPU time for a mixed set", () => {
    expect(summarizeRuns([run('gpu', 10), run('cpu', 0)], 200)).toEqual({
      engine: 'gpu, partly re-run on the CPU',
      jobs: 2,
      jobs_on_cpu: 1,
      wall_ms: 200,
      wall_ms_per_job: 100,
      gpu_ms: null,
      timing: null,
    });
    expect(summarizeRuns([run('gpu', 10)], 20)).toMatchObject({ engine: 'gpu', jobs_on_cpu: 0, gpu_ms: 10 });
  });

  it("serve-bench's records: GPU time between two metric readings only when the GPU ran every job", () => {
    const before = { gpuJobs: 10, cpuJobs: 2, gpuSeconds: 0.5 };
    expect(jobsBetween(before, { gpuJobs: 13, cpuJobs: 2, gpuSeconds: 0.53 })).toEqual({
      jobs_gpu: 3,
      jobs_cpu: 0,
      engine: 'gpu',
      gpuSeconds: expect.closeTo(0.03, 9),
    });
    expect(jobsBetween(before, { gpuJobs: 13, cpuJobs: 3, gpuSeconds: 0.53 })).toEqual({
      jobs_gpu: 3,
      jobs_cpu: 1,
      engine: 'gpu, partly on the CPU',
      gpuSeconds: null,
    });
    expect(jobsBetween(before, { gpuJobs: 10, cpuJobs: 5, gpuSeconds: 0.5 })).toMatchObject({
      engine: 'cpu',
      gpuSeconds: null,
    });
    // No job at all is no GPU figure either (nothing ran: a busy fraction of 0 would be a measurement).
    expect(jobsBetween(before, before)).toMatchObject({ engine: 'none', jobs_gpu: 0, gpuSeconds: null });
  });

  it('timestamp quantization: off only when some raw timestamp is not a multiple of 65,536 ns', () => {
    // Quantized: Dawn masked the low 16 bits of every timestamp.
    expect(quantizationVerdict([65_536n * 1_000n, 65_536n * 1_003n])).toMatch(/^on:/);
    expect(quantizationVerdict([65_536n * 1_000n, 65_536_000n + 1_234n])).toMatch(/^off:/);
    // No timestamps (OpenGL ES, llvmpipe) or only zeros (a driver that reports none): not known.
    expect(quantizationVerdict([])).toMatch(/^unknown:/);
    expect(quantizationVerdict([0n, 0n])).toMatch(/^unknown:/);
  });
});
