// The fixes of patches/postgres+3.4.9.patch in the `postgres` client the service loads, the start-up
// refusal of a driver without them, and the pool's connection queue patched for its growth still
// behaving as a queue.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  assertDriverFixed,
  DRIVER_FIXES,
  loadedDriverFolder,
  missingDriverFixes,
} from '../../src/db/driver-fixes.js';

const esmSource = loadedDriverFolder();
const patchFile = path.resolve('patches/postgres+3.4.9.patch');

interface Queue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T;
  remove(x: T): T | null;
}

describe('postgres client patches', () => {
  it('are in the build that `import postgres` loads (its ESM build, src/)', () => {
    expect(path.relative(path.resolve('node_modules'), esmSource)).toBe(path.join('postgres', 'src'));
    expect(missingDriverFixes(esmSource)).toEqual([]);
    expect(() => assertDriverFixed()).not.toThrow();
  });

  it('are refused when missing, as after `npm install --ignore-scripts`: the start names each fix', () => {
    // The driver as npm unpacks it: the loaded files with the patch taken back out.
    const install = mkdtempSync(path.join(tmpdir(), 'matchsim-driver-'));
    try {
      const unpatched = path.join(install, 'node_modules', 'postgres', 'src');
      cpSync(esmSource, unpatched, { recursive: true });
      execFileSync('git', ['apply', '--reverse', patchFile], { cwd: install });
      expect(missingDriverFixes(unpatched)).toEqual(DRIVER_FIXES);
      expect(() => assertDriverFixed(unpatched)).toThrow(
        /lacks 7 of the fixes in patches\/postgres\+3\.4\.9\.patch .*porsager\/postgres#1119, #1181.*npm ci/,
      );
    } finally {
      rmSync(install, { recursive: true, force: true });
    }
  });

  it("leave the connection queue a queue: the same answers as an array, over the pool's moves", async () => {
    const { default: makeQueue } = (await import(path.join(esmSource, 'queue.js'))) as {
      default: <T>(initial?: T[]) => Queue<T>;
    };
    const queue = makeQueue<number>();
    const model: number[] = [];
    // A deterministic mix of the pool's operations: a busy connection taken and put back (shift, push),
    // moves between queues (remove, push), and removals of connections not in the queue.
    let state = 12345;
    const next = () => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state;
    };
    let fresh = 0;
    for (let step = 0; step < 20_000; step++) {
      const roll = next() % 10;
      // The first 300 steps fill the queue, so that the rest runs on a queue that never empties.
      if (step < 300 || roll < 4 || model.length === 0) {
        const cycle = step >= 300 && roll < 2;
        const x = cycle ? model[0]! : fresh++;
        if (cycle) {
          expect(queue.shift()).toBe(model.shift());
        }
        queue.push(x);
        model.push(x);
      } else if (roll < 6) {
        expect(queue.shift()).toBe(model.shift());
      } else {
        const x = next() % 2 === 0 && model.length > 0 ? model[next() % model.length]! : -1 - step;
        const at = model.indexOf(x);
        if (at >= 0) model.splice(at, 1);
        expect(queue.remove(x)).toBe(at >= 0 ? x : null);
      }
      expect(queue.length).toBe(model.length);
    }
  });
});
