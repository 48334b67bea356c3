// Shared by every kernel: the run structs the host fills (layouts checked against
// src/engine-contract/layout.ts by test/gpu/buffer-layout.test.ts) and the counter-based generator of
// src/engine-contract/rng.ts.
// The host prepends the contract's constants (gpu/contract-constants.ts) to every kernel.

// One run = one fixture's draws [first_draw, first_draw + draw_count): the contract's RUN_SEED_LO,
// RUN_SEED_HI, RUN_FIRST_DRAW, RUN_DRAW_COUNT words, in that order. The seed words hold the generator
// key runKey(seed) (src/engine-contract/rng.ts), which the host computes.
struct RunParams {
  seed_lo: u32,
  seed_hi: u32,
  first_draw: u32,
  draw_count: u32,
}

// A run packed into a dispatch: where its workgroups start and where its tables and counters lie in the
// shared buffers (offsets in 32-bit words).
struct PackedRun {
  run: RunParams,
  first_workgroup: u32,
  fixture_offset: u32,
  event_table_offset: u32,
  counter_offset: u32,
}

// Binding 0 of the match kernel.
struct DispatchParams {
  run_count: u32,
  workgroup_count: u32,
  _pad0: u32,
  _pad1: u32,
}

// pcg4d (Jarzynski & Olano, JCGT 9(3), 2020), bit for bit the same as src/engine-contract/rng.ts:
// wrapping u32 multiply-adds, which WGSL's `*` and `+` are.
fn pcg4d(input: vec4<u32>) -> vec4<u32> {
  var v = input * 1664525u + 1013904223u;
  v.x += v.y * v.w;
  v.y += v.z * v.x;
  v.z += v.x * v.y;
  v.w += v.y * v.z;
  v = v ^ (v >> vec4<u32>(16u));
  v.x += v.y * v.w;
  v.y += v.z * v.x;
  v.z += v.x * v.y;
  v.w += v.y * v.z;
  return v;
}

// src/engine-contract/rng.ts scaleToRange: a uniform integer in [0, total) for total < 2^16.
fn scale_to_range(u: u32, total: u32) -> u32 {
  return ((u >> 16u) * total) >> 16u;
}
