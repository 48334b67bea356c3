// Where the football data lives: `../shared/data` beside the checkout unless the caller passes another
// folder (the CLI reads its environment variable and hands the value in; library code reads no env).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root: the nearest folder above this module holding package.json (works from dist/ too). */
export function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above model/');
    dir = parent;
  }
  return dir;
}

export function resolveDataDir(override?: string): string {
  if (override) return resolve(override);
  return resolve(repositoryRoot(), '..', 'shared', 'data');
}
