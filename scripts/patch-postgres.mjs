// postinstall: six fixes for the `postgres` client 3.4.9 that the service depends on, applied to the
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
    file: 'connection.js',
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
    file: 'connection.js',
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
    file: 'connection.js',
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
  {
    file: 'connection.js',
    // A connection closed with a socket error (ECONNRESET: the server or a proxy went away while
    // statements were in flight) kept the queries it still held: the socket's error rejected the current
    // one without forgetting it, and a ROLLBACK issued meanwhile was never answered nor rejected. A
    // transaction's pipelined statements then left its request waiting until its timeout, and the
    // connection's next use answered the stale query first. Found by test/faults/one-commit.test.ts with
    // the cache hit's statements pipelined. Here a closed connection rejects and forgets every query it
    // holds, whatever closed it.
    marker: 'matchsim: a closed connection answers every query it holds',
    hunks: [
      [
        "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n",
        "    // matchsim: a closed connection answers every query it holds\n    ;(query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n    query = null\n",
      ],
    ],
  },
  {
    file: 'connection.js',
    // A connection that closed while a query was being answered kept that answer's parse state: the rows
    // counted so far, the result they went into and the server's error (pg_terminate_backend sends FATAL
    // 57P01 before closing). The same connection object reconnects for the next query, which then
    // resolved with holes or another query's rows at the front of its result, or was rejected with the
    // lost query's error. Found by test/faults/connection-kill.test.ts (GET /v1/fixtures answered 500:
    // "Cannot read properties of undefined"); test/faults/lost-answer.test.ts reproduces it. Here a
    // closed connection starts its next query with nothing of the lost one. Applied after the fix above.
    marker: 'matchsim: nothing of a lost answer reaches the next query',
    hunks: [
      [
        '    query = null\n    closedTime = performance.now()\n',
        '    query = null\n    // matchsim: nothing of a lost answer reaches the next query\n    errorResponse = results = null\n    result = new Result()\n    rows = 0\n    closedTime = performance.now()\n',
      ],
    ],
  },
  {
    file: 'queue.js',
    // The pool's connection queues: `shift` leaves a hole at the front and frees them only when the
    // queue empties, and `remove` scans holes included. Under steady load a query goes to a busy
    // connection (`go(busy.shift(), …)`, then `move` pushes it back), so the busy queue never empties:
    // it grows by one entry per query, and every `move` scans all of it, a cost per query that grows
    // with the process's age (3.5% of an API process's time after some 60,000 balance reads, and growing). Here
    // `remove` scans the live part only, and `shift` drops the holes once they are half the array.
    marker: 'matchsim: scan and keep the live part only',
    hunks: [
      [
        '    remove: (x) => {\n      const index = xs.indexOf(x)\n      return index === -1\n        ? null\n        : (xs.splice(index, 1), x)\n    },\n',
        '    remove: (x) => {\n      // matchsim: scan and keep the live part only\n      const at = xs.indexOf(x, index)\n      if (at === -1)\n        return null\n      xs.splice(at, 1)\n      if (index === xs.length) {\n        index = 0\n        xs = []\n      }\n      return x\n    },\n',
      ],
      [
        '      } else {\n        xs[index - 1] = undefined\n      }\n',
        '      } else {\n        xs[index - 1] = undefined\n        if (index >= 64 && index * 2 >= xs.length) {\n          xs = xs.slice(index)\n          index = 0\n        }\n      }\n',
      ],
    ],
  },
];

for (const dir of ['src', 'cjs/src', 'cf/src']) {
  for (const file of new Set(fixes.map((fix) => fix.file))) {
    const relative = `${dir}/${file}`;
    const target = path.join(root, relative);
    let source = readFileSync(target, 'utf8');
    let changed = false;
    for (const fix of fixes.filter((f) => f.file === file)) {
      if (source.includes(fix.marker)) continue;
      for (const [before, after] of fix.hunks) {
        if (!source.includes(before)) {
          throw new Error(
            `patch-postgres: postgres ${version} ${relative} does not match the expected source; review the patch`,
          );
        }
        source = source.replace(before, after);
      }
      changed = true;
    }
    if (changed) {
      writeFileSync(target, source);
      console.log(`patch-postgres: patched postgres ${version} ${relative}`);
    }
  }
}
