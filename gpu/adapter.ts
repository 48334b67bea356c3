// Adapter choice. Vulkan first (the backend Dawn uses on NVIDIA hosts); a software rasteriser
// (llvmpipe through OpenGL ES, or lavapipe through Vulkan) only when the caller allows it, so a host
// with a real GPU never silently runs the kernels on its CPU.
import { existsSync, readdirSync } from 'node:fs';
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

/** The Dawn feature switched off on every instance; its effect is checked by gpu-check. */
export const TIMESTAMP_QUANTIZATION = 'timestamp_quantization';

const SOFTWARE_ADAPTER = /llvmpipe|lavapipe|softpipe|swiftshader|software|microsoft basic render/i;

export function isSoftwareAdapter(info: GPUAdapterInfo): boolean {
  if (info.isFallbackAdapter) return true;
  return SOFTWARE_ADAPTER.test(`${info.vendor} ${info.architecture} ${info.device} ${info.description}`);
}

export function describeAdapter(info: GPUAdapterInfo, backend: DawnBackend): string {
  const name = [info.vendor, info.device, info.description].filter((part) => part !== '').join(' / ');
  return `${name || 'unnamed adapter'} (${backend})`;
}

async function probe(backend: DawnBackend, enabled: readonly string[] = []): Promise<ChosenAdapter | null> {
  if (backend === 'opengles') {
    // Mesa's EGL needs a platform without a display server; it reads this from the C environment
    // when Dawn opens the display, so it has to be set in the process environment itself.
    process.env.EGL_PLATFORM ??= 'surfaceless';
  }
  // Dawn quantizes timestamps to about 65 µs by default (a privacy measure of browsers): off here, or a
  // short dispatch reads begin == end. Dawn ignores unknown toggle names silently, so `matchsim
  // gpu-check` proves it took effect (docs/gpu.md "gpu-check").
  const flags = [`backend=${backend}`, `disable-dawn-features=${TIMESTAMP_QUANTIZATION}`];
  if (enabled.length > 0) flags.push(`enable-dawn-features=${enabled.join(',')}`);
  const instance = create(flags);
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
 * An adapter of `backend` from an instance with more Dawn features switched on (toggle names; Dawn
 * ignores unknown ones). The engine never uses one: `gpu-check --tune` times the kernel with Dawn's
 * robustness transform off this way.
 */
export function adapterWithFeatures(
  backend: DawnBackend,
  enabled: readonly string[],
): Promise<ChosenAdapter | null> {
  return probe(backend, enabled);
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
  return (await chooseAdapterExplained(policy)).chosen;
}

/** The adapter the policy allows and, when there is none, why: for /healthz and the start-up log. */
export async function chooseAdapterExplained(
  policy: AdapterPolicy,
): Promise<{ chosen: ChosenAdapter | null; reason: string | null }> {
  if (policy.mode === 'cpu') return { chosen: null, reason: 'ENGINE=cpu' };
  const allowSoftware = policy.allowSoftware ?? policy.mode === 'gpu';
  // No loader: Dawn's probe would only print a warning that reads like a crash (vulkanLoaderMissing).
  const vulkan = vulkanLoaderMissing() === null ? await probe('vulkan') : null;
  if (vulkan && !vulkan.software) return { chosen: vulkan, reason: null };
  // lavapipe through Vulkan exercises the same backend as NVIDIA hosts, so prefer it to llvmpipe.
  if (vulkan && allowSoftware) return { chosen: vulkan, reason: null };
  const vulkanSays = vulkan
    ? `Vulkan offers only the software adapter ${vulkan.description}`
    : `no Vulkan adapter (${vulkanProblem()})`;
  if (!allowSoftware) {
    return { chosen: null, reason: `no hardware GPU adapter: ${vulkanSays}; software adapters are refused` };
  }
  const gles = await probe('opengles');
  return gles
    ? { chosen: gles, reason: null }
    : { chosen: null, reason: `no WebGPU adapter: ${vulkanSays}; no OpenGL ES adapter either` };
}

const ICD_FOLDERS = ['/etc/vulkan/icd.d', '/usr/share/vulkan/icd.d', '/usr/local/share/vulkan/icd.d'];

/**
 * What an operator checks first when Vulkan finds no adapter: whether the loader (libvulkan.so.1) loads,
 * which driver manifests it sees, and whether the NVIDIA device files exist (docs/gpu.md "No adapter").
 */
export function vulkanProblem(): string {
  const parts: string[] = [];
  try {
    // dlopen through Node: a loadable library that is not a Node addon fails with "self-register"
    // (or a missing init function), a missing one with "cannot open shared object file".
    process.dlopen({ exports: {} } as NodeJS.Module, 'libvulkan.so.1');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/cannot open shared object/i.test(message))
      parts.push('the Vulkan loader libvulkan.so.1 is not found');
  }
  const named = process.env.VK_DRIVER_FILES ?? process.env.VK_ICD_FILENAMES;
  const manifests = named
    ? named.split(':').filter((file) => existsSync(file))
    : ICD_FOLDERS.flatMap((folder) => listFolder(folder).map((name) => `${folder}/${name}`));
  parts.push(
    manifests.length > 0
      ? `driver manifests: ${manifests.join(', ')}`
      : named
        ? `VK_DRIVER_FILES names no existing file (${named})`
        : `no driver manifest in ${ICD_FOLDERS.join(', ')}`,
  );
  const devices = listFolder('/dev').filter((name) => name.startsWith('nvidia'));
  parts.push(devices.length > 0 ? `/dev: ${devices.join(' ')}` : 'no /dev/nvidia* device files');
  return parts.join('; ');
}

function listFolder(folder: string): string[] {
  try {
    return readdirSync(folder).sort();
  } catch {
    return [];
  }
}
