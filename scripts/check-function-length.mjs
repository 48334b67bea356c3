// A function a person reads in one sitting: no function of the shipped code is longer than MAX_LINES,
// except the engine's per-draw inner loop (fallback/engine.ts), which stays one piece on purpose so that
// it reads like the WGSL kernel it must match. Run by `npm run lint`.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import ts from 'typescript';

const MAX_LINES = 80;
const ROOTS = ['src/', 'gpu/', 'fallback/', 'model/', 'bench/', 'scripts/'];
/** file → function names allowed past the limit, each with its reason. */
const INNER_LOOPS = {
  'fallback/engine.ts': ['simulateRange'],
};

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => ROOTS.some((root) => file.startsWith(root)) && /\.(ts|mjs)$/.test(file));

const long = [];
for (const file of files) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      const lines = last - first + 1;
      const name = node.name?.getText(source) ?? node.parent?.name?.getText?.(source) ?? '(anonymous)';
      if (lines > MAX_LINES && !(INNER_LOOPS[file] ?? []).includes(name)) {
        long.push(`${file}:${first + 1} ${name} is ${lines} lines`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
if (long.length > 0) {
  console.error(
    `Functions longer than ${MAX_LINES} lines (split them by what they do):\n  ${long.join('\n  ')}`,
  );
  process.exit(1);
}
console.log(`check-function-length: every function is at most ${MAX_LINES} lines`);
