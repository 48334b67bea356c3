// Adapter choice: software rasterisers are recognised from adapter.info, so ENGINE=auto never runs the
// kernels on a CPU rasteriser, and ENGINE=cpu never probes the GPU at all. Needs no adapter.
import { describe, expect, it } from 'vitest';
import { chooseAdapter, describeAdapter, isSoftwareAdapter } from '../../gpu/adapter.js';

function info(fields: Partial<GPUAdapterInfo>): GPUAdapterInfo {
  return {
    vendor: '',
    architecture: '',
    device: '',
    description: '',
    subgroupMinSize: 4,
    subgroupMaxSize: 128,
    isFallbackAdapter: false,
    ...fields,
  } as GPUAdapterInfo;
}

describe('software adapters', () => {
  it('recognises Mesa llvmpipe (OpenGL ES) and lavapipe (Vulkan) as software', () => {
    expect(
      isSoftwareAdapter(
        info({ device: 'llvmpipe-llvm-15-0-6-256-bits-', description: 'OpenGL ES 3.2 Mesa 22.3.6' }),
      ),
    ).toBe(true);
    expect(
      isSoftwareAdapter(
        info({ vendor: 'mesa', device: 'llvmpipe (LLVM 19.1.7, 256 bits)', description: 'lavapipe' }),
      ),
    ).toBe(true);
    expect(isSoftwareAdapter(info({ vendor: 'google', device: 'SwiftShader Device (Subzero)' }))).toBe(true);
    expect(isSoftwareAdapter(info({ isFallbackAdapter: true }))).toBe(true);
  });

  it('takes an NVIDIA GPU as hardware', () => {
    const h100 = info({
      vendor: 'nvidia',
      architecture: 'hopper',
      device: 'NVIDIA H100 80GB HBM3',
      description: 'NVIDIA: 550.54.15',
    });
    expect(isSoftwareAdapter(h100)).toBe(false);
    expect(describeAdapter(h100, 'vulkan')).toBe(
      'nvidia / NVIDIA H100 80GB HBM3 / NVIDIA: 550.54.15 (vulkan)',
    );
  });

  it('probes nothing with ENGINE=cpu', async () => {
    expect(await chooseAdapter({ mode: 'cpu' })).toBeNull();
  });
});
