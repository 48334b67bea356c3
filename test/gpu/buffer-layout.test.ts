// Host-side byte layouts against the WGSL structs: the struct definitions are parsed from the .wgsl
// source and their member offsets compared with the contract's word offsets and gpu/'s packing.
// Needs no adapter.
import { describe, expect, it } from 'vitest';
import { roundUpBufferSize } from '../../gpu/buffer-pool.js';
import { contractPrelude } from '../../gpu/contract-constants.js';
import {
  DISPATCH_PARAMS_WORDS,
  DISPATCH_RUN_COUNT,
  DISPATCH_WORKGROUP_COUNT,
  dispatchGrid,
  MATCH_WORKGROUP_SIZE,
  type MatchRun,
  PACKED_RUN_COUNTER_OFFSET,
  PACKED_RUN_EVENT_TABLE_OFFSET,
  PACKED_RUN_FIRST_WORKGROUP,
  PACKED_RUN_FIXTURE_OFFSET,
  PACKED_RUN_WORDS,
  packRuns,
  runsPerDispatch,
} from '../../gpu/match-dispatch.js';
import { readShader } from '../../gpu/shader-source.js';
import { buildEventTables } from '../../src/engine-contract/event-tables.js';
import * as contract from '../../src/engine-contract/layout.js';
import { runKey } from '../../src/engine-contract/rng.js';
import { MAX_DRAWS_PER_JOB } from '../../src/engine-contract/run.js';
import { parseWgslStructs, type WgslStruct } from './wgsl-struct-layout.js';

const structs = parseWgslStructs(readShader('common'));

function memberOffsets(struct: WgslStruct | undefined): Record<string, number> {
  if (!struct) throw new Error('struct missing from shaders/common.wgsl');
  return Object.fromEntries(struct.members.map((member) => [member.name, member.offset]));
}

function tables(seed: number): MatchRun['tables'] {
  const fixture = new Uint32Array(contract.FIXTURE_WORDS).fill(seed);
  const thresholds = new Uint32Array(contract.THRESHOLD_WORDS).fill(seed);
  return { fixture, thresholds };
}

describe('WGSL struct layouts', () => {
  it('RunParams is the contract run block (RUN_* words)', () => {
    const run = structs.get('RunParams');
    expect(memberOffsets(run)).toEqual({
      seed_lo: contract.RUN_SEED_LO * 4,
      seed_hi: contract.RUN_SEED_HI * 4,
      first_draw: contract.RUN_FIRST_DRAW * 4,
      draw_count: contract.RUN_DRAW_COUNT * 4,
    });
    expect(run?.size).toBe(contract.RUN_WORDS * 4);
  });

  it('PackedRun matches the host packing constants', () => {
    const packed = structs.get('PackedRun');
    expect(memberOffsets(packed)).toEqual({
      run: 0,
      first_workgroup: PACKED_RUN_FIRST_WORKGROUP * 4,
      fixture_offset: PACKED_RUN_FIXTURE_OFFSET * 4,
      event_table_offset: PACKED_RUN_EVENT_TABLE_OFFSET * 4,
      counter_offset: PACKED_RUN_COUNTER_OFFSET * 4,
    });
    expect(packed?.size).toBe(PACKED_RUN_WORDS * 4);
  });

  it('DispatchParams matches the host params block and is a legal uniform (16-byte multiple)', () => {
    const params = structs.get('DispatchParams');
    const offsets = memberOffsets(params);
    expect(offsets.run_count).toBe(DISPATCH_RUN_COUNT * 4);
    expect(offsets.workgroup_count).toBe(DISPATCH_WORKGROUP_COUNT * 4);
    expect(params?.size).toBe(DISPATCH_PARAMS_WORDS * 4);
    expect((params?.size ?? 1) % 16).toBe(0);
  });

  it('packRuns writes each field where the WGSL struct reads it', () => {
    const first = tables(1);
    const second = tables(2);
    const runs: MatchRun[] = [
      { tables: first, seed: { lo: 0xdeadbeef, hi: 0x01234567 }, firstDraw: 0, drawCount: 1000 },
      { tables: second, seed: { lo: 5, hi: 6 }, firstDraw: 17, drawCount: 65 },
      { tables: first, seed: { lo: 7, hi: 8 }, firstDraw: 0, drawCount: 1 },
    ];
    const layout = packRuns(runs, 64);
    const packed = memberOffsets(structs.get('PackedRun'));
    const run = memberOffsets(structs.get('RunParams'));
    const params = memberOffsets(structs.get('DispatchParams'));
    const stride = structs.get('PackedRun')!.size / 4;
    const field = (index: number, offset: number) => layout.runs[index * stride + offset / 4];
    expect(layout.params[params.run_count! / 4]).toBe(3);
    expect(layout.params[params.workgroup_count! / 4]).toBe(16 + 2 + 1);
    // The kernel is keyed by runKey(seed), as the CPU loop is.
    const key = runKey({ lo: 0xdeadbeef, hi: 0x01234567 });
    expect(field(0, run.seed_lo!)).toBe(key.lo);
    expect(field(0, run.seed_hi!)).toBe(key.hi);
    expect(field(1, run.first_draw!)).toBe(17);
    expect(field(1, run.draw_count!)).toBe(65);
    expect([0, 1, 2].map((i) => field(i, packed.first_workgroup!))).toEqual([0, 16, 18]);
    // The kernel's own size (256 draws a workgroup): 4 + 1 + 1 workgroups.
    const byDefault = packRuns(runs);
    expect(MATCH_WORKGROUP_SIZE).toBe(256);
    expect(byDefault.params[params.workgroup_count! / 4]).toBe(6);
    expect([0, 1, 2].map((i) => byDefault.runs[i * stride + packed.first_workgroup! / 4])).toEqual([0, 4, 5]);
    // Runs of the same fixture share one upload of its tables.
    expect(layout.tables).toHaveLength(2);
    expect([0, 1, 2].map((i) => field(i, packed.fixture_offset!))).toEqual([0, contract.FIXTURE_WORDS, 0]);
    expect([0, 1, 2].map((i) => field(i, packed.event_table_offset!))).toEqual([
      0,
      contract.EVENT_TABLE_WORDS,
      0,
    ]);
    expect([0, 1, 2].map((i) => field(i, packed.counter_offset!))).toEqual([
      0,
      contract.COUNTER_WORDS,
      2 * contract.COUNTER_WORDS,
    ]);
  });

  it('packs the event tables, given or built from the thresholds, one block per distinct fixture', () => {
    const first = tables(1);
    const given = {
      fixture: new Uint32Array(contract.FIXTURE_WORDS),
      eventTables: buildEventTables(first.thresholds!),
    };
    const runs: MatchRun[] = [
      { tables: first, seed: { lo: 1, hi: 2 }, firstDraw: 0, drawCount: 64 },
      { tables: given, seed: { lo: 3, hi: 4 }, firstDraw: 0, drawCount: 64 },
      { tables: first, seed: { lo: 5, hi: 6 }, firstDraw: 0, drawCount: 64 },
    ];
    const layout = packRuns(runs);
    const packed = memberOffsets(structs.get('PackedRun'));
    const stride = structs.get('PackedRun')!.size / 4;
    const field = (index: number, offset: number) => layout.runs[index * stride + offset / 4];
    expect([0, 1, 2].map((i) => field(i, packed.event_table_offset!))).toEqual([
      0,
      contract.EVENT_TABLE_WORDS,
      0,
    ]);
    expect(layout.eventTableWords).toBe(2 * contract.EVENT_TABLE_WORDS);
    // Built from the thresholds when not given: the same words as the contract's builder.
    expect(layout.tables[0]!.eventTables).toEqual(given.eventTables);
    expect(layout.tables[1]!.eventTables).toBe(given.eventTables);
    expect(() => packRuns([{ ...runs[1]!, tables: { fixture: given.fixture } }])).toThrow(/event tables/);
  });

  it('packs no job the counters could overflow on (the runner admits at most MAX_DRAWS_PER_JOB)', () => {
    expect(MAX_DRAWS_PER_JOB).toBeLessThanOrEqual(contract.MAX_DRAWS_PER_RUN);
    expect(contract.MAX_DRAWS_PER_RUN * contract.MAX_COUNTER_INCREMENT_PER_DRAW).toBeLessThan(2 ** 32);
  });
});

describe('contract prelude of the kernels', () => {
  const prelude = contractPrelude(MATCH_WORKGROUP_SIZE);
  const declared = new Map(
    [...prelude.matchAll(/^const (\w+): u32 = (\d+)u;$/gm)].map((match) => [match[1]!, Number(match[2])]),
  );

  it('declares every numeric constant of src/engine-contract/layout.ts with its value', () => {
    const numeric = Object.entries(contract).filter(([, value]) => typeof value === 'number');
    expect(numeric.length).toBeGreaterThan(50);
    for (const [name, value] of numeric) expect([name, declared.get(name)]).toEqual([name, value]);
  });

  it('declares the per-step tables in order', () => {
    const table = (name: string) => {
      const match = new RegExp(`const ${name} = array<u32, (\\d+)>\\(([^)]*)\\);`).exec(prelude);
      return match ? match[2]!.split(',').map((value) => Number.parseInt(value.trim(), 10)) : [];
    };
    expect(table('STEP_REGULAR_MINUTE')).toEqual(contract.STEP_REGULAR_MINUTE);
    expect(table('STEP_BAND')).toEqual(contract.STEP_BAND);
  });

  it('binds params first, then inputs, then outputs in the match kernel', () => {
    const bindings = [...readShader('match').matchAll(/@binding\((\d+)\) var<([^>]+)> (\w+)/g)].map(
      (match) => [Number(match[1]), match[2], match[3]],
    );
    expect(bindings).toEqual([
      [0, 'uniform', 'params'],
      [1, 'storage, read', 'runs'],
      [2, 'storage, read', 'fixtures'],
      [3, 'storage, read', 'event_tables'],
      [4, 'storage, read_write', 'counters'],
    ]);
  });

  it('keeps the workgroup histogram inside the 16 KiB compatibility limit', () => {
    expect(contract.COUNTER_WORDS * 4).toBeLessThanOrEqual(16 * 1024);
  });
});

describe('dispatch sizing', () => {
  it('uses a 2-D grid past 65,535 workgroups', () => {
    expect(dispatchGrid(1)).toEqual([1, 1]);
    expect(dispatchGrid(65_535)).toEqual([65_535, 1]);
    expect(dispatchGrid(156_250)).toEqual([65_535, 3]);
  });

  it('fits the event tables of every run of a dispatch in one binding and one buffer', () => {
    const binding = 128 * 1024 * 1024;
    const limits = { maxStorageBufferBindingSize: binding, maxBufferSize: 4 * binding };
    const runs = runsPerDispatch(limits);
    expect(runs * contract.EVENT_TABLE_WORDS * 4).toBeLessThanOrEqual(binding);
    expect((runs + 1) * contract.EVENT_TABLE_WORDS * 4).toBeGreaterThan(binding);
    expect(runsPerDispatch({ maxStorageBufferBindingSize: 4 * binding, maxBufferSize: binding })).toBe(runs);
  });

  it('grows pooled buffers by powers of two, but never past the device limit', () => {
    expect(roundUpBufferSize(10, 1 << 30)).toBe(256);
    expect(roundUpBufferSize(300_000, 1 << 30)).toBe(524_288);
    expect(roundUpBufferSize(300_001, 400_000)).toBe(300_004);
  });
});
