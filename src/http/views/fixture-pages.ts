// The free fixture reads as bytes: GET /v1/fixtures pages and a fixture's squads. The fixture read cache
// (src/fixtures/read-cache.ts) hands out the same list or record object until a feed load, a delivery or
// its lifetime ends it; the body serialised from that object is kept beside it (a WeakMap: it goes when
// the object goes, so the cache's invalidation is the body's).
// Of such a body, only the freshness objects depend on the instant asked about (docs/api.md §2.2):
// `evaluatedAt` is that instant, spliced in per request; `status`, `reason` and `validUntil` change only
// when the instant crosses a kick-off or the end of a feed reload, so the body is rebuilt when it does.
// Everything else went through the route's zod schema once, when the body was built.
import type { FixtureListItem } from '../../fixtures/fixture-list.js';
import type { FixtureRecord, FixtureWithInputs } from '../../fixtures/fixture-record.js';
import { fixtureListSchema, squadsSchema } from '../schemas/fixtures.js';
import { serializeThrough } from '../serialize.js';
import { fixtureListView, squadsView } from './fixtures.js';

type FixtureList = { items: FixtureListItem[]; hasMore: boolean };

interface SerializedBody {
  /** The JSON cut at each `evaluatedAt` value: joined around the instant asked about. */
  parts: string[];
  /** The instants between which every freshness but its `evaluatedAt` stays as built. */
  validFrom: number;
  validUntil: number;
}

const listPages = new WeakMap<FixtureList, SerializedBody>();
const squadPages = new WeakMap<FixtureRecord, SerializedBody>();

const EVALUATED_AT = '"evaluatedAt":';

/** The list as GET /v1/fixtures sends it at `now`: what the schema would send, built once per list. */
export function fixtureListBody(list: FixtureList, now: Date): string {
  const fixtures = list.items.map((item) => item.fixture);
  return splicedBody(listPages, list, fixtures, now, (at) =>
    serializeThrough(fixtureListSchema, fixtureListView(list, at)),
  );
}

/** A fixture's squads as GET /v1/fixtures/{id}/squads sends them at `now`, built once per record. */
export function squadsBody(fixture: FixtureWithInputs, now: Date): string {
  return splicedBody(squadPages, fixture, [fixture], now, (at) =>
    serializeThrough(squadsSchema, squadsView(fixture, at)),
  );
}

function splicedBody<K extends object>(
  bodies: WeakMap<K, SerializedBody>,
  source: K,
  fixtures: FixtureRecord[],
  now: Date,
  serialize: (now: Date) => string,
): string {
  const at = now.getTime();
  let body = bodies.get(source);
  if (!body || at < body.validFrom || at >= body.validUntil) {
    body = { parts: cutAtEvaluatedAt(serialize(now), at, fixtures.length), ...stableSpan(fixtures, at) };
    bodies.set(source, body);
  }
  return body.parts.join(EVALUATED_AT + at);
}

function cutAtEvaluatedAt(json: string, at: number, freshnessCount: number): string[] {
  // A quote inside a JSON string is escaped, so this text occurs only as the freshness field's key.
  const parts = json.split(EVALUATED_AT + at);
  if (parts.length !== freshnessCount + 1) {
    throw new Error(`fixture body: ${parts.length - 1} evaluatedAt fields for ${freshnessCount} fixtures`);
  }
  return parts;
}

/** Freshness turns at kick-off (now >= kickoff) and when a reload ends (refreshingUntil > now). */
function stableSpan(fixtures: FixtureRecord[], at: number): { validFrom: number; validUntil: number } {
  let validFrom = Number.NEGATIVE_INFINITY;
  let validUntil = Number.POSITIVE_INFINITY;
  for (const fixture of fixtures) {
    for (const turn of [fixture.kickoff.getTime(), fixture.refreshingUntil?.getTime()]) {
      if (turn === undefined) continue;
      if (turn <= at) validFrom = Math.max(validFrom, turn);
      else validUntil = Math.min(validUntil, turn);
    }
  }
  return { validFrom, validUntil };
}
