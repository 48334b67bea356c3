// The worker-thread pool both engines use (src/engine-contract/thread-pool.ts): answers matched to their
// tasks, a thread's next tasks sent ahead of its answer up to `depth`, and a thread that dies fails the
// task it was running, hands the ones behind it to a new thread, and is replaced.
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { createThreadPool, type ThreadPool } from '../../src/engine-contract/thread-pool.js';

// Answers { n, doubled } for { n }; exits the thread for { exit: true }; throws out of the thread for
// { throw: true }; answers an error for { fail }.
const THREAD = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (task) => {
  if (task.exit) process.exit(3);
  if (task.throw) throw new Error('boom ' + task.n);
  if (task.fail) parentPort.postMessage({ error: 'refused ' + task.n });
  else parentPort.postMessage({ n: task.n, doubled: task.n * 2 });
});`;

type Task = { n: number; exit?: boolean; fail?: boolean; throw?: boolean };
type Reply = { n: number; doubled: number } | { error: string };

let pool: ThreadPool<Task, { n: number; doubled: number }> | null = null;
afterEach(async () => {
  await pool?.close();
  pool = null;
});

/** A pool whose threads count the tasks posted to them. */
function countingPool(size: number, depth?: number) {
  const posted: number[] = [];
  pool = createThreadPool<Task, Reply>({
    size,
    name: 'test thread',
    ...(depth === undefined ? {} : { depth }),
    start: () => {
      const worker = new Worker(THREAD, { eval: true });
      const post = worker.postMessage.bind(worker);
      worker.postMessage = (task: Task) => {
        posted.push(task.n);
        post(task);
      };
      return worker;
    },
  });
  return { pool, posted };
}

describe('thread pool', () => {
  it('sends a thread one task at a time by default, and up to depth tasks ahead of its answers', async () => {
    const one = countingPool(1);
    const first = [1, 2, 3].map((n) => one.pool.run({ n }));
    expect(one.posted).toEqual([1]);
    expect(await Promise.all(first)).toEqual([1, 2, 3].map((n) => ({ n, doubled: 2 * n })));
    await one.pool.close();

    const deep = countingPool(1, 2);
    const tasks = [1, 2, 3, 4, 5].map((n) => deep.pool.run({ n }));
    expect(deep.posted).toEqual([1, 2]);
    expect(await Promise.all(tasks)).toEqual([1, 2, 3, 4, 5].map((n) => ({ n, doubled: 2 * n })));
    expect(deep.posted).toEqual([1, 2, 3, 4, 5]);
  });

  it('spreads tasks over the threads with the fewest sent', async () => {
    const { pool, posted } = countingPool(2, 2);
    const tasks = [1, 2, 3, 4, 5].map((n) => pool.run({ n }));
    // Two threads, two each: the fifth waits for an answer.
    expect(posted).toEqual([1, 2, 3, 4]);
    expect(await Promise.all(tasks)).toEqual([1, 2, 3, 4, 5].map((n) => ({ n, doubled: 2 * n })));
  });

  it('rejects an answered error alone; a dead thread fails the task it ran, and the ones behind it run on a new thread', async () => {
    const { pool, posted } = countingPool(1, 2);
    await expect(pool.run({ n: 7, fail: true })).rejects.toThrow('test thread: refused 7');
    const dying = pool.run({ n: 8, exit: true });
    const behind = pool.run({ n: 9 });
    // Both were sent to the one thread before it died.
    expect(posted).toEqual([7, 8, 9]);
    await expect(dying).rejects.toThrow('test thread exited');
    expect(await behind).toEqual({ n: 9, doubled: 18 });
    expect(posted).toEqual([7, 8, 9, 9]);
    expect(await pool.run({ n: 10 })).toEqual({ n: 10, doubled: 20 });
  });

  it('fails the task a thread threw in with its error, and runs the one behind it on a new thread', async () => {
    const { pool } = countingPool(1, 2);
    const throwing = pool.run({ n: 11, throw: true });
    const behind = pool.run({ n: 12 });
    await expect(throwing).rejects.toThrow('boom 11');
    expect(await behind).toEqual({ n: 12, doubled: 24 });
  });

  it('rejects every task, sent or waiting, when closed', async () => {
    const { pool } = countingPool(1, 2);
    const tasks = [1, 2, 3].map((n) => pool.run({ n }).catch((error: Error) => error.message));
    await pool.close();
    for (const outcome of await Promise.all(tasks)) {
      // Answered before the close, or rejected by it: never left waiting.
      expect(typeof outcome === 'string' ? outcome : 'answered').toMatch(/answered|closed|exited/);
    }
  });
});
