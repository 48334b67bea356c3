// A pool of worker threads that run one task at a time each, in the order tasks come: the CPU engine's
// draw ranges (fallback/cpu-engine.ts) and the job threads' host work (src/engine/job-threads.ts). A
// thread answers each task with one message, `{ error }` when it failed; a thread that crashes is replaced,
// so the pool keeps its size: the task it was running is rejected, and the ones sent behind it, which it
// had not started, go to the other threads.
//
// With `depth` above 1 a thread is sent its next tasks while it still works on one: it starts the next
// as soon as it answers, instead of waiting for its answer to reach this thread and a task to come back.
// For tasks of a fraction of a millisecond (a job thread's compile, a 100-draw job) that round trip
// through a busy event loop is most of the gap between them.
import type { Worker } from 'node:worker_threads';

export interface ThreadPool<Task, Reply> {
  readonly size: number;
  /** Runs `task` on the next thread with room; rejects with `name: error` when the thread answered an error. */
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
  /** Tasks sent to a thread at once, the one it works on included (default 1). */
  depth?: number;
}): ThreadPool<Task, Exclude<Reply, { error: string }>> {
  type Answer = Exclude<Reply, { error: string }>;
  const depth = Math.max(1, options.depth ?? 1);
  const queue: Pending<Task, Answer>[] = [];
  // Each thread's tasks sent, in the order it answers them (one at a time, in order).
  const sent = new Map<Worker, Pending<Task, Answer>[]>();
  let closed = false;

  /** The thread with the fewest tasks sent, if it has room. */
  function roomiest(): Worker | undefined {
    let best: Worker | undefined;
    let fewest = depth;
    for (const [worker, tasks] of sent) {
      if (tasks.length < fewest) {
        best = worker;
        fewest = tasks.length;
      }
    }
    return best;
  }

  function dispatch(): void {
    while (queue.length > 0) {
      const worker = roomiest();
      if (!worker) return;
      const pending = queue.shift()!;
      sent.get(worker)!.push(pending);
      // A busy thread keeps the process alive until its tasks are back; an idle one does not.
      worker.ref();
      worker.postMessage(pending.task);
    }
  }

  function spawn(): void {
    const worker = options.start();
    worker.unref();
    const tasks: Pending<Task, Answer>[] = [];
    sent.set(worker, tasks);
    worker.on('message', (reply: Reply) => {
      const pending = tasks.shift();
      if (tasks.length === 0) worker.unref();
      if (pending) {
        if ('error' in reply) pending.reject(new Error(`${options.name}: ${String(reply.error)}`));
        else pending.resolve(reply as Answer);
      }
      dispatch();
    });
    // The thread runs its tasks one at a time, in order: the first is the one it died in.
    const lost = (error: Error) => {
      const [running, ...unstarted] = tasks.splice(0);
      running?.reject(error);
      if (closed) for (const pending of unstarted) pending.reject(new Error(`${options.name} pool closed`));
      else queue.unshift(...unstarted);
    };
    worker.on('error', (error) => {
      // It exits next: nothing more is sent to it meanwhile.
      sent.delete(worker);
      lost(error);
      dispatch();
    });
    worker.on('exit', () => {
      lost(new Error(`${options.name} exited`));
      sent.delete(worker);
      if (!closed) spawn();
    });
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
      await Promise.all([...sent.keys()].map((worker) => worker.terminate()));
    },
  };
}
