// Member offsets and sizes of WGSL structs, computed from the .wgsl source with the WGSL memory layout
// rules (WGSL spec, "Alignment and Size"), so tests can hold the host-side layouts against them.
// Covers the types the kernels use: scalars, vectors, fixed and runtime arrays, nested structs.

export interface WgslMember {
  name: string;
  type: string;
  offset: number;
  size: number;
}

export interface WgslStruct {
  name: string;
  align: number;
  size: number;
  members: WgslMember[];
}

interface Layout {
  align: number;
  size: number;
}

const roundUp = (alignment: number, value: number) => Math.ceil(value / alignment) * alignment;

/** Split at commas outside angle brackets: `a: u32, b: array<u32, 4>` -> two parts. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const character of text) {
    if (character === '<') depth++;
    if (character === '>') depth--;
    if (character === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  parts.push(current);
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

function stripComments(source: string): string {
  return source.replace(/\/\/[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
}

export function parseWgslStructs(source: string): Map<string, WgslStruct> {
  const structs = new Map<string, WgslStruct>();
  const typeLayout = (type: string): Layout => {
    const compact = type.replace(/\s+/g, '');
    if (/^(u32|i32|f32|atomic<(u32|i32)>)$/.test(compact)) return { align: 4, size: 4 };
    const vector = /^vec([234])<(u32|i32|f32)>$/.exec(compact) ?? /^vec([234])[uif]$/.exec(compact);
    if (vector) {
      const count = Number(vector[1]);
      return count === 2 ? { align: 8, size: 8 } : { align: 16, size: count * 4 };
    }
    const array = /^array<(.+?)(?:,(\d+)u?)?>$/.exec(compact);
    if (array) {
      const element = typeLayout(array[1]!);
      const stride = roundUp(element.align, element.size);
      const count = array[2] === undefined ? 1 : Number(array[2]);
      return { align: element.align, size: stride * count };
    }
    const nested = structs.get(compact);
    if (nested) return { align: nested.align, size: nested.size };
    throw new Error(`WGSL type ${type} is not covered by the layout parser`);
  };
  const structPattern = /struct\s+(\w+)\s*\{([^}]*)\}/g;
  for (const match of stripComments(source).matchAll(structPattern)) {
    const name = match[1]!;
    let offset = 0;
    let align = 1;
    const members: WgslMember[] = [];
    for (const declaration of splitTopLevel(match[2]!)) {
      const colon = declaration.indexOf(':');
      const memberName = declaration.slice(0, colon).trim();
      const type = declaration.slice(colon + 1).trim();
      const layout = typeLayout(type);
      offset = roundUp(layout.align, offset);
      members.push({ name: memberName, type, offset, size: layout.size });
      offset += layout.size;
      align = Math.max(align, layout.align);
    }
    structs.set(name, { name, align, size: roundUp(align, offset), members });
  }
  return structs;
}
