// The WGSL side of the engine contract (src/engine-contract/layout.ts): every numeric constant and
// per-step table of the layout (and the generator's stream ids) rendered as WGSL declarations and
// prepended to each kernel, so a layout change reaches the shaders without a second copy to keep in step.
import * as contract from '../src/engine-contract/layout.js';
import * as rng from '../src/engine-contract/rng.js';

function wgslConstant(name: string, value: number): string {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    throw new Error(`contract constant ${name} = ${value} is not a u32`);
  }
  return `const ${name}: u32 = ${value}u;`;
}

function wgslTable(name: string, values: readonly number[]): string {
  return `const ${name} = array<u32, ${values.length}>(${values.map((value) => `${value}u`).join(', ')});`;
}

function numericExports(module: Record<string, unknown>): [string, number][] {
  return Object.entries(module)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
    .sort(([a], [b]) => a.localeCompare(b));
}

/** WGSL declarations of the contract, plus the kernel's own `WORKGROUP_SIZE`. */
export function contractPrelude(workgroupSize: number): string {
  const lines = ['// Generated from src/engine-contract/layout.ts and rng.ts by gpu/contract-constants.ts.'];
  for (const [name, value] of numericExports(contract)) lines.push(wgslConstant(name, value));
  for (const [name, value] of numericExports(rng)) lines.push(wgslConstant(name, value));
  lines.push(wgslTable('STEP_REGULAR_MINUTE', contract.STEP_REGULAR_MINUTE));
  lines.push(wgslTable('STEP_BAND', contract.STEP_BAND));
  lines.push(wgslConstant('WORKGROUP_SIZE', workgroupSize));
  return `${lines.join('\n')}\n`;
}
