// A run made ready from a request: its fixture, resolved lineups (docs/decisions.md §5), engine
// inputs, seed and cache key. Quotes, single runs and batch items all start here.
import { createHash } from 'node:crypto';
import type { Caller } from '../accounts/caller.js';
import { defaultModelParams } from '../engine/contract/model-params.js';
import { ApiError } from '../errors.js';
import type { FixtureWithInputs } from '../fixtures/fixture-record.js';
import { type LineupsRequest, type ResolvedLineups, resolveLineups } from '../fixtures/lineups.js';
import { buildMatchInputs } from '../fixtures/match-inputs.js';
import type { RunPayload } from './run-payload.js';
import { selectFixture } from './select-fixture.js';
import type { FixtureSelector, SimulationDeps } from './types.js';

export interface PreparedRun {
  fixture: FixtureWithInputs;
  resolved: ResolvedLineups;
  payload: RunPayload;
  cacheKey: string;
  seed: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Lineups of docs/decisions.md §5, with the custom-lineup cooldown of §3 around them. */
async function resolveRunLineups(
  deps: Pick<SimulationDeps, 'usage'>,
  caller: Caller,
  fixture: FixtureWithInputs,
  lineups: LineupsRequest | undefined,
  prefix: string,
): Promise<ResolvedLineups> {
  const custom = lineups?.home?.source === 'custom' || lineups?.away?.source === 'custom';
  if (custom) await deps.usage.checkLineupCooldown(caller.org.id);
  try {
    return resolveLineups(fixture, lineups, prefix ? `${prefix}.lineups` : 'lineups');
  } catch (error) {
    if (
      custom &&
      error instanceof ApiError &&
      (error.code === 'lineup_invalid' || error.code === 'player_not_in_squad')
    ) {
      await deps.usage.recordLineupFailure(caller.org.id);
    }
    throw error;
  }
}

export async function prepareRun(
  deps: Pick<SimulationDeps, 'sql' | 'usage' | 'clock'>,
  caller: Caller,
  selector: FixtureSelector,
  draws: number,
  prefix: string,
): Promise<PreparedRun> {
  const fixture = await selectFixture(deps.sql, selector, prefix, deps.clock());
  const resolved = await resolveRunLineups(deps, caller, fixture, selector.lineups, prefix);
  const match = buildMatchInputs(fixture, resolved.lineups);
  // Identical shared inputs reuse one result (docs/decisions.md §6); the seed follows the inputs, so the
  // same inputs give the same document. Test keys run on the CPU engine and keep their own results.
  const identity = JSON.stringify({
    inputs: resolved.inputsForScope,
    draws,
    model: defaultModelParams.model_version,
  });
  const inputsHash = sha256(identity);
  const owner = resolved.scope === 'private' ? caller.org.id : 'shared';
  return {
    fixture,
    resolved,
    cacheKey: sha256(`${caller.mode}:${owner}:${identity}`),
    seed: inputsHash.slice(0, 16),
    payload: {
      match,
      as_of: fixture.inputsAsOf.toISOString(),
      request: {
        state: fixture.state,
        inputs: resolved.inputs,
        warnings: resolved.warnings,
        inputs_hash: `sha256:${inputsHash}`,
      },
    },
  };
}
