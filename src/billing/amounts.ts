// Credit amounts are integer milli-credits everywhere (docs/decisions.md §2): 1 credit = 1,000 milli-credits
// = 1,000 draws. These are the only conversions to and from the wire forms.

const MILLI_PER_CREDIT = 1000;

/** The price revision quotes carry (docs/api.md §2.5): one credit per 1,000 draws. */
const RATE_CARD = '2026-11-01';

/** What every quote states beside what it prices (docs/api.md §2.5): a simulation's, a path's, a season's. */
export interface QuoteTerms {
  /** Zero for test keys. */
  priceMilli: number;
  rateCard: string;
  livemode: boolean;
  dataVersion: string;
}

/** A quote's terms for a key of this mode: test keys pay nothing; the price is today's rate card's. */
export function quoteTerms(livemode: boolean, priceMilli: number, dataVersion: string): QuoteTerms {
  return { priceMilli: livemode ? priceMilli : 0, rateCard: RATE_CARD, livemode, dataVersion };
}

/** The exact decimal string with three places: 1000 => "1.000", 100 => "0.100", -2500 => "-2.500". */
export function formatCredits(milli: number): string {
  assertMilli(milli);
  const sign = milli < 0 ? '-' : '';
  const magnitude = Math.abs(milli);
  const whole = Math.floor(magnitude / MILLI_PER_CREDIT);
  const fraction = magnitude % MILLI_PER_CREDIT;
  return `${sign}${whole}.${String(fraction).padStart(3, '0')}`;
}

/** Credits as a JSON number (1000 => 1, 100 => 0.1); the nearest double to the exact decimal. */
export function creditsNumber(milli: number): number {
  assertMilli(milli);
  return Number(formatCredits(milli));
}

/** Whole or decimal credits (at most three places) to milli-credits, for operator input such as top-ups. */
export function creditsToMilli(credits: number | string): number {
  const text = typeof credits === 'number' ? String(credits) : credits.trim();
  const match = /^(-?)(\d+)(?:\.(\d{1,3}))?$/.exec(text);
  if (!match) throw new RangeError(`not a credit amount with at most three decimals: ${text}`);
  const milli = Number(match[2]) * MILLI_PER_CREDIT + Number((match[3] ?? '').padEnd(3, '0'));
  const signed = match[1] === '-' ? -milli : milli;
  assertMilli(signed);
  return signed;
}

/** The price of a run: draws / 1000 credits, i.e. one milli-credit per draw. */
export function priceOfDrawsMilli(draws: number): number {
  assertMilli(draws);
  return draws;
}

/**
 * Fixture-seasons one milli-credit buys in a season projection (docs/decisions.md, "Projection price"):
 * one milli-credit per 100 remaining fixtures simulated, so 10,000 seasons of a 380-fixture season cost
 * 38 credits and of its last 100 fixtures 10 credits.
 */
export const PROJECTION_FIXTURE_SEASONS_PER_MILLI = 100;

/** The price of a projection: seasons x remaining fixtures / 100 milli-credits, rounded up; 0 with none left. */
export function priceOfProjectionMilli(seasons: number, remainingFixtures: number): number {
  const milli = Math.ceil((seasons * remainingFixtures) / PROJECTION_FIXTURE_SEASONS_PER_MILLI);
  assertMilli(milli);
  return milli;
}

function assertMilli(milli: number): void {
  if (!Number.isSafeInteger(milli))
    throw new RangeError(`milli-credits must be a safe integer, got ${milli}`);
}
