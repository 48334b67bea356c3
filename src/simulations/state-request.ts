// A request's in-play state (docs/api.md §4.3, "In play"), checked against its fixture before anything is
// held: the compile's own check (src/engine/compile-state.ts stateIssues) and, for a finished fixture,
// its final score, which goals already scored cannot exceed. The first issue answers 400
// parameter_invalid naming its field.
import { addedTimeModel } from '../engine/compile-rates.js';
import { type StateIssue, stateIssues } from '../engine/compile-state.js';
import { type MatchInputs, paramsForFixture } from '../engine-contract/match-inputs.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import { ApiError } from '../errors.js';
import type { FixtureRecord } from '../fixtures/fixture-record.js';

const join = (prefix: string, field: string) => (prefix ? `${prefix}.${field}` : field);

/** What makes the inputs' state impossible for this fixture, each with its field (empty: none). */
export function fromStateIssues(
  match: MatchInputs,
  fixture: Pick<FixtureRecord, 'state' | 'score'>,
  params: ModelParams,
): StateIssue[] {
  const state = match.from_state;
  if (!state) return [];
  const issues = stateIssues(match, params, addedTimeModel(paramsForFixture(params, match.profile)));
  const final = fixture.state === 'finished' ? fixture.score : null;
  if (final) {
    for (const side of ['home', 'away'] as const) {
      if (state.score[side] > final[side]) {
        issues.push({
          path: `from_state.score.${side}`,
          message: `the fixture finished ${final.home}-${final.away}: ${state.score[side]} goals are more than the ${side} side scored`,
        });
      }
    }
  }
  return issues;
}

export function checkFromState(
  match: MatchInputs,
  fixture: Pick<FixtureRecord, 'state' | 'score'>,
  params: ModelParams,
  prefix: string,
): void {
  const issue = fromStateIssues(match, fixture, params)[0];
  if (!issue) return;
  const param = join(prefix, issue.path);
  throw new ApiError('parameter_invalid', { param, message: `\`${param}\`: ${issue.message}.` });
}
