// A job thread (job-threads.ts): compiles inputs, runs small jobs whole, and builds documents, so that
// this host work of many jobs runs on all cores at once instead of on the event loop. It keeps nothing:
// compiled fixtures live on shared memory in the pool's cache, and every task carries what it needs.
import { parentPort, workerData } from 'node:worker_threads';
import type { SlotTables } from './compiled-slots.js';
import {
  adoptCompiled,
  compileAndRunWhole,
  compileShared,
  finishJob,
  type HostJob,
  type JobWorkSetting,
  type RunFacts,
  runWholeJob,
  type SharedCompiled,
} from './job-work.js';

export type JobThreadTask =
  | { taskId: number; kind: 'compile'; job: HostJob; tables: SlotTables }
  | { taskId: number; kind: 'compile-whole'; job: HostJob; tables: SlotTables; backend: string }
  | { taskId: number; kind: 'whole'; job: HostJob; compiled: SharedCompiled; backend: string }
  | {
      taskId: number;
      kind: 'finish';
      job: HostJob;
      compiled: SharedCompiled;
      counts: Uint32Array;
      run: RunFacts;
    };

export type JobThreadReply = { taskId: number; value: unknown } | { taskId: number; error: string };

const setting = workerData as JobWorkSetting;

function perform(task: JobThreadTask): unknown {
  switch (task.kind) {
    case 'compile':
      return compileShared(task.job.inputs, setting.params, task.tables);
    case 'compile-whole':
      return compileAndRunWhole(setting, task.job, task.tables, task.backend);
    case 'whole':
      return runWholeJob(setting, task.job, adoptCompiled(task.compiled), task.backend);
    case 'finish':
      return finishJob(setting, task.job, adoptCompiled(task.compiled), task.counts, task.run);
  }
}

const port = parentPort;
if (port === null) throw new Error('job-thread.ts runs only as a worker thread');
port.on('message', (task: JobThreadTask) => {
  try {
    port.postMessage({ taskId: task.taskId, value: perform(task) } satisfies JobThreadReply);
  } catch (error) {
    port.postMessage({ taskId: task.taskId, error: String(error) } satisfies JobThreadReply);
  }
});
