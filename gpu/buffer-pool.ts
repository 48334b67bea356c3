// GPU memory is invisible to V8, so buffers are never left for the garbage collector: the worker keeps
// one buffer per role (params, jobs, tables, counters, and one readback buffer for each of the two
// dispatches that may be in flight), grown to the next power of two (within the device's maxBufferSize)
// when a dispatch needs more and destroyed when it is replaced. A dispatch in flight may still use the
// buffer its successor replaces: WebGPU frees a destroyed buffer only after the work submitted with it,
// and writes to a kept one reach the GPU in queue order, after that work.

/** Smallest buffer the pool creates; also keeps sizes a multiple of the 4-byte copy alignment. */
const MINIMUM_BUFFER_BYTES = 256;

export interface BufferPool {
  /** A buffer of at least `bytes` for this role; its contents are whatever the last user left. */
  acquire(role: string, bytes: number, usage: GPUBufferUsageFlags): GPUBuffer;
  /** Bytes held on the device, for /metrics. */
  heldBytes(): number;
  destroy(): void;
}

/** The next power of two, or the exact size (4-byte aligned) when the power of two exceeds `maxBytes`. */
export function roundUpBufferSize(bytes: number, maxBytes: number): number {
  let size = MINIMUM_BUFFER_BYTES;
  while (size < bytes) size *= 2;
  return size <= maxBytes ? size : Math.ceil(bytes / 4) * 4;
}

export function createBufferPool(device: GPUDevice): BufferPool {
  const maxBytes = device.limits.maxBufferSize;
  const buffers = new Map<string, GPUBuffer>();
  return {
    acquire(role, bytes, usage) {
      const held = buffers.get(role);
      if (held && held.size >= bytes && held.usage === usage) return held;
      held?.destroy();
      const buffer = device.createBuffer({ label: role, size: roundUpBufferSize(bytes, maxBytes), usage });
      buffers.set(role, buffer);
      return buffer;
    },
    heldBytes() {
      let total = 0;
      for (const buffer of buffers.values()) total += buffer.size;
      return total;
    },
    destroy() {
      for (const buffer of buffers.values()) buffer.destroy();
      buffers.clear();
    },
  };
}
