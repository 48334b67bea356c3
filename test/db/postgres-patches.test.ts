// The fixes scripts/patch-postgres.mjs applies to the installed `postgres` client: present in every build
// of the package, and the pool's connection queue patched for its growth still behaves as a queue.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const esmSource = path.dirname(fileURLToPath(import.meta.resolve('postgres')));
const packageRoot = path.resolve(esmSource, '..');

interface Queue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T;
  remove(x: T): T | null;
}

describe('postgres client patches', () => {
  it('are applied to the ESM, CommonJS and Workers builds', () => {
    for (const dir of ['src', 'cjs/src', 'cf/src']) {
      const connection = readFileSync(path.join(packageRoot, dir, 'connection.js'), 'utf8');
      const queue = readFileSync(path.join(packageRoot, dir, 'queue.js'), 'utf8');
      expect(connection).toContain('matchsim: socket closed after this write was buffered');
      expect(connection).toContain('matchsim: reserve the connection of a BEGIN');
      expect(connection).toContain('matchsim: the connection answers its own loss');
      expect(connection).toContain('matchsim: a closed connection answers every query it holds');
      expect(connection).toContain('matchsim: nothing of a lost answer reaches the next query');
      expect(queue).toContain('matchsim: scan and keep the live part only');
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
