// The WGSL pcg4d (shaders/common.wgsl) against src/engine-contract/rng.ts, word for word, on edge inputs
// and on the keys the engine uses: (draw, stream, seed low, seed high).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseAdapter } from '../../gpu/adapter.js';
import {
  BufferUsage,
  buildComputePipeline,
  MapMode,
  type OpenedDevice,
  openDevice,
} from '../../gpu/device.js';
import { kernelSource } from '../../gpu/shader-source.js';
import {
  pcg4d,
  STREAM_ASSIST_BASE,
  STREAM_SETUP_ADDED_TIME,
  STREAM_SETUP_LINEUPS,
  scaleToRange,
} from '../../src/engine-contract/rng.js';

const chosen = await chooseAdapter({ mode: 'gpu' });
if (!chosen) console.warn('GPU tests skipped: no WebGPU adapter (not even llvmpipe) on this host');

type Quad = [number, number, number, number];

async function runOnGpu(opened: OpenedDevice, inputs: Quad[]): Promise<{ words: Quad[]; scaled: number[] }> {
  const { device } = opened;
  const pipeline = await buildComputePipeline(opened, {
    label: 'rng known answer',
    code: kernelSource('rng-known-answer', ['common']),
    entryPoint: 'main',
  });
  const count = inputs.length;
  const buffer = (label: string, size: number, usage: number) => device.createBuffer({ label, size, usage });
  const params = buffer('rng params', 16, BufferUsage.UNIFORM | BufferUsage.COPY_DST);
  const input = buffer('rng inputs', count * 16, BufferUsage.STORAGE | BufferUsage.COPY_DST);
  const words = buffer('rng words', count * 16, BufferUsage.STORAGE | BufferUsage.COPY_SRC);
  const scaled = buffer('rng scaled', count * 4, BufferUsage.STORAGE | BufferUsage.COPY_SRC);
  const readback = buffer('rng readback', count * 20, BufferUsage.MAP_READ | BufferUsage.COPY_DST);
  device.queue.writeBuffer(params, 0, new Uint32Array([count, 0, 0, 0]));
  device.queue.writeBuffer(input, 0, new Uint32Array(inputs.flat()));
  const encoder = device.createCommandEncoder({ label: 'rng known answer' });
  const pass = encoder.beginComputePass({ label: 'rng known answer' });
  pass.setPipeline(pipeline);
  pass.setBindGroup(
    0,
    device.createBindGroup({
      label: 'rng known answer',
      layout: pipeline.getBindGroupLayout(0),
      entries: [params, input, words, scaled].map((resource, binding) => ({
        binding,
        resource: { buffer: resource },
      })),
    }),
  );
  pass.dispatchWorkgroups(Math.ceil(count / 64));
  pass.end();
  encoder.copyBufferToBuffer(words, 0, readback, 0, count * 16);
  encoder.copyBufferToBuffer(scaled, 0, readback, count * 16, count * 4);
  device.queue.submit([encoder.finish()]);
  await readback.mapAsync(MapMode.READ);
  const all = Array.from(new Uint32Array(readback.getMappedRange().slice(0)));
  readback.unmap();
  for (const used of [params, input, words, scaled, readback]) used.destroy();
  return {
    words: inputs.map((_, index) => all.slice(index * 4, index * 4 + 4) as Quad),
    scaled: all.slice(count * 4),
  };
}

function onCpu(input: Quad): { words: Quad; scaled: number } {
  const out = new Uint32Array(4);
  pcg4d(input[0], input[1], input[2], input[3], out);
  return { words: Array.from(out) as Quad, scaled: scaleToRange(input[0], input[1] & 0xffff) };
}

function engineKeys(): Quad[] {
  const keys: Quad[] = [
    [0, 0, 0, 0],
    [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
    [1, 2, 3, 4],
    [0x80000000, 0x7fffffff, 0xdeadbeef, 0x00010000],
  ];
  const seeds: [number, number][] = [
    [0, 0],
    [0x12345678, 0x9abcdef0],
    [0xffffffff, 0x7fffffff],
  ];
  for (const [lo, hi] of seeds) {
    for (const draw of [0, 1, 63, 64, 999_999, 1 << 20]) {
      for (const stream of [
        0,
        44,
        109,
        STREAM_ASSIST_BASE + 7,
        STREAM_SETUP_LINEUPS,
        STREAM_SETUP_ADDED_TIME,
      ]) {
        keys.push([draw, stream, lo, hi]);
      }
    }
  }
  const distinct = new Map(keys.map((key) => [key.join(','), key]));
  return [...distinct.values()];
}

describe.skipIf(!chosen)(`WGSL pcg4d on ${chosen?.description ?? 'no adapter'}`, () => {
  let opened: OpenedDevice;
  beforeAll(async () => {
    opened = await openDevice(chosen!, {
      storageBuffersPerStage: 4,
      workgroupStorageBytes: 0,
      invocationsPerWorkgroup: 64,
    });
  });
  afterAll(() => opened?.device.destroy());

  it('gives the words of src/engine-contract/rng.ts for the keys the engine uses', async () => {
    const keys = engineKeys();
    const gpu = await runOnGpu(opened, keys);
    const cpu = keys.map(onCpu);
    expect(gpu.words).toEqual(cpu.map((result) => result.words));
    expect(gpu.scaled).toEqual(cpu.map((result) => result.scaled));
    // Not a vacuous comparison: the generator mixes its inputs.
    expect(new Set(gpu.words.map((words) => words.join(','))).size).toBe(keys.length);
  });
});
