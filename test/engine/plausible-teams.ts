// The plausible fixtures live in src/cli/gpu-check/plausible-teams.ts, beside the parity cases, where
// `matchsim gpu-check` (shipped code, which never imports tests) can use them too; the tests and
// benchmarks keep importing them here.
export * from '../../src/cli/gpu-check/plausible-teams.js';
