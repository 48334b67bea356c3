// Part of `npm run build`: copies the WGSL kernels to dist/shaders/, beside the compiled dist/gpu/, which
// reads them from ../shaders/ relative to itself as gpu/ does in a checkout (gpu/shader-source.ts); and the
// playground's static files to dist/src/http/playground/, beside the compiled routes (routes/playground.ts).
// Only files whose bytes changed are written and files gone from the source are removed, so a second
// `npm start` with nothing changed writes nothing here.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';

const root = new URL('../', import.meta.url);

function sync(from, to) {
  mkdirSync(to, { recursive: true });
  const names = new Set(readdirSync(from));
  for (const name of readdirSync(to)) {
    if (!names.has(name)) rmSync(new URL(name, to), { recursive: true, force: true });
  }
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = new URL(entry.name, from);
    const target = new URL(entry.name, to);
    if (entry.isDirectory()) {
      sync(new URL(`${entry.name}/`, from), new URL(`${entry.name}/`, to));
    } else if (!existsSync(target) || !readFileSync(source).equals(readFileSync(target))) {
      cpSync(source, target);
    }
  }
}

sync(new URL('shaders/', root), new URL('dist/shaders/', root));
sync(new URL('src/http/playground/', root), new URL('dist/src/http/playground/', root));
