// A run made ready from a request: its fixture, resolved lineups (docs/decisions.md §5), engine
// inputs, seed and cache key. Quotes, single runs and batch items all start here.
import { createHash } from 'node:crypto';
import type { Caller } from '../accounts/caller.js';
import { defaultModelParams } from '../engine-contract/model-params.js';
import { ApiError } from '../errors.js';
import type { FixtureWithInputs } from '../fixtures/fixture-record.js';
import {
  type LineupsRequest,
  type LineupWarning,
  type ResolvedLineups,
  resolveLineups,
} from '../fixtures/lineups.js';
import { buildMatchInputs } from '../fixtures/match-inputs.js';
import { TEST_KEY_MAX_DRAWS } from '../limits/plans.js';
import { checkMarketReachable, marketFitFor, marketInputs, offeredOdds } from './market-request.js';
import type { RunPayload } from './run-payload.js';
import { type PreloadedFixtures, selectFixture } from './select-fixture.js';
import { checkFromState } from './state-request.js';
import type { FixtureSelector, SimulationDeps } from './types.js';

/** A run's non-blocking warnings: its lineups', and a test key's capped draws. */
export type RunWarning = LineupWarning | 'test_draws_capped';

/** The draws a caller's run makes: as asked, but at most TEST_KEY_MAX_DRAWS for a test key. */
export function runDraws(caller: Caller, requested: number): { draws: number; capped: boolean } {
  if (caller.livemode || requested <= TEST_KEY_MAX_DRAWS) return { draws: requested, capped: false };
  return { draws: TEST_KEY_MAX_DRAWS, capped: true };
}

/**
 * What makes two runs one (the text their seed and cache key hash): the inputs, the draws, the model
 * version, a market fitted to and an in-play state. With the version in it, a result is reused and a
 * seed repeated only under the version that made them (docs/decisions.md §13, "Changelog of model versions").
 */
export function runIdentity(parts: {
  inputs: unknown;
  draws: number;
  modelVersion: string;
  market?: unknown;
  fromState?: unknown;
}): string {
  return JSON.stringify({
    inputs: parts.inputs,
    draws: parts.draws,
    model: parts.modelVersion,
    ...(parts.market ? { market: parts.market } : {}),
    ...(parts.fromState ? { from_state: parts.fromState } : {}),
  });
}

export interface PreparedRun {
  fixture: FixtureWithInputs;
  resolved: ResolvedLineups;
  /** The draws the run makes (runDraws). */
  draws: number;
  warnings: RunWarning[];
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

/** `requestedDraws` as the request asked; the run makes runDraws of them. */
export async function prepareRun(
  deps: Pick<SimulationDeps, 'sql' | 'fixtures' | 'usage' | 'clock' | 'engine'>,
  caller: Caller,
  selector: FixtureSelector,
  requestedDraws: number,
  prefix: string,
  preloaded?: PreloadedFixtures,
): Promise<PreparedRun> {
  const { draws, capped } = runDraws(caller, requestedDraws);
  const fixture = await selectFixture(deps, selector, prefix, deps.clock(), preloaded);
  const resolved = await resolveRunLineups(deps, caller, fixture, selector.lineups, prefix);
  const warnings: RunWarning[] = [...resolved.warnings, ...(capped ? ['test_draws_capped' as const] : [])];
  const match = buildMatchInputs(fixture, resolved.lineups);
  // A market is read and its reach checked before anything is held (docs/api.md §4.3).
  const market = selector.market ? marketInputs(selector.market, prefix) : undefined;
  const offered = selector.offered_odds ? offeredOdds(selector.offered_odds, prefix) : undefined;
  if (market) {
    match.market = market;
    const fitted = { ...match, market };
    checkMarketReachable(fitted, await marketFitFor(deps.engine, fitted), prefix);
  }
  // An in-play state is checked against the fixture before anything is held (docs/api.md §4.3).
  if (selector.from_state) {
    match.from_state = selector.from_state;
    checkFromState(match, fixture, defaultModelParams, prefix);
  }
  // Identical shared inputs reuse one result (docs/decisions.md §6); the seed follows the inputs, so the
  // same inputs give the same document. Test keys run on the CPU engine and keep their own results. A
  // market fitted to is an input; offered odds change only the value section, so they key the cached
  // document, not the seed. An in-play state is an input too.
  const identity = runIdentity({
    inputs: resolved.inputsForScope,
    draws,
    modelVersion: defaultModelParams.model_version,
    market,
    fromState: selector.from_state,
  });
  const inputsHash = sha256(identity);
  const owner = resolved.scope === 'private' ? caller.org.id : 'shared';
  const valueKey = offered ? `:offered:${JSON.stringify(offered)}` : '';
  return {
    fixture,
    resolved,
    draws,
    warnings,
    cacheKey: sha256(`${caller.mode}:${owner}:${identity}${valueKey}`),
    seed: inputsHash.slice(0, 16),
    payload: {
      match,
      as_of: fixture.inputsAsOf.toISOString(),
      ...(offered ? { offered_odds: offered } : {}),
      request: {
        state: fixture.state,
        inputs: resolved.inputs,
        warnings,
        inputs_hash: `sha256:${inputsHash}`,
        ...(selector.from_state ? { in_play: true as const } : {}),
        ...(market ? { fitted: true as const } : {}),
      },
    },
  };
}
