// The fixture a request names (docs/api.md §4.3): by id, or by team names and an optional day.
import { ApiError } from '../errors.js';
import { fixtureForSale, getFixtureForSale } from '../fixtures/fixture-access.js';
import { findFixturesByTeams } from '../fixtures/fixture-list.js';
import type { FixtureRecord, FixtureWithInputs } from '../fixtures/fixture-record.js';
import { isRefreshing } from '../fixtures/freshness.js';
import type { FixtureSelector, SimulationDeps } from './types.js';

function parseFixtureId(value: number | string, param: string): number {
  const id =
    typeof value === 'number' ? value : /^\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(id) || id < 1) {
    throw new ApiError('parameter_invalid', {
      param,
      message: `\`${param}\` must be an integer of at least 1.`,
    });
  }
  return id;
}

/** Fixtures read beforehand by id (a batch reads its items' fixtures in one go); absent: not read. */
export type PreloadedFixtures = ReadonlyMap<number, FixtureRecord | null>;

/**
 * The fixture on sale that the selector names; `prefix` is the selector's path in the request body. A
 * fixture id found in `preloaded` is checked without another read; otherwise it is read through
 * `reads.fixtures` (the process's read cache) when given.
 */
export async function selectFixture(
  reads: Pick<SimulationDeps, 'sql' | 'fixtures'>,
  selector: FixtureSelector,
  prefix: string,
  now: Date,
  preloaded?: PreloadedFixtures,
): Promise<FixtureWithInputs> {
  const param = (name: string) => (prefix ? `${prefix}.${name}` : name);
  if (selector.fixture_id !== undefined) {
    if (selector.home !== undefined || selector.away !== undefined || selector.date !== undefined) {
      throw new ApiError('parameter_invalid', {
        param: param('fixture_id'),
        message: 'Send either fixture_id or home/away (and date), not both.',
      });
    }
    const fixtureId = parseFixtureId(selector.fixture_id, param('fixture_id'));
    const stored = preloaded?.has(fixtureId)
      ? preloaded.get(fixtureId)!
      : await reads.fixtures?.fixture(fixtureId);
    const inPlay = selector.from_state !== undefined;
    if (stored !== undefined) return fixtureForSale(stored, fixtureId, now, inPlay);
    return getFixtureForSale(reads.sql, fixtureId, now, inPlay);
  }
  for (const side of ['home', 'away'] as const) {
    if (selector[side] === undefined) {
      throw new ApiError('parameter_missing', {
        param: param(side),
        message: 'Send fixture_id, or home and away.',
      });
    }
  }
  const home = selector.home!;
  const away = selector.away!;
  const { sql } = reads;
  const candidates = await findFixturesByTeams(sql, { home, away, date: selector.date, now });
  if (candidates.length === 0) {
    throw new ApiError('fixture_not_found', {
      message: `No ${selector.date ? `fixture on ${selector.date}` : 'upcoming fixture'} of ${home} v ${away}.`,
      param: param('home'),
      recovery: {
        next_step: 'Check the team names (full or short) and the date against GET /v1/fixtures.',
      },
    });
  }
  refuseWhileRefreshing(candidates, now);
  if (candidates.length > 1) throw ambiguous(candidates, `${home} v ${away}`, param('home'));
  return getFixtureForSale(sql, candidates[0]!.fixtureId, now);
}

// A fixture being reloaded may be changing its kick-off or teams: the match cannot be proven unique.
function refuseWhileRefreshing(candidates: FixtureRecord[], now: Date): void {
  for (const candidate of candidates) {
    if (isRefreshing(candidate, now)) {
      throw new ApiError('fixture_lookup_incomplete', {
        message: `Fixture ${candidate.fixtureId} of this pairing is being refreshed; the lookup cannot prove a unique match.`,
        retryAfterSeconds: 1,
        recovery: { next_step: 'Retry shortly, or send the fixture_id.' },
      });
    }
  }
}

function ambiguous(candidates: FixtureRecord[], pairing: string, param: string): ApiError {
  return new ApiError('fixture_ambiguous', {
    message: `${candidates.length} fixtures match ${pairing}; choose one.`,
    param,
    recovery: {
      candidates: candidates.map((c) => ({
        fixture_id: c.fixtureId,
        kickoff: c.kickoff.toISOString(),
        home: c.home.name,
        away: c.away.name,
        competition: c.competition.name,
      })),
      next_step: 'Send the fixture_id of one candidate, or add `date`.',
    },
  });
}
