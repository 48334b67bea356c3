// The `postgres` client 3.4.9 runs with fixes the service depends on (patches/postgres+3.4.9.patch,
// applied by patch-package at `npm install`; why each, and when they can go: docs/ARCHITECTURE.md "The
// patched driver"). An install that skipped them (`npm install --ignore-scripts`, a copied node_modules)
// would run with lost answers and stuck transactions under faults, silently: the service refuses to
// open its database instead, naming what is missing. Each fix leaves a marker comment in the file it
// changes, read here from the files that `import 'postgres'` loads.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface DriverFix {
  file: 'connection.js' | 'queue.js';
  marker: string;
  /** What goes wrong without it, and the upstream issues. */
  fixes: string;
}

export const DRIVER_FIXES: readonly DriverFix[] = [
  {
    file: 'connection.js',
    marker: 'matchsim: socket closed after this write was buffered',
    fixes: 'a timer throws on a closed socket (porsager/postgres#1154, #1066, #1208)',
  },
  {
    file: 'connection.js',
    marker: 'matchsim: reserve the connection of a BEGIN even when the pipeline is full',
    fixes: 'BEGIN skipped on a full pipeline (porsager/postgres#1189)',
  },
  {
    file: 'connection.js',
    marker: 'matchsim: the connection answers its own loss',
    fixes: "an unhandled rejection of the array types' fetch (porsager/postgres#1192, #1205)",
  },
  {
    file: 'connection.js',
    marker: 'matchsim: a closed connection answers every query it holds',
    fixes: "a closed connection's queries never answered (porsager/postgres#1142, #1186, #1215)",
  },
  {
    file: 'connection.js',
    marker: 'matchsim: nothing of a lost answer reaches the next query',
    fixes: 'the parse state of a closed connection reaching its next query (porsager/postgres#1223)',
  },
  {
    file: 'connection.js',
    marker: "matchsim: a failed query's rows do not reach the next one",
    fixes: "a failed query's rows at the front of the next result (porsager/postgres#1119, #1181)",
  },
  {
    file: 'queue.js',
    marker: 'matchsim: scan and keep the live part only',
    fixes: "the pool's connection queue growing by one hole per query",
  },
];

/** The folder of the driver's modules that `import 'postgres'` loads (its ESM build, src/). */
export function loadedDriverFolder(): string {
  return path.dirname(fileURLToPath(import.meta.resolve('postgres')));
}

/** The fixes whose marker is absent from the driver files in `folder`. */
export function missingDriverFixes(folder: string): DriverFix[] {
  const sources = new Map<string, string>();
  const source = (file: string) => {
    if (!sources.has(file)) sources.set(file, readFileSync(path.join(folder, file), 'utf8'));
    return sources.get(file)!;
  };
  return DRIVER_FIXES.filter((fix) => !source(fix.file).includes(fix.marker));
}

/** Throws, naming each missing fix and how to apply them, unless the driver in `folder` has them all. */
export function assertDriverFixed(folder: string = loadedDriverFolder()): void {
  const missing = missingDriverFixes(folder);
  if (missing.length === 0) return;
  throw new Error(
    `the postgres client in ${folder} lacks ${missing.length} of the fixes in patches/postgres+3.4.9.patch ` +
      `(${missing.map((fix) => fix.fixes).join('; ')}). Install without --ignore-scripts ` +
      '(`npm ci` applies them with patch-package), or run `npx patch-package`; see docs/ARCHITECTURE.md.',
  );
}
