// Starting a worker thread on a module of the engine: the compiled .js beside the caller in dist/, or under
// tsx/vitest the .ts source, loaded through tsx's module hooks registered inside the worker (Node's
// workers ignore `--import` in execArgv). The CPU pool (fallback/cpu-engine.ts) and the job threads
// (src/engine/job-threads.ts) start theirs here.
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
