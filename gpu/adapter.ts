// Adapter choice. Vulkan first (the backend Dawn uses on NVIDIA hosts); a software rasteriser
// (llvmpipe through OpenGL ES, or lavapipe through Vulkan) only when the caller allows it, so a host
// with a real GPU never silently runs the kernels on its CPU.
import { create } from 'webgpu';

export type EngineMode = 'auto' | 'gpu' | 'cpu';

export type DawnBackend = 'vulkan' | 'opengles';

export interface ChosenAdapter {
  /**
   * The Dawn instance. It must stay strongly reachable for as long as any device of it lives: if it is
   * garbage-collected the process crashes (segfault or futex abort, reproduced 3 of 3).
   */
  instance: GPU;
  adapter: GPUAdapter;
  backend: DawnBackend;
  software: boolean;
  /** Human-readable adapter name for /healthz, /metrics and benchmark rows. */
  description: string;
}

export interface AdapterPolicy {
  mode: EngineMode;
  /**
   * Accept a software adapter when no hardware one exists. Defaults to `mode === 'gpu'`: asking for
   * the GPU engine explicitly on a host without a GPU (CI, this development machine) runs the WGSL on
   * llvmpipe; `auto` never does.
   */
  allowSoftware?: boolean;
}

// Every instance ever created stays referenced here: dropping one whose adapter was probed is the
// crash described on ChosenAdapter.instance, and the handful of instances a process creates costs nothing.
const instances: GPU[] = [];

const SOFTWARE_ADAPTER = /llvmpipe|lavapipe|softpipe|swiftshader|software|microsoft basic render/i;

export function isSoftwareAdapter(info: GPUAdapterInfo): boolean {
  if (info.isFallbackAdapter) return true;
  return SOFTWARE_ADAPTER.test(`${info.vendor} ${info.architecture} ${info.device} ${info.description}`);
}

export function describeAdapter(info: GPUAdapterInfo, backend: DawnBackend): string {
  const name = [info.vendor, info.device, info.description].filter((part) => part !== '').join(' / ');
  return `${name || 'unnamed adapter'} (${backend})`;
}

async function probe(backend: DawnBackend): Promise<ChosenAdapter | null> {
  if (backend === 'opengles') {
    // Mesa's EGL needs a platform without a display server; it reads this from the C environment
    // when Dawn opens the display, so it has to be set in the process environment itself.
    process.env.EGL_PLATFORM ??= 'surfaceless';
  }
  const instance = create([`backend=${backend}`]);
  instances.push(instance);
  const options: GPURequestAdapterOptions =
    backend === 'opengles'
      ? { featureLevel: 'compatibility' }
      : { featureLevel: 'core', powerPreference: 'high-performance' };
  let adapter: GPUAdapter | null;
  try {
    adapter = await instance.requestAdapter(options);
  } catch {
    adapter = null;
  }
  if (!adapter) return null;
  return {
    instance,
    adapter,
    backend,
    software: isSoftwareAdapter(adapter.info),
    description: describeAdapter(adapter.info, backend),
  };
}

/**
 * Why Vulkan cannot be probed on this host, or null when its loader is there. Dawn opens `libvulkan.so.1`
 * when asked for the Vulkan backend and, where it is missing, prints "Warning: Couldn't load Vulkan" with
 * a C++ source location on stderr, which reads like a crash; asking the dynamic linker first (the same
 * search Dawn's dlopen does) lets a host without the loader skip that probe quietly.
 */
export function vulkanLoaderMissing(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    process.dlopen({ exports: {} }, 'libvulkan.so.1');
  } catch (error) {
    const message = (error as Error).message;
    // The library loaded but is no Node addon: the loader is there.
    if (!message.includes('libvulkan.so.1:')) return null;
    return 'libvulkan.so.1, the Vulkan loader, is not installed';
  }
  return null;
}

/** The adapter the policy allows, or null when the CPU engine has to run the simulations. */
export async function chooseAdapter(policy: AdapterPolicy): Promise<ChosenAdapter | null> {
  if (policy.mode === 'cpu') return null;
  const allowSoftware = policy.allowSoftware ?? policy.mode === 'gpu';
  const vulkan = vulkanLoaderMissing() === null ? await probe('vulkan') : null;
  if (vulkan && !vulkan.software) return vulkan;
  if (!allowSoftware) return null;
  // lavapipe through Vulkan exercises the same backend as NVIDIA hosts, so prefer it to llvmpipe.
  if (vulkan) return vulkan;
  return probe('opengles');
}
