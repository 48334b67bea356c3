// Part of `npm run build`: copies the WGSL kernels to dist/shaders/, beside the compiled dist/gpu/, which
// reads them from ../shaders/ relative to itself as gpu/ does in a checkout (gpu/shader-source.ts); and the
// playground's static files to dist/src/http/playground/, beside the compiled routes (routes/playground.ts).
import { cpSync, rmSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const target = new URL('dist/shaders/', root);
rmSync(target, { recursive: true, force: true });
cpSync(new URL('shaders/', root), target, { recursive: true });

const playground = new URL('dist/src/http/playground/', root);
rmSync(playground, { recursive: true, force: true });
cpSync(new URL('src/http/playground/', root), playground, { recursive: true });
