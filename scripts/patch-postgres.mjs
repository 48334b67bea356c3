// postinstall: three fixes for the `postgres` client 3.4.9 that the service depends on, applied to the
// installed package (upstream fixes unreleased). Each is described at its entry below. Idempotent;
// refuses loudly when the installed version's source does not look as expected.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The package's exports hide package.json; it sits two folders above its ESM entry.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.resolve('postgres'))), '..');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
// Each fix: a marker (present once applied), the source it expects, and its replacement.
const fixes = [
  {
    // porsager/postgres#1154, #1208: a buffered write flushed onto a closed socket throws from a timer.
    marker: 'matchsim: socket closed after this write was buffered',
    hunks: [
      [
        '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)',
        "  function nextWrite(fn) {\n    if (!socket) {\n      // matchsim: socket closed after this write was buffered\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)",
      ],
      [
        "      error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n",
        "      error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n",
      ],
      [
        '    incomings = null\n    clearImmediate(nextWriteTimer)\n',
        '    incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n',
      ],
    ],
  },
  {
    // A transaction's BEGIN reserves its connection through `onexecute`, which the original skips when
    // the socket applies backpressure or the pipeline is full: `sql.begin` then fails with "Cannot set
    // properties of undefined (setting 'onclose')" and other queries may share the transaction's
    // connection. Seen with one connection (PGlite) under concurrent requests.
    marker: 'matchsim: reserve the connection of a BEGIN',
    hunks: [
      [
        '      build(q)\n      return write(toBuffer(q))\n        && !q.describeFirst\n        && !q.cursorFn\n        && sent.length < max_pipeline\n        && (!q.options.onexecute || q.options.onexecute(connection))\n',
        '      build(q)\n      const more = write(toBuffer(q))\n        && !q.describeFirst\n        && !q.cursorFn\n        && sent.length < max_pipeline\n      // matchsim: reserve the connection of a BEGIN even when the pipeline is full\n      if (q.options.onexecute) {\n        q.options.onexecute(connection)\n        return false\n      }\n      return more\n',
      ],
    ],
  },
  {
    // A new connection first reads the array types (fetch_types). When the server ends that connection
    // during the read (pg_terminate_backend, a restart), the read's rejection was left unhandled, which
    // stops a Node process; the queries waiting on the connection get its error anyway.
    marker: 'matchsim: the connection answers its own loss',
    hunks: [
      [
        '      if (needsTypes) {\n        initial.reserve && (initial = null)\n        return fetchArrayTypes()\n',
        '      if (needsTypes) {\n        initial.reserve && (initial = null)\n        // matchsim: the connection answers its own loss\n        return fetchArrayTypes().catch(() => {})\n',
      ],
    ],
  },
];

for (const file of ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js']) {
  const target = path.join(root, file);
  let source = readFileSync(target, 'utf8');
  let changed = false;
  for (const fix of fixes) {
    if (source.includes(fix.marker)) continue;
    for (const [before, after] of fix.hunks) {
      if (!source.includes(before)) {
        throw new Error(
          `patch-postgres: postgres ${version} ${file} does not match the expected source; review the patch`,
        );
      }
      source = source.replace(before, after);
    }
    changed = true;
  }
  if (changed) {
    writeFileSync(target, source);
    console.log(`patch-postgres: patched postgres ${version} ${file}`);
  }
}
