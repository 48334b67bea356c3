// One dispatch of the match kernel: many runs packed into shared buffers, one submit, one readback.
// Runs in the GPU worker thread (gpu/gpu-worker.ts), never on the HTTP thread.
import { eventTablesOf } from '../src/engine-contract/event-tables.js';
import {
  COUNTER_WORDS,
  type EngineSeed,
  EVENT_TABLE_WORDS,
  FIXTURE_WORDS,
  RUN_DRAW_COUNT,
  RUN_FIRST_DRAW,
  RUN_SEED_HI,
  RUN_SEED_LO,
  RUN_WORDS,
} from '../src/engine-contract/layout.js';
import { runKey } from '../src/engine-contract/rng.js';
import { type BufferPool, createBufferPool } from './buffer-pool.js';
import { contractPrelude } from './contract-constants.js';
import { BufferUsage, buildComputePipeline, MapMode, type OpenedDevice } from './device.js';
import { kernelSource } from './shader-source.js';

/**
 * Draws per workgroup: WebGPU's default limit of invocations per workgroup (every core device offers it).
 * On an H200 a million draws took 17.1 ms at 64, 14.0 at 128, 12.8 at 256 and 13.0 at 512 (docs/gpu.md
 * "Tuning on the H200"); likely because a workgroup's histogram is zeroed and flushed once for more
 * draws, and more draws are resident per multiprocessor.
 */
export const MATCH_WORKGROUP_SIZE = 256;
/** Workgroups per grid dimension (WebGPU's guaranteed maxComputeWorkgroupsPerDimension). */
const MAX_WORKGROUPS_PER_DIMENSION = 65_535;

// Host-side layouts of the kernel's structs (shaders/common.wgsl), in 32-bit words; the buffer-layout
// test compares them with the WGSL source. PackedRun starts with the contract's RUN_* words.
export const PACKED_RUN_FIRST_WORKGROUP = RUN_WORDS;
export const PACKED_RUN_FIXTURE_OFFSET = RUN_WORDS + 1;
export const PACKED_RUN_EVENT_TABLE_OFFSET = RUN_WORDS + 2;
export const PACKED_RUN_COUNTER_OFFSET = RUN_WORDS + 3;
export const PACKED_RUN_WORDS = RUN_WORDS + 4;
export const DISPATCH_RUN_COUNT = 0;
export const DISPATCH_WORKGROUP_COUNT = 1;
export const DISPATCH_PARAMS_WORDS = 4;

/**
 * The part of a compiled fixture the kernel reads: the fixture table and the event tables
 * (src/engine-contract/event-tables.ts), built from the thresholds (once per array) when not given.
 */
export interface FixtureTables {
  fixture: Uint32Array;
  thresholds?: Uint32Array;
  eventTables?: Uint32Array;
}

/** The run's block of binding 3. */
export function kernelEventTables(tables: FixtureTables): Uint32Array {
  if (tables.eventTables) return tables.eventTables;
  if (tables.thresholds) return eventTablesOf(tables.thresholds);
  throw new RangeError('a run needs its event tables');
}

/** Draws [firstDraw, firstDraw + drawCount) of one fixture; drawCount at most MAX_DRAWS_PER_RUN. */
export interface MatchRun {
  tables: FixtureTables;
  seed: EngineSeed;
  firstDraw: number;
  drawCount: number;
}

export interface DispatchResult {
  /** Raw counters per run (COUNTER_WORDS each, score states still difference-encoded). */
  counters: Uint32Array[];
  /** GPU time of the whole dispatch in milliseconds. */
  gpuMs: number;
  /** `timestamp`: measured by timestamp queries around the pass; `wall`: submit to readback. */
  timing: 'timestamp' | 'wall';
  /** The pass's raw begin and end timestamps in nanoseconds, when the device has timestamp queries. */
  timestamps: [bigint, bigint] | null;
}

export interface PackedLayout {
  params: Uint32Array<ArrayBuffer>;
  runs: Uint32Array<ArrayBuffer>;
  /**
   * Distinct tables in upload order, with their word offsets; `eventTables` is the run's block of binding
   * 3, at `eventTableOffset`.
   */
  tables: {
    fixture: Uint32Array;
    eventTables: Uint32Array;
    fixtureOffset: number;
    eventTableOffset: number;
  }[];
  fixtureWords: number;
  eventTableWords: number;
  workgroupCount: number;
}

/** How many runs one dispatch can hold: the event tables of all of them must fit one buffer and binding. */
export function runsPerDispatch(
  limits: Pick<GPUSupportedLimits, 'maxStorageBufferBindingSize' | 'maxBufferSize'>,
): number {
  const bytes = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  return Math.max(1, Math.floor(bytes / (EVENT_TABLE_WORDS * 4)));
}

/** The 2-D grid for `workgroupCount` workgroups: x up to 65,535, as many rows as needed. */
export function dispatchGrid(workgroupCount: number, width = MAX_WORKGROUPS_PER_DIMENSION): [number, number] {
  const x = Math.min(workgroupCount, width);
  return [Math.max(1, x), Math.max(1, Math.ceil(workgroupCount / x))];
}

/**
 * Lays runs out in the shared buffers; runs of the same tables (same arrays) share one upload. Each run
 * owns whole workgroups of `workgroupSize` draws (the kernel's WORKGROUP_SIZE).
 */
export function packRuns(
  runs: readonly MatchRun[],
  workgroupSize: number = MATCH_WORKGROUP_SIZE,
): PackedLayout {
  if (runs.length === 0) throw new RangeError('a dispatch needs at least one run');
  const packedRuns = new Uint32Array(runs.length * PACKED_RUN_WORDS);
  const offsets = new Map<FixtureTables['fixture'], { fixtureOffset: number; eventTableOffset: number }>();
  const tables: PackedLayout['tables'] = [];
  let workgroupCount = 0;
  runs.forEach((run, index) => {
    let placed = offsets.get(run.tables.fixture);
    if (!placed) {
      const eventTables = kernelEventTables(run.tables);
      if (run.tables.fixture.length !== FIXTURE_WORDS || eventTables.length !== EVENT_TABLE_WORDS) {
        throw new RangeError('compiled tables do not have the contract sizes');
      }
      placed = {
        fixtureOffset: tables.length * FIXTURE_WORDS,
        eventTableOffset: tables.length * EVENT_TABLE_WORDS,
      };
      offsets.set(run.tables.fixture, placed);
      tables.push({ fixture: run.tables.fixture, eventTables, ...placed });
    }
    const at = index * PACKED_RUN_WORDS;
    // The kernel receives the generator's key words, runKey(seed), as the contract says.
    const key = runKey(run.seed);
    packedRuns[at + RUN_SEED_LO] = key.lo;
    packedRuns[at + RUN_SEED_HI] = key.hi;
    packedRuns[at + RUN_FIRST_DRAW] = run.firstDraw;
    packedRuns[at + RUN_DRAW_COUNT] = run.drawCount;
    packedRuns[at + PACKED_RUN_FIRST_WORKGROUP] = workgroupCount;
    packedRuns[at + PACKED_RUN_FIXTURE_OFFSET] = placed.fixtureOffset;
    packedRuns[at + PACKED_RUN_EVENT_TABLE_OFFSET] = placed.eventTableOffset;
    packedRuns[at + PACKED_RUN_COUNTER_OFFSET] = index * COUNTER_WORDS;
    workgroupCount += Math.ceil(run.drawCount / workgroupSize);
  });
  const params = new Uint32Array(DISPATCH_PARAMS_WORDS);
  params[DISPATCH_RUN_COUNT] = runs.length;
  params[DISPATCH_WORKGROUP_COUNT] = workgroupCount;
  return {
    params,
    runs: packedRuns,
    tables,
    fixtureWords: tables.length * FIXTURE_WORDS,
    eventTableWords: tables.length * EVENT_TABLE_WORDS,
    workgroupCount,
  };
}

export interface MatchDispatcher {
  dispatch(runs: readonly MatchRun[]): Promise<DispatchResult>;
  /** Most runs a single dispatch takes (the caller splits bigger batches). */
  maxRuns: number;
  heldBytes(): number;
  destroy(): void;
}

/** What the match kernel asks of the device beyond the defaults. */
export const MATCH_DEVICE_NEEDS = {
  storageBuffersPerStage: 4,
  workgroupStorageBytes: COUNTER_WORDS * 4,
  invocationsPerWorkgroup: MATCH_WORKGROUP_SIZE,
};

export interface MatchDispatcherOptions {
  /**
   * Workgroups per grid row (default 65,535, the WebGPU limit). Tests narrow it to run the kernel's
   * 2-D addressing at small draw counts.
   */
  gridWidth?: number;
  /**
   * Draws per workgroup (default MATCH_WORKGROUP_SIZE); the device must have been opened with at least
   * this many invocations per workgroup. `gpu-check --tune` compares sizes; counts never depend on it.
   */
  workgroupSize?: number;
  /** Rewrites the kernel's source before it is compiled (experiments on a GPU host). */
  transformSource?: (source: string) => string;
  now?: () => number;
}

export async function createMatchDispatcher(
  opened: OpenedDevice,
  options: MatchDispatcherOptions = {},
): Promise<MatchDispatcher> {
  const { device, timestamps } = opened;
  const workgroupSize = options.workgroupSize ?? MATCH_WORKGROUP_SIZE;
  const context: DispatchContext = {
    opened,
    gridWidth: options.gridWidth ?? MAX_WORKGROUPS_PER_DIMENSION,
    workgroupSize,
    now: options.now ?? (() => performance.now()),
    dispatches: 0,
    lastFinished: 0,
    pipeline: await buildComputePipeline(opened, {
      label: 'match kernel',
      code: (options.transformSource ?? ((source) => source))(
        kernelSource('match', ['common'], contractPrelude(workgroupSize)),
      ),
      entryPoint: 'main',
    }),
    pool: createBufferPool(device),
    querySet: timestamps
      ? device.createQuerySet({ label: 'match pass timestamps', type: 'timestamp', count: 2 })
      : null,
    maxRuns: runsPerDispatch(device.limits),
  };
  return {
    maxRuns: context.maxRuns,
    heldBytes: () => context.pool.heldBytes(),
    dispatch: (runs) => dispatchRuns(context, runs),
    destroy() {
      context.pool.destroy();
      context.querySet?.destroy();
    },
  };
}

/** What every dispatch of one dispatcher shares: the device, the kernel, the buffers and the queries. */
interface DispatchContext {
  opened: OpenedDevice;
  gridWidth: number;
  workgroupSize: number;
  now: () => number;
  /** Dispatches made so far (which readback buffer is next) and when the last one was read back. */
  dispatches: number;
  lastFinished: number;
  pipeline: GPUComputePipeline;
  pool: BufferPool;
  /** Timestamp queries around the pass; null when the device has none. */
  querySet: GPUQuerySet | null;
  maxRuns: number;
}

/** The buffers of one dispatch, taken from the pool. */
interface DispatchBuffers {
  params: GPUBuffer;
  packed: GPUBuffer;
  fixtures: GPUBuffer;
  eventTables: GPUBuffer;
  counters: GPUBuffer;
  readback: GPUBuffer;
}

async function dispatchRuns(context: DispatchContext, runs: readonly MatchRun[]): Promise<DispatchResult> {
  if (runs.length > context.maxRuns) throw new RangeError(`a dispatch holds at most ${context.maxRuns} runs`);
  const layout = packRuns(runs, context.workgroupSize);
  const counterBytes = runs.length * COUNTER_WORDS * 4;
  const timestampBytes = context.querySet ? 16 : 0;
  // Two dispatches may be in flight (gpu/engine.ts): each reads back through its own buffer, since a
  // buffer waiting to be mapped cannot be copied into. The other buffers are written in queue order.
  const readbackRole = `match readback ${context.dispatches++ % 2}`;
  const buffers = acquireBuffers(context.pool, layout, counterBytes, timestampBytes, readbackRole);
  uploadLayout(context.opened.device, layout, buffers);
  const encoder = encodeDispatch(context, layout, buffers, counterBytes);
  // Validation errors of the submit surface through `uncapturederror` (checked below): an error scope
  // here could leave a popErrorScope() promise pending when the device is lost, and Dawn aborts the
  // process when a worker holding an unsettled promise is torn down.
  const { opened, now } = context;
  const submitted = now();
  opened.device.queue.submit([encoder.finish()]);
  await buffers.readback.mapAsync(MapMode.READ, 0, counterBytes + timestampBytes);
  // Submitted behind another dispatch, this one started on the GPU when that one ended.
  const finished = now();
  const wallMs = finished - Math.max(submitted, context.lastFinished);
  context.lastFinished = finished;
  const mapped = buffers.readback.getMappedRange(0, counterBytes + timestampBytes);
  const words = new Uint32Array(mapped.slice(0, counterBytes));
  const { gpuMs, timing, timestamps } = passTime(context.querySet !== null, mapped, counterBytes, wallMs);
  buffers.readback.unmap();
  if (opened.uncapturedErrors.length > 0) {
    throw new Error(`GPU errors during the dispatch: ${opened.uncapturedErrors.splice(0).join('; ')}`);
  }
  const counterSets = runs.map((_, index) => words.slice(index * COUNTER_WORDS, (index + 1) * COUNTER_WORDS));
  return { counters: counterSets, gpuMs, timing, timestamps };
}

function acquireBuffers(
  pool: BufferPool,
  layout: PackedLayout,
  counterBytes: number,
  timestampBytes: number,
  readbackRole: string,
): DispatchBuffers {
  const storageIn = BufferUsage.STORAGE | BufferUsage.COPY_DST;
  return {
    params: pool.acquire(
      'match params',
      layout.params.byteLength,
      BufferUsage.UNIFORM | BufferUsage.COPY_DST,
    ),
    packed: pool.acquire('match runs', layout.runs.byteLength, storageIn),
    fixtures: pool.acquire('match fixture tables', layout.fixtureWords * 4, storageIn),
    eventTables: pool.acquire('match event tables', layout.eventTableWords * 4, storageIn),
    counters: pool.acquire(
      'match counters',
      counterBytes,
      BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST,
    ),
    readback: pool.acquire(
      readbackRole,
      counterBytes + timestampBytes,
      BufferUsage.MAP_READ | BufferUsage.COPY_DST,
    ),
  };
}

function uploadLayout(device: GPUDevice, layout: PackedLayout, buffers: DispatchBuffers): void {
  device.queue.writeBuffer(buffers.params, 0, layout.params);
  device.queue.writeBuffer(buffers.packed, 0, layout.runs);
  for (const placed of layout.tables) {
    device.queue.writeBuffer(buffers.fixtures, placed.fixtureOffset * 4, unshared(placed.fixture));
    device.queue.writeBuffer(buffers.eventTables, placed.eventTableOffset * 4, unshared(placed.eventTables));
  }
}

/**
 * Dawn writes from plain ArrayBuffers only; compiled tables arrive on shared memory (the job threads
 * compile onto it, src/engine/job-work.ts, so no thread copies them on the way): copied here, on the GPU
 * worker's thread.
 */
function unshared(words: Uint32Array): Uint32Array<ArrayBuffer> {
  return words.buffer instanceof SharedArrayBuffer ? words.slice() : (words as Uint32Array<ArrayBuffer>);
}

/** Records the dispatch: clear the counters, run the pass, copy counters (and timestamps) to the readback. */
function encodeDispatch(
  context: DispatchContext,
  layout: PackedLayout,
  buffers: DispatchBuffers,
  counterBytes: number,
): GPUCommandEncoder {
  const { opened, pipeline, pool, querySet } = context;
  const { device } = opened;
  const bindGroup = device.createBindGroup({
    label: 'match bindings',
    layout: pipeline.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: buffers.params, size: layout.params.byteLength } },
      { binding: 1, resource: { buffer: buffers.packed, size: layout.runs.byteLength } },
      { binding: 2, resource: { buffer: buffers.fixtures, size: layout.fixtureWords * 4 } },
      { binding: 3, resource: { buffer: buffers.eventTables, size: layout.eventTableWords * 4 } },
      { binding: 4, resource: { buffer: buffers.counters, size: counterBytes } },
    ],
  });
  const encoder = device.createCommandEncoder({ label: 'match dispatch' });
  encoder.clearBuffer(buffers.counters, 0, counterBytes);
  const pass = encoder.beginComputePass({
    label: 'match pass',
    ...(querySet
      ? { timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } }
      : {}),
  });
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  const [x, y] = dispatchGrid(layout.workgroupCount, context.gridWidth);
  pass.dispatchWorkgroups(x, y);
  pass.end();
  encoder.copyBufferToBuffer(buffers.counters, 0, buffers.readback, 0, counterBytes);
  if (querySet) {
    const resolved = pool.acquire('match timestamps', 16, BufferUsage.QUERY_RESOLVE | BufferUsage.COPY_SRC);
    encoder.resolveQuerySet(querySet, 0, 2, resolved, 0);
    encoder.copyBufferToBuffer(resolved, 0, buffers.readback, counterBytes, 16);
  }
  return encoder;
}

/** The pass's GPU time from its timestamps when they are usable, else the wall time. */
function passTime(
  timestamps: boolean,
  mapped: ArrayBuffer,
  counterBytes: number,
  wallMs: number,
): Pick<DispatchResult, 'gpuMs' | 'timing' | 'timestamps'> {
  if (timestamps) {
    const [begin, end] = new BigUint64Array(mapped.slice(counterBytes, counterBytes + 16));
    // Some drivers report 0 for both ends; fall back to the wall time then.
    if (begin !== undefined && end !== undefined && end > begin) {
      return { gpuMs: Number(end - begin) / 1e6, timing: 'timestamp', timestamps: [begin, end] };
    }
    if (begin !== undefined && end !== undefined) {
      return { gpuMs: wallMs, timing: 'wall', timestamps: [begin, end] };
    }
  }
  return { gpuMs: wallMs, timing: 'wall', timestamps: null };
}
