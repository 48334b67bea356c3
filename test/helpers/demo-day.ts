// The day the demo's readers run on. The demo is the same on every day but its dates (docs/decisions.md
// §8), so the tests that read it pass on any day; CI runs them on another day too, by setting
// DEMO_CLOCK_OFFSET_SECONDS (.ci/run), which the demo service and the CLI on the demo take as the
// service's CLOCK_OFFSET_SECONDS. Only these helpers read it: other tests keep the host's clock.

/** CLOCK_OFFSET_SECONDS for a service or CLI on the demo; empty (unset) on the host's day. */
export function demoClockOffset(): string {
  return process.env.DEMO_CLOCK_OFFSET_SECONDS ?? '';
}
