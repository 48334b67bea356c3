// Known-answer kernel for the generator: one pcg4d call and one scale_to_range per invocation, so tests
// can compare the WGSL port with src/engine-contract/rng.ts word for word.

struct RngParams {
  count: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: RngParams;
@group(0) @binding(1) var<storage, read> inputs: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> words: array<vec4<u32>>;
// scale_to_range(input.x, input.y & 0xFFFF): the integer picks of the engine.
@group(0) @binding(3) var<storage, read_write> scaled: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x >= params.count) {
    return;
  }
  let input = inputs[id.x];
  words[id.x] = pcg4d(input);
  scaled[id.x] = scale_to_range(input.x, input.y & 0xFFFFu);
}
