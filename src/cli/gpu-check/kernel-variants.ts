// `gpu-check --tune`'s look inside the match kernel, for GPU hosts without hardware counters (Dawn runs
// Vulkan pipelines that no NVIDIA profiler reads): the kernel with one stage left out at a time, timed on
// the same million draws as the whole kernel, so the difference is roughly that stage's cost (roughly:
// a variant also changes the compiler's register allocation, and leaving out a match event changes the
// draws after it); an alternative kernel source (`--compare-kernel FILE`, say the shaders/match.wgsl of
// an earlier commit) timed and checked for identical counters; and the kernel with Dawn's robustness
// transform (a bounds clamp on every array access) turned off. docs/gpu.md "Tuning on the H200" has
// what these showed.

/** A rewrite of the kernel's source that leaves one stage out. */
export interface StageVariant {
  stage: string;
  /** What the variant does instead. */
  instead: string;
  /** The text replaced in shaders/match.wgsl, and what replaces it. */
  from: string;
  to: string;
}

/**
 * The stages left out. Each `from` must occur exactly once in shaders/match.wgsl (a test checks it).
 * Early returns are guarded by a condition the compiler cannot prove (a random word is never 12345
 * here in practice), so the code after them stays and WGSL's rules on unreachable code hold.
 */
export const STAGE_VARIANTS: readonly StageVariant[] = [
  {
    stage: 'events',
    instead: 'no match events: set-up and tally only',
    from: 'let half_time = play_events(draw, FIRST_HALF_ADDED_START + added.x, SECOND_HALF_ADDED_START + added.y);',
    to: 'let half_time = vec2<i32>(i32(added.x + (event_table(added.y) & 0u)), i32(added.y));',
  },
  {
    stage: 'play_event',
    instead: 'events searched but not played (no scorers, cards or substitutions)',
    from: 'play_event(side, pending_kind[side], at, pending_pick[side], pending_order[side], step);',
    to: 'count(C_STEP_GOALS + (at & 63u));',
  },
  {
    stage: 'goal',
    instead: 'a goal event does nothing',
    from: '  if (kind == 0u) {\n',
    to: '  if (kind == 0u) {\n    if (u != 12345u) {\n      return;\n    }\n',
  },
  {
    stage: 'card',
    instead: 'a card event does nothing',
    from: '  } else if (kind <= 2u) {\n',
    to: '  } else if (kind <= 2u) {\n    if (u != 12345u) {\n      return;\n    }\n',
  },
  {
    stage: 'substitution',
    instead: 'a substitution event does nothing',
    from: '  } else {\n    // MAX_APPEARANCES',
    to: '  } else {\n    if (u != 12345u) {\n      return;\n    }\n    // MAX_APPEARANCES',
  },
  {
    stage: 'substitute',
    instead:
      'no substitute comes on (they are still found at set-up, and the player to come off is still picked)',
    from: '    if (subs_used[side] < sub_found[side]) {\n',
    to: '    if (subs_used[side] < sub_found[side] && u == 12345u) {\n',
  },
  {
    stage: 'leave_pitch',
    instead: 'a player leaving the pitch closes no shot segment and counts no shots or minutes',
    from: 'fn leave_pitch(side: u32, slot: u32, step: u32) {\n',
    to: 'fn leave_pitch(side: u32, slot: u32, step: u32) {\n  if (slot != 12345u) {\n    return;\n  }\n',
  },
  {
    stage: 'assist',
    instead: 'no assist is picked',
    from: 'fn pick_assist(side: u32, scorer: i32, u: u32) -> i32 {\n',
    to: 'fn pick_assist(side: u32, scorer: i32, u: u32) -> i32 {\n  if (u != 12345u) {\n    return NO_SLOT;\n  }\n',
  },
  {
    stage: 'tally',
    instead: 'the finished draw is not tallied',
    from: '  tally_draw(half_time.x, half_time.y);\n}',
    to: '  count(u32(half_time.x + half_time.y) & 7u);\n}',
  },
  {
    stage: 'flush',
    instead: "a workgroup's histogram is not added to the counters",
    from: 'for (var i = local_index; i < COUNTER_WORDS; i += WORKGROUP_SIZE) {',
    to: 'for (var i = local_index; i < 1u; i += WORKGROUP_SIZE) {',
  },
];

/** The kernel's source with the variant's stage left out; throws if the kernel no longer has its text. */
export function withoutStage(source: string, variant: StageVariant): string {
  const at = source.indexOf(variant.from);
  if (at < 0 || source.indexOf(variant.from, at + 1) >= 0) {
    throw new Error(`stage ${variant.stage}: its text is not in the kernel exactly once`);
  }
  return source.replace(variant.from, variant.to);
}
