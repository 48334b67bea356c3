// The plausible fixtures moved to src/engine/plausible-teams.ts, where `matchsim gpu-check` (shipped
// code, which never imports tests) can use them too; the tests and benchmarks keep importing them here.
export * from '../../src/engine/plausible-teams.js';
