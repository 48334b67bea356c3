// A pool of worker threads that run one task at a time each, in the order tasks come: the CPU engine's
// draw ranges (fallback/cpu-engine.ts) and the job threads' host work (src/engine/job-threads.ts). A
// thread answers each task with one message, `{ error }` when it failed; a thread that crashes is replaced,
// so the pool keeps its size, and the task it held is rejected.
import type { Worker } from 'node:worker_threads';

export interface ThreadPool<Task, Reply> {
  readonly size: number;
  /** Runs `task` on the next idle thread; rejects with `name: error` when the thread answered an error. */
  run(task: Task): Promise<Reply>;
  /** Rejects the tasks still waiting and ends every thread. */
  close(): Promise<void>;
}

interface Pending<Task, Reply> {
  task: Task;
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
}

export function createThreadPool<Task, Reply extends object>(options: {
  size: number;
  /** Named in errors: "cpu engine worker", "job thread". */
  name: string;
  start: () => Worker;
}): ThreadPool<Task, Exclude<Reply, { error: string }>> {
  type Answer = Exclude<Reply, { error: string }>;
  const queue: Pending<Task, Answer>[] = [];
  const idle: Worker[] = [];
  const busy = new Map<Worker, Pending<Task, Answer>>();
  let closed = false;

  function dispatch(): void {
    while (idle.length > 0 && queue.length > 0) {
      const worker = idle.pop()!;
      const pending = queue.shift()!;
      busy.set(worker, pending);
      // A busy thread keeps the process alive until its task is back; an idle one does not.
      worker.ref();
      worker.postMessage(pending.task);
    }
  }

  function settle(worker: Worker, settled: (pending: Pending<Task, Answer>) => void): void {
    const pending = busy.get(worker);
    busy.delete(worker);
    if (pending) settled(pending);
  }

  function spawn(): void {
    const worker = options.start();
    worker.unref();
    worker.on('message', (reply: Reply) => {
      settle(worker, (pending) =>
        'error' in reply
          ? pending.reject(new Error(`${options.name}: ${String(reply.error)}`))
          : pending.resolve(reply as Answer),
      );
      worker.unref();
      idle.push(worker);
      dispatch();
    });
    worker.on('error', (error) => settle(worker, (pending) => pending.reject(error)));
    worker.on('exit', () => {
      settle(worker, (pending) => pending.reject(new Error(`${options.name} exited`)));
      const at = idle.indexOf(worker);
      if (at >= 0) idle.splice(at, 1);
      if (!closed) spawn();
    });
    idle.push(worker);
    dispatch();
  }

  for (let i = 0; i < options.size; i++) spawn();
  return {
    size: options.size,
    run(task) {
      if (closed) return Promise.reject(new Error(`${options.name} pool is closed`));
      return new Promise((resolve, reject) => {
        queue.push({ task, resolve, reject });
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const pending of queue.splice(0)) pending.reject(new Error(`${options.name} pool closed`));
      await Promise.all([...idle, ...busy.keys()].map((worker) => worker.terminate()));
    },
  };
}
