// The counter-based generator shared with shaders/: pcg4d (Jarzynski & Olano, "Hash Functions for GPU
// Rendering", JCGT 9(3), 2020). Every random number is a pure function of (draw, stream, seed), so any
// split of draws across threads, workers or GPU invocations yields the same numbers.
//
// Why pcg4d and not Philox4x32-10: the whole per-draw loop must be u32 arithmetic that WGSL reproduces
// bit for bit. pcg4d is 24 wrapping multiply-adds and one xor-shift (Math.imul here, u32 `*` in WGSL);
// Philox needs the high half of 32x32 products, which WGSL lacks and JavaScript builds from 16-bit
// halves: measured on this machine about 6x slower per call (0.4-0.9 s against pcg4d's 0.21 s on llvmpipe). Jarzynski & Olano report pcg4d
// passing TestU01 BigCrush as a hash of sequential inputs; test/engine/rng.test.ts checks the known-answer
// vectors, lane and stream independence and uniformity of the way the engine keys it.

/**
 * The random stream's number: which random words the per-draw loop reads for which decision (the stream
 * ids below and how each word is used), in both engines. A change of it changes a run's bits for the same
 * seed, so it is a new model version (docs/decisions.md §13, "Changelog of model versions"): the model's
 * parameters name the stream they were versioned with (model-params.ts `engine_stream`), the shipped
 * parameters must name this one, and the golden digests (test/engine/golden.test.ts) are regenerated in
 * the same commit.
 */
export const ENGINE_STREAM = 2;

/** Stream ids (the second input word). Steps 0..109 use their own index. */
// Known weakness, measured in test/engine/rng.test.ts: the lowest 3 bits of each word are slightly
// correlated between neighbouring keys (draw, step or seed +1). The engine never uses them on their
// own: decisions compare whole words (`u < threshold`; a goal's assist word is 31 bits shifted up, its
// lowest bits weigh 2^-29), picks use 16 bits as the top of a word (an assist pick the low half of the
// pick word, whose lowest 3 bits move the pick by under 2^-13 of the total weight), the order of the
// sides in a step uses bit 31, and a run keys the generator with runKey(seed), not the raw seed.
/**
 * + step: the assist decision of a goal scored in that step, in the per-step reference
 * (test/engine/per-step-reference.ts) and in stream 1; the engines' stream 2 takes a goal's assist words
 * from its search (STREAM_EVENT_BASE).
 */
export const STREAM_ASSIST_BASE = 0x100;
export const STREAM_SETUP_LINEUPS = 0x200; // predicted XIs (goalkeeper and outfield offsets of each side)
export const STREAM_SETUP_ADDED_TIME = 0x201; // added minutes of each half (words 0, 1); word 2: the shot dither
/**
 * The event-driven sampler's searches: side s's n-th search for its next event uses stream
 * STREAM_EVENT_BASE + s * STREAM_EVENT_SIDE_STRIDE + n (word 0: the hazard budget, 1: the event kind,
 * 2: the player pick by its top 16 bits and, for a goal, the assist provider by its low 16 bits, 3: bit 31
 * orders the sides when both have an event in the same step, and for a goal bits 0-30, shifted up by one,
 * are the assist decision's word; stream 2 reads a goal's assist from these words where stream 1 drew
 * them from STREAM_ASSIST_BASE + step, one generator call per goal fewer, none in a goal's branch). A side
 * searches at most once per own event, once per cell change by the opponent and once at kick-off (a
 * budget left at the end of the first half carries over to the second), far below the stride.
 */
export const STREAM_EVENT_BASE = 0x400;
export const STREAM_EVENT_SIDE_STRIDE = 0x400;

/**
 * pcg4d on (x, y, z, w), writing the four output words into `out` (no allocation in the hot loop).
 * The engine keys it as (draw, stream, seed low word, seed high word).
 */
export function pcg4d(x: number, y: number, z: number, w: number, out: Uint32Array): void {
  let a = (Math.imul(x, 1664525) + 1013904223) | 0;
  let b = (Math.imul(y, 1664525) + 1013904223) | 0;
  let c = (Math.imul(z, 1664525) + 1013904223) | 0;
  let d = (Math.imul(w, 1664525) + 1013904223) | 0;
  a = (a + Math.imul(b, d)) | 0;
  b = (b + Math.imul(c, a)) | 0;
  c = (c + Math.imul(a, b)) | 0;
  d = (d + Math.imul(b, c)) | 0;
  a ^= a >>> 16;
  b ^= b >>> 16;
  c ^= c >>> 16;
  d ^= d >>> 16;
  a = (a + Math.imul(b, d)) | 0;
  b = (b + Math.imul(c, a)) | 0;
  c = (c + Math.imul(a, b)) | 0;
  d = (d + Math.imul(b, c)) | 0;
  out[0] = a;
  out[1] = b;
  out[2] = c;
  out[3] = d;
}

/** Words mixing a run's seed: "matc" "hsim". */
const RUN_KEY_TAG_Z = 0x6d617463;
const RUN_KEY_TAG_W = 0x6873696d;

/**
 * The key words the per-draw loop passes as (z, w): the seed hashed once, so that neighbouring seeds
 * give unrelated streams. Host-side; the GPU receives these words in its run parameters.
 */
export function runKey(seed: { lo: number; hi: number }): { lo: number; hi: number } {
  const out = new Uint32Array(4);
  pcg4d(seed.lo, seed.hi, RUN_KEY_TAG_Z, RUN_KEY_TAG_W, out);
  return { lo: out[0]!, hi: out[1]! };
}

/**
 * A uniform integer in [0, total) from the top 16 bits of `u`, for `total` < 2^16: the product stays
 * below 2^32, so WGSL computes the same value with a plain u32 multiply.
 */
export function scaleToRange(u: number, total: number): number {
  return ((u >>> 16) * total) >>> 16;
}
