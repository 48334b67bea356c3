import { describe, expect, it } from 'vitest';
import {
  pcg4d,
  runKey,
  STREAM_ASSIST_BASE,
  STREAM_SETUP_LINEUPS,
  scaleToRange,
} from '../../src/engine-contract/rng.js';

const TWO_32 = 2n ** 32n;

/** pcg4d written from the paper's GLSL with BigInt arithmetic: an independent reference. */
function referencePcg4d(input: readonly number[]): number[] {
  let v = input.map((x) => (BigInt(x) * 1664525n + 1013904223n) % TWO_32);
  const round = () => {
    v[0] = (v[0]! + v[1]! * v[3]!) % TWO_32;
    v[1] = (v[1]! + v[2]! * v[0]!) % TWO_32;
    v[2] = (v[2]! + v[0]! * v[1]!) % TWO_32;
    v[3] = (v[3]! + v[1]! * v[2]!) % TWO_32;
  };
  round();
  v = v.map((x) => x ^ (x >> 16n));
  round();
  return v.map(Number);
}

function hash(x: number, y: number, z: number, w: number): number[] {
  const out = new Uint32Array(4);
  pcg4d(x, y, z, w, out);
  return Array.from(out);
}

describe('pcg4d', () => {
  // Known answers, shared with the WGSL port's test (computed by the BigInt reference above).
  it.each([
    [
      [0, 0, 0, 0],
      [0x0f02f829, 0x2d568769, 0x32b0c43b, 0xd32548ea],
    ],
    [
      [1, 2, 3, 4],
      [0x3622cd16, 0xf11471d8, 0xe1109b3f, 0x02b94c2f],
    ],
    [
      [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
      [0x974ed892, 0xc015dc67, 0x9f955760, 0xa1bba208],
    ],
    [
      [123456, 45, 0xdeadbeef, 0x01234567],
      [0x0109bd0a, 0x970fac35, 0x3b395092, 0xddb5a69f],
    ],
  ])('gives the known answer for %j', (input, expected) => {
    expect(hash(input[0]!, input[1]!, input[2]!, input[3]!)).toEqual(expected);
  });

  it('matches the BigInt reference on many inputs', () => {
    let state = 12345;
    for (let i = 0; i < 2000; i++) {
      const input = [0, 1, 2, 3].map(() => {
        state = (Math.imul(state, 747796405) + 2891336453) >>> 0;
        return state;
      });
      expect(hash(input[0]!, input[1]!, input[2]!, input[3]!)).toEqual(referencePcg4d(input));
    }
  });

  /** Chi-square statistic of `samples` values bucketed by their top 6 bits (64 buckets). */
  function chiSquare(values: Iterable<number>): number {
    const buckets = new Array<number>(64).fill(0);
    let n = 0;
    for (const value of values) {
      buckets[value >>> 26]!++;
      n++;
    }
    const expected = n / 64;
    return buckets.reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
  }
  // 63 degrees of freedom: the 99.99th percentile is about 117.
  const CHI_SQUARE_LIMIT = 117;

  it('is uniform in every word when keyed as the engine keys it (draw, step, seed)', () => {
    for (let word = 0; word < 4; word++) {
      const byDraw = function* () {
        for (let draw = 0; draw < 100_000; draw++) yield hash(draw, 17, 0x1234, 0x5678)[word]!;
      };
      const byStep = function* () {
        for (let draw = 0; draw < 1000; draw++) {
          for (let step = 0; step < 110; step++) yield hash(draw, step, 99, 0)[word]!;
        }
      };
      expect(chiSquare(byDraw())).toBeLessThan(CHI_SQUARE_LIMIT);
      expect(chiSquare(byStep())).toBeLessThan(CHI_SQUARE_LIMIT);
    }
  });

  it('gives independent words where the engine reads them (bits 3..31; runKey-mixed seeds)', () => {
    const n = 50_000;
    const used = 0xfffffff8; // the lowest 3 bits are weak between neighbouring keys (see rng.ts)
    const agreements = new Array<number>(6).fill(0);
    const popcount = (x: number) => {
      let v = x >>> 0;
      let bits = 0;
      while (v !== 0) {
        bits += v & 1;
        v >>>= 1;
      }
      return bits;
    };
    const key = runKey({ lo: 7, hi: 11 });
    const neighbourKey = runKey({ lo: 8, hi: 11 });
    for (let draw = 0; draw < n; draw++) {
      const here = hash(draw, 3, key.lo, key.hi);
      const nextDraw = hash(draw + 1, 3, key.lo, key.hi);
      const nextStep = hash(draw, 4, key.lo, key.hi);
      const nextSeed = hash(draw, 3, neighbourKey.lo, neighbourKey.hi);
      const assist = hash(draw, STREAM_ASSIST_BASE + 3, key.lo, key.hi);
      agreements[0]! += 29 - popcount((here[0]! ^ here[1]!) & used);
      agreements[1]! += 29 - popcount((here[2]! ^ here[3]!) & used);
      agreements[2]! += 29 - popcount((here[0]! ^ nextDraw[0]!) & used);
      agreements[3]! += 29 - popcount((here[1]! ^ nextStep[1]!) & used);
      agreements[4]! += 29 - popcount((here[0]! ^ nextSeed[0]!) & used);
      agreements[5]! += 29 - popcount((here[1]! ^ assist[1]!) & used);
    }
    // 1.45M bit comparisons each: the standard deviation of the share is 0.0004.
    for (const agreement of agreements) expect(Math.abs(agreement / (29 * n) - 0.5)).toBeLessThan(0.002);
  });

  it('separates the set-up streams from the step streams', () => {
    expect(hash(5, STREAM_SETUP_LINEUPS, 1, 2)).not.toEqual(hash(5, 0, 1, 2));
    expect(STREAM_SETUP_LINEUPS).toBeGreaterThan(STREAM_ASSIST_BASE + 110);
  });
});

describe('scaleToRange', () => {
  it('maps the full u32 range onto [0, total) with 16-bit products only', () => {
    for (const total of [1, 2, 7, 4095, 45_045, 65_535]) {
      expect(scaleToRange(0, total)).toBe(0);
      expect(scaleToRange(0xffffffff, total)).toBe(total - 1);
      expect((0xffff * total) / 2 ** 32).toBeLessThan(1); // the product fits in a u32
    }
  });

  it('is close to uniform', () => {
    const counts = new Array<number>(7).fill(0);
    for (let i = 0; i < 70_000; i++) counts[scaleToRange(hash(i, 0, 0, 0)[0]!, 7)]!++;
    for (const count of counts) expect(Math.abs(count - 10_000)).toBeLessThan(450);
  });
});
