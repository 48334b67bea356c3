// Device opening and pipeline building. Dawn reports validation errors through error scopes and the
// `uncapturederror` event instead of throwing, so a broken shader would otherwise run and yield zeros.
import { globals } from 'webgpu';
import type { ChosenAdapter } from './adapter.js';

// Node has no WebGPU globals; dawn.node hands the flag namespaces over in `globals`.
const dawnGlobals = globals as { GPUBufferUsage: GPUBufferUsage; GPUMapMode: GPUMapMode };
export const BufferUsage = dawnGlobals.GPUBufferUsage;
export const MapMode = dawnGlobals.GPUMapMode;

export interface OpenedDevice {
  chosen: ChosenAdapter;
  device: GPUDevice;
  /** True when the adapter offers `timestamp-query` and the device was opened with it. */
  timestamps: boolean;
  /** Errors nobody captured in a scope since the device opened; a dispatch fails when one appears. */
  uncapturedErrors: string[];
}

/** Limits the kernels need beyond the compatibility defaults; each capped by what the adapter offers. */
export interface DeviceNeeds {
  storageBuffersPerStage: number;
  workgroupStorageBytes: number;
  invocationsPerWorkgroup: number;
}

function need(name: string, wanted: number, offered: number): number {
  if (offered < wanted) throw new Error(`adapter offers ${name} = ${offered}, the kernels need ${wanted}`);
  return wanted;
}

export async function openDevice(chosen: ChosenAdapter, needs: DeviceNeeds): Promise<OpenedDevice> {
  const { adapter } = chosen;
  const timestamps = adapter.features.has('timestamp-query');
  const limits = adapter.limits;
  need('maxComputeWorkgroupStorageSize', needs.workgroupStorageBytes, limits.maxComputeWorkgroupStorageSize);
  const device = await adapter.requestDevice({
    label: 'matchsim device',
    requiredFeatures: timestamps ? ['timestamp-query'] : [],
    requiredLimits: {
      maxStorageBuffersPerShaderStage: need(
        'maxStorageBuffersPerShaderStage',
        needs.storageBuffersPerStage,
        limits.maxStorageBuffersPerShaderStage,
      ),
      // All the workgroup memory offered (checked above to cover the kernels' need), so that a kernel
      // compared by `gpu-check --tune` may keep more per workgroup (docs/gpu.md "Tuning on the H200").
      maxComputeWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: need(
        'maxComputeInvocationsPerWorkgroup',
        needs.invocationsPerWorkgroup,
        limits.maxComputeInvocationsPerWorkgroup,
      ),
      // The kernels' workgroups are one-dimensional: x is the whole workgroup.
      maxComputeWorkgroupSizeX: need(
        'maxComputeWorkgroupSizeX',
        needs.invocationsPerWorkgroup,
        limits.maxComputeWorkgroupSizeX,
      ),
      maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
      maxBufferSize: limits.maxBufferSize,
    },
  });
  const opened: OpenedDevice = { chosen, device, timestamps, uncapturedErrors: [] };
  device.addEventListener('uncapturederror', (event) => {
    opened.uncapturedErrors.push((event as GPUUncapturedErrorEvent).error.message);
  });
  return opened;
}

export interface ComputePipelineSource {
  label: string;
  code: string;
  entryPoint: string;
}

/** Compile a compute pipeline once; throws with the compiler's messages instead of running a broken one. */
export async function buildComputePipeline(
  opened: OpenedDevice,
  source: ComputePipelineSource,
): Promise<GPUComputePipeline> {
  const { device } = opened;
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ label: `${source.label} module`, code: source.code });
  const info = await module.getCompilationInfo();
  const compileErrors = info.messages.filter((message) => message.type === 'error');
  let pipeline: GPUComputePipeline | undefined;
  let pipelineError: unknown;
  if (compileErrors.length === 0) {
    try {
      pipeline = await device.createComputePipelineAsync({
        label: source.label,
        layout: 'auto',
        compute: { module, entryPoint: source.entryPoint },
      });
    } catch (error) {
      pipelineError = error;
    }
  }
  const scoped = await device.popErrorScope();
  if (compileErrors.length > 0) {
    const lines = compileErrors.map((message) => `${message.lineNum}:${message.linePos} ${message.message}`);
    throw new Error(`WGSL of ${source.label} does not compile: ${lines.join('; ')}`);
  }
  if (scoped) throw new Error(`pipeline ${source.label} is invalid: ${scoped.message}`);
  if (!pipeline)
    throw new Error(`pipeline ${source.label} failed: ${String(pipelineError)}`, { cause: pipelineError });
  return pipeline;
}
