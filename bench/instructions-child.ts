// The process bench/instructions.ts runs under callgrind: one case's draws on this thread, `rounds` times
// after its compile. Usage: node dist/bench/instructions-child.js CASE DRAWS ROUNDS, CASE one of
// INSTRUCTION_CASES. It prints the counters' first words, so that a change that claims the same counters
// can be checked by eye between two runs.
import { simulateRange } from '../fallback/engine.js';
import { compileFixture } from '../src/engine/compile.js';
import { COUNTER_WORDS } from '../src/engine-contract/layout.js';
import type { MatchInputs } from '../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from '../test/engine/plausible-teams.js';
import { naiveDraws } from './engine.js';
import { INSTRUCTION_CASES } from './instructions.js';

function caseInputs(name: string): MatchInputs {
  if (name === 'pre-match') {
    return plausibleFixture(
      1,
      { teamId: 1, attack: 0.1, defence: 0.05 },
      { teamId: 2, attack: 0, defence: 0 },
    );
  }
  const fixture = plausibleFixture(
    52,
    { teamId: 1, attack: 0.1, defence: 0.05 },
    { teamId: 2, attack: 0, defence: 0 },
  );
  return {
    ...fixture,
    home: withAnnouncedLineup(fixture.home),
    away: withAnnouncedLineup(fixture.away),
    from_state: { minute: '60', score: { home: 1, away: 0 } },
  };
}

const [name = '', drawsText = '', roundsText = ''] = process.argv.slice(2);
const draws = Number(drawsText);
const rounds = Number(roundsText);
if (!(INSTRUCTION_CASES as readonly string[]).includes(name) || !(draws > 0) || !(rounds > 0)) {
  console.error(`usage: instructions-child.js (${INSTRUCTION_CASES.join(' | ')}) DRAWS ROUNDS`);
  process.exit(2);
}
if (name === 'naive') {
  let checksum = 0;
  for (let round = 0; round < rounds; round++) checksum += naiveDraws(draws);
  console.log(`checksum ${checksum}`);
} else {
  const compiled = compileFixture(caseInputs(name), defaultModelParams);
  const counters = new Uint32Array(COUNTER_WORDS);
  for (let round = 0; round < rounds; round++) {
    counters.fill(0);
    simulateRange(compiled, { lo: 0x5eed, hi: 0xbe7c }, 0, draws, counters);
  }
  console.log(`counters ${Array.from(counters.subarray(0, 8)).join(' ')}`);
}
