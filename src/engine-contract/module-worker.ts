// Starting a worker thread on a module of the engine: the compiled .js beside the caller in dist/, or under
// tsx/vitest the .ts source, loaded through tsx's module hooks registered inside the worker (Node's
// workers ignore `--import` in execArgv). The CPU pool (fallback/cpu-engine.ts) and the job threads
// (src/engine/job-threads.ts) start theirs here; a projection's seasons and an operator's simulation run
// one task each on a thread of its own (runOnThread).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** A worker on `name` (without extension) in the folder of `callerUrl` (the caller's import.meta.url). */
export function startModuleWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), options);
  const source = new URL(`./${name}.ts`, callerUrl).href;
  // tsx's ESM API ("tsx/esm/api" in its exports map), located from this file so any cwd works.
  const tsxApi = pathToFileURL(
    join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs'),
  ).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/**
 * One task on a thread of its own, started on `name` as startModuleWorker does: posts `task` and resolves
 * with the thread's answer's `key` (the thread answers `{ [key]: value }` or `{ error }` once), or rejects;
 * the thread is ended when it answers. `what` names the thread in errors ("the season thread …").
 */
export function runOnThread<T>(
  callerUrl: string,
  name: string,
  task: unknown,
  answer: { key: string; what: string },
): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = startModuleWorker(callerUrl, name);
    const finish = () => void worker.terminate();
    worker.once('message', (message: Record<string, unknown> & { error?: string }) => {
      finish();
      if (message[answer.key] !== undefined) resolve(message[answer.key] as T);
      else reject(new Error(message.error ?? `the ${answer.what} thread answered nothing`));
    });
    worker.once('error', (error) => {
      finish();
      reject(error);
    });
    worker.once('exit', (code) => reject(new Error(`the ${answer.what} thread exited with code ${code}`)));
    worker.postMessage(task);
  });
}
