// WGSL lives in shaders/*.wgsl beside gpu/ in a checkout and beside dist/ in a build (the .wgsl files
// are not compiled, so the image copies shaders/ next to dist/). WGSL has no include: a kernel is the
// shared files followed by its own file.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findShadersDirectory(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 4; depth++) {
    const candidate = join(directory, 'shaders');
    if (existsSync(join(candidate, 'common.wgsl'))) return candidate;
    directory = dirname(directory);
  }
  throw new Error('shaders/ not found beside gpu/ or dist/');
}

export const shadersDirectory = findShadersDirectory();

export function readShader(name: string): string {
  return readFileSync(join(shadersDirectory, `${name}.wgsl`), 'utf8');
}

/** The source of one kernel: a generated prelude (constants from the contract), shared files, the kernel. */
export function kernelSource(kernel: string, shared: readonly string[], prelude = ''): string {
  return [prelude, ...shared.map(readShader), readShader(kernel)].join('\n');
}
