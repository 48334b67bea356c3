// What a value must be for PostgreSQL to store it as the service stores it: ids in int4 columns, text
// without NUL (text and jsonb refuse it) and well-formed Unicode, and dates inside a sane range that is
// well inside PostgreSQL's own (4713 BC to 5874897 AD) and JavaScript's four-digit ISO years. The request
// validators (src/http/schemas/primitives.ts) and the feed schema build on these, so a value that reaches
// a statement can always be stored (docs/api.md §8.5).

/** The largest int4: fixture, team, competition and player ids. */
export const INT4_MAX = 2_147_483_647;

/** The first and last UTC day a request may name (YYYY-MM-DD). */
export const EARLIEST_DAY = '1900-01-01';
export const LATEST_DAY = '2199-12-31';
const EARLIEST_MS = Date.parse(`${EARLIEST_DAY}T00:00:00Z`);
const END_MS = Date.parse(`${LATEST_DAY}T00:00:00Z`) + 86_400_000;

/** An instant inside [EARLIEST_DAY, LATEST_DAY]. */
export function withinDateRange(ms: number): boolean {
  return Number.isFinite(ms) && ms >= EARLIEST_MS && ms < END_MS;
}

// A lone half of a surrogate pair: not a character, and not encodable as UTF-8.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text a text or jsonb column can hold as sent: no NUL character, no lone surrogate. */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}
