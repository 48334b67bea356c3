// The engines' fair order of slices (src/engine-contract/fair-slices.ts): the next slice goes to the lane
// that has had least of the engine lately, by draws over its weight; interactive runs first in a lane.
import { describe, expect, it } from 'vitest';
import { makeFairSlices } from '../../src/engine-contract/fair-slices.js';

interface Named {
  draws: number;
  name: string;
}

/** `count` slices of `draws` each, named `${prefix}0`, `${prefix}1`, …. */
const slices = (prefix: string, count: number, draws = 10): Named[] =>
  Array.from({ length: count }, (_, i) => ({ draws, name: `${prefix}${i}` }));

const share = (lane: string, weight = 1, interactive = false) => ({ lane, weight, interactive });

/** Takes up to `n` slices' names. */
function take(queue: ReturnType<typeof makeFairSlices<Named>>, n = Number.POSITIVE_INFINITY): string[] {
  const names: string[] = [];
  while (names.length < n) {
    const slice = queue.next();
    if (slice === null) break;
    names.push(slice.name);
  }
  return names;
}

describe('fair slices', () => {
  it('gives a newly arrived lane the next slice, then turns by draws, however much another has waiting', () => {
    const queue = makeFairSlices<Named>();
    queue.add(share('A'), slices('a', 8));
    queue.add(share('A'), slices('x', 8));
    expect(take(queue, 3)).toEqual(['a0', 'a1', 'a2']);
    queue.add(share('B'), slices('b', 3));
    expect(take(queue)).toEqual([
      'b0',
      'a3',
      'b1',
      'a4',
      'b2',
      'a5',
      'a6',
      'a7',
      ...slices('x', 8).map((s) => s.name),
    ]);
    expect(queue.size()).toBe(0);
  });

  it('takes turns by draws, not by slices', () => {
    const queue = makeFairSlices<Named>();
    queue.add(share('A'), slices('a', 4, 30));
    queue.add(share('B'), slices('b', 8, 10));
    // A's slice of 30 draws is worth three of B's.
    expect(take(queue)).toEqual(['a0', 'b0', 'b1', 'b2', 'a1', 'b3', 'b4', 'b5', 'a2', 'b6', 'b7', 'a3']);
  });

  it('gives a lane of weight 2 twice the draws of a lane of weight 1 while both wait', () => {
    const queue = makeFairSlices<Named>();
    queue.add(share('plus', 1), slices('p', 4));
    queue.add(share('pro', 2), slices('q', 8));
    expect(take(queue)).toEqual(['p0', 'q0', 'q1', 'p1', 'q2', 'q3', 'p2', 'q4', 'q5', 'p3', 'q6', 'q7']);
  });

  it("does not bank a lane's idle time: it comes back at the present, not ahead of the others", () => {
    const queue = makeFairSlices<Named>();
    queue.add(share('B'), slices('b', 1));
    expect(take(queue)).toEqual(['b0']);
    queue.add(share('A'), slices('a', 20));
    expect(take(queue, 10)).toHaveLength(10);
    // B was idle while A ran ten slices: it gets the next turn, then one each, not ten in a row.
    queue.add(share('B'), slices('c', 3));
    expect(take(queue, 5)).toEqual(['c0', 'a10', 'c1', 'a11', 'c2']);
  });

  it("puts a lane's interactive runs ahead of its others, in the order they came", () => {
    const queue = makeFairSlices<Named>();
    queue.add(share('A'), slices('batch', 3));
    queue.add(share('A', 1, true), slices('i', 2));
    queue.add(share('A', 1, true), slices('j', 1));
    expect(take(queue)).toEqual(['i0', 'i1', 'j0', 'batch0', 'batch1', 'batch2']);
  });

  it("drops a run's slices not yet handed out, and peeks at what next() hands out", () => {
    const queue = makeFairSlices<Named>();
    const a = queue.add(share('A'), slices('a', 3));
    queue.add(share('B'), slices('b', 2));
    expect(queue.peek()?.name).toBe('a0');
    expect(take(queue, 2)).toEqual(['a0', 'b0']);
    a.drop();
    expect(queue.size()).toBe(1);
    expect(take(queue)).toEqual(['b1']);
    expect(queue.peek()).toBeNull();
  });
});
