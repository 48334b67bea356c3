// The building blocks of every request schema: path parameters, query strings and bodies, admin routes
// included. Each one accepts only what PostgreSQL can store as the service stores it
// (src/db/value-limits.ts), so hostile input is a 400 naming its parameter, never a database error
// (docs/api.md §8.5).
import { z } from 'zod';
import {
  EARLIEST_DAY,
  INT4_MAX,
  isStorableText,
  LATEST_DAY,
  withinDateRange,
} from '../../db/value-limits.js';
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS } from '../../jobs/call-context.js';

const STORABLE_TEXT = 'must not contain the NUL character or unpaired surrogates';

/** Text of `min` to `max` characters that a text or jsonb column can hold. */
export function boundedText(max: number, min = 1) {
  return z.string().min(min).max(max).refine(isStorableText, STORABLE_TEXT);
}

/** An opaque id (`job_…`, `batch_…`, `res_…`) in a path or query string: 1 to 64 characters. */
export const opaqueId = boundedText(64);

/** An id of an int4 column in a body: 1 to 2,147,483,647. */
export const int4Id = z.number().int().min(1).max(INT4_MAX);

/** An id of an int4 column in a path or query string (text that reads as 1 to 2,147,483,647). */
export const int4IdParam = z.coerce.number().int().min(1).max(INT4_MAX);

const int4Digits = z
  .string()
  .regex(/^\s*\d{1,10}\s*$/, 'must be an integer id')
  .refine((value) => Number(value) >= 1 && Number(value) <= INT4_MAX, `must be 1 to ${INT4_MAX}`);

/** An int4 id in a body given as a number or as its digits ("42"). */
export const int4IdOrDigits = z.union([int4Id, int4Digits], {
  error: `must be an integer id from 1 to ${INT4_MAX}, or a string of its digits`,
});

function isCalendarDay(value: string): boolean {
  const day = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().startsWith(value);
}

/** A UTC day, YYYY-MM-DD, from EARLIEST_DAY to LATEST_DAY. */
export const isoDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine(isCalendarDay, 'must be a real calendar date')
  .refine(
    (value) => withinDateRange(Date.parse(`${value}T00:00:00Z`)),
    `must be from ${EARLIEST_DAY} to ${LATEST_DAY}`,
  );

/** An ISO 8601 date-time with an offset, inside the same range as isoDay. */
export const isoDateTime = z.iso
  .datetime({ offset: true })
  .refine((value) => withinDateRange(Date.parse(value)), `must be from ${EARLIEST_DAY} to ${LATEST_DAY}`);

/** The most credits one operator amount may name. */
const MAX_CREDITS = 1_000_000_000;

/**
 * A credit amount an operator sends: 0 to 1,000,000,000 with at most three decimals, so that it is a
 * whole number of milli-credits (docs/decisions.md §2) as written, not after rounding.
 */
export const creditAmount = z
  .number()
  .min(0)
  .max(MAX_CREDITS)
  .refine((value) => /^\d+(\.\d{1,3})?$/.test(String(value)), 'must have at most three decimals');

/** A credit amount of at least one milli-credit. */
export const positiveCreditAmount = creditAmount.refine((value) => value >= 0.001, 'must be at least 0.001');

/** A limit an operator sets: a whole number 0 to 1,000,000,000. */
export const limitValue = z.number().int().min(0).max(MAX_CREDITS);

/** A submission's `wait_seconds`: how long to wait for `what` before a job is returned. */
export function waitSeconds(what: string) {
  return z
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .describe(
      `Seconds to wait for ${what} before a job is returned, 0 to ${MAX_WAIT_SECONDS}; default ${DEFAULT_WAIT_SECONDS}.`,
    );
}
