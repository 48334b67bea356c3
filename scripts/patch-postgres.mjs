// postinstall: a fix for the `postgres` client 3.4.9 (porsager/postgres#1154, #1208; upstream fixes
// #1168/#1209 unreleased). When a connection dies under an open transaction (pg_terminate_backend,
// a restarted server), a buffered write is flushed from a timer onto the closed socket and throws
// where nothing can catch it: the process dies, and the pool slot stays broken. The settlement_unknown
// path of the API runs straight into this. The fix fails the query instead and clears the buffer.
// Idempotent; refuses loudly when the installed version's source does not look as expected.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The package's exports hide package.json; it sits two folders above its ESM entry.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.resolve('postgres'))), '..');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const MARKER = 'matchsim: socket closed after this write was buffered';

const hunks = [
  [
    '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)',
    `  function nextWrite(fn) {\n    if (!socket) {\n      // ${MARKER}\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)`,
  ],
  [
    "      error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n",
    "      error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n",
  ],
  [
    '    incomings = null\n    clearImmediate(nextWriteTimer)\n',
    '    incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n',
  ],
];

for (const file of ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js']) {
  const target = path.join(root, file);
  let source = readFileSync(target, 'utf8');
  if (source.includes(MARKER)) continue;
  for (const [before, after] of hunks) {
    if (!source.includes(before)) {
      throw new Error(
        `patch-postgres: postgres ${version} ${file} does not match the expected source; review the patch`,
      );
    }
    source = source.replace(before, after);
  }
  writeFileSync(target, source);
  console.log(`patch-postgres: patched postgres ${version} ${file}`);
}
