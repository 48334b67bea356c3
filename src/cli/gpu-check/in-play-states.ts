// Random in-play states of a fixture, consistent by construction (docs/model.md "In play"): a minute of
// the timeline, a score, and for a side with a known XI substitutions (off from the pitch, on from the
// rest of the squad), players sent off from the pitch and players booked on it; a predicted side gets red
// cards by count. For the GPU parity cases (parity-cases.ts) and the engine's property test.
import { minuteLabel, SECOND_HALF_START, STEPS } from '../../engine-contract/layout.js';
import type { FromState, MatchInputs, SideInputs } from '../../engine-contract/match-inputs.js';

const pickOne = <T>(items: readonly T[], uniform: () => number): T =>
  items[Math.floor(uniform() * items.length)]!;

function sideState(side: SideInputs, uniform: () => number, maxSubstitutions: number) {
  if (side.lineup.source === 'predicted') return { reds: Math.floor(uniform() * 2), named: null };
  const pitch = [...side.lineup.xi];
  const unused = side.players.map((p) => p.player_id).filter((id) => !pitch.includes(id));
  const substitutions: { off: number; on: number }[] = [];
  const subs = Math.floor(uniform() * (maxSubstitutions + 1));
  for (let i = 0; i < subs && unused.length > 0; i++) {
    const at = Math.floor(uniform() * pitch.length);
    const on = unused.splice(Math.floor(uniform() * unused.length), 1)[0]!;
    substitutions.push({ off: pitch[at]!, on });
    pitch[at] = on;
  }
  const sentOff: number[] = [];
  for (let i = 0; i < Math.floor(uniform() * 3); i++) {
    const id = pickOne(pitch, uniform);
    sentOff.push(id);
    pitch.splice(pitch.indexOf(id), 1);
  }
  const booked = pitch.filter(() => uniform() < 0.2);
  return { reds: sentOff.length + (uniform() < 0.2 ? 1 : 0), named: { substitutions, sentOff, booked } };
}

/** A random state of `inputs` (whose sides it reads): every field possible, none contradicting another. */
export function randomInPlayState(
  inputs: MatchInputs,
  uniform: () => number,
  maxSubstitutions = 5,
): FromState {
  const home = sideState(inputs.home, uniform, maxSubstitutions);
  const away = sideState(inputs.away, uniform, maxSubstitutions);
  const step = Math.floor(uniform() * STEPS);
  const score = { home: Math.floor(uniform() * 4), away: Math.floor(uniform() * 4) };
  const halfTime =
    step >= SECOND_HALF_START && uniform() < 0.5
      ? { home: Math.floor(uniform() * (score.home + 1)), away: Math.floor(uniform() * (score.away + 1)) }
      : null;
  return {
    minute: minuteLabel(step),
    score,
    ...(halfTime ? { half_time: halfTime } : {}),
    red_cards: { home: home.reds, away: away.reds },
    sent_off: { home: home.named?.sentOff ?? [], away: away.named?.sentOff ?? [] },
    substitutions: { home: home.named?.substitutions ?? [], away: away.named?.substitutions ?? [] },
    booked: { home: home.named?.booked ?? [], away: away.named?.booked ?? [] },
  };
}
