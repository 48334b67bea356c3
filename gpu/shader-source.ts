// WGSL lives in shaders/*.wgsl beside gpu/: in a checkout at the repository root, and in a build at
// dist/shaders/ beside dist/gpu/ (`npm run build` copies it there, scripts/copy-shaders.mjs), so one path
// relative to this module serves both. WGSL has no include: a kernel is the shared files followed by
// its own file.
import { readFileSync } from 'node:fs';

const shadersDirectory = new URL('../shaders/', import.meta.url);

export function readShader(name: string): string {
  return readFileSync(new URL(`${name}.wgsl`, shadersDirectory), 'utf8');
}

/** The source of one kernel: a generated prelude (constants from the contract), shared files, the kernel. */
export function kernelSource(kernel: string, shared: readonly string[], prelude = ''): string {
  return [prelude, ...shared.map(readShader), readShader(kernel)].join('\n');
}
