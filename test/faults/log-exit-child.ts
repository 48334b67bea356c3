// A process for test/faults/log-pipe.test.ts: logs through the service's logger (src/logger.ts) and exits
// in the same turn of the event loop, so that the first write is still in flight and the rest is queued
// when pino flushes at exit; or arms the exit deadline and blocks its main thread for good.
import { armExitDeadline, makeLogger } from '../../src/logger.js';

const mode = process.argv[2];
// Let the test close the pipe's reader before anything is written.
setTimeout(() => {
  if (mode === 'block') {
    armExitDeadline(200);
    // What sonic-boom 4's flushSync did on EPIPE: wait on the main thread, for ever.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  }
  const logger = makeLogger({ LOG_LEVEL: 'info' });
  for (let i = 0; i < 100; i++) logger.info({ line: i }, 'a line nobody reads');
  process.exit(0);
}, 500);
