// GET /v1/fixtures pages as bytes. The fixture read cache (src/fixtures/read-cache.ts) hands out the same
// list object until a feed load, a delivery or its lifetime ends it; the page serialised from that object
// is kept beside it (a WeakMap: it goes when the list goes, so the cache's invalidation is the page's).
// Of a page, only the freshness objects depend on the instant asked about (docs/api.md §2.2):
// `evaluatedAt` is that instant, spliced in per request; `status`, `reason` and `validUntil` change only
// when the instant crosses a kick-off or the end of a feed reload, so the page is rebuilt when it does.
// Everything else went through the route's zod schema once, when the page was built.
import type { FixtureListItem } from '../../fixtures/fixture-list.js';
import { fixtureListSchema } from '../schemas/fixtures.js';
import { serializeThrough } from '../serialize.js';
import { fixtureListView } from './fixtures.js';

type FixtureList = { items: FixtureListItem[]; hasMore: boolean };

interface SerializedPage {
  /** The page's JSON cut at each `evaluatedAt` value: joined around the instant asked about. */
  parts: string[];
  /** The instants between which every item's freshness but `evaluatedAt` stays as built. */
  validFrom: number;
  validUntil: number;
}

const pages = new WeakMap<FixtureList, SerializedPage>();

const EVALUATED_AT = '"evaluatedAt":';

/** The list as GET /v1/fixtures sends it at `now`: what the schema would send, built once per list. */
export function fixtureListBody(list: FixtureList, now: Date): string {
  const at = now.getTime();
  let page = pages.get(list);
  if (!page || at < page.validFrom || at >= page.validUntil) {
    page = serializePage(list, now);
    pages.set(list, page);
  }
  return page.parts.join(EVALUATED_AT + at);
}

function serializePage(list: FixtureList, now: Date): SerializedPage {
  const at = now.getTime();
  const json = serializeThrough(fixtureListSchema, fixtureListView(list, now));
  // A quote inside a JSON string is escaped, so this text occurs only as the freshness field's key.
  const parts = json.split(EVALUATED_AT + at);
  if (parts.length !== list.items.length + 1) {
    throw new Error(`fixture page: ${parts.length - 1} evaluatedAt fields for ${list.items.length} items`);
  }
  let validFrom = Number.NEGATIVE_INFINITY;
  let validUntil = Number.POSITIVE_INFINITY;
  // Freshness turns at kick-off (now >= kickoff) and when a reload ends (refreshingUntil > now).
  for (const { fixture } of list.items) {
    for (const turn of [fixture.kickoff.getTime(), fixture.refreshingUntil?.getTime()]) {
      if (turn === undefined) continue;
      if (turn <= at) validFrom = Math.max(validFrom, turn);
      else validUntil = Math.min(validUntil, turn);
    }
  }
  return { parts, validFrom, validUntil };
}
