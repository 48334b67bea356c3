// A job thread (job-threads.ts): compiles inputs, runs small jobs whole, and builds documents, so that
// this host work of many jobs runs on all cores at once instead of on the event loop. It keeps only its
// scratch (job-work.ts JobScratch: the calibrations of the fixtures it compiled): compiled fixtures live on shared memory in the
// pool's cache, and every task carries what it needs.
import { parentPort, workerData } from 'node:worker_threads';
import { createJobScratch, type JobTask, type JobWorkSetting, performJobTask } from './job-work.js';

export type JobThreadTask = JobTask & { taskId: number };

export type JobThreadReply = { taskId: number; value: unknown } | { taskId: number; error: string };

const setting = workerData as JobWorkSetting;
/** This thread's own: what it keeps from job to job (calibrations). */
const scratch = createJobScratch();

const port = parentPort;
if (port === null) throw new Error('job-thread.ts runs only as a worker thread');
port.on('message', (task: JobThreadTask) => {
  try {
    port.postMessage({
      taskId: task.taskId,
      value: performJobTask(setting, scratch, task),
    } satisfies JobThreadReply);
  } catch (error) {
    port.postMessage({ taskId: task.taskId, error: String(error) } satisfies JobThreadReply);
  }
});
