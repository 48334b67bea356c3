// The daily counters of an organisation (docs/decisions.md §3, docs/api.md §8): submissions, batches and GPU
// time per UTC day, one usage_days row per organisation and day. GPU time is kept in whole milliseconds so
// that reserving an estimate and replacing it with the measured time is exact arithmetic.
import type { Sql, TransactionSql } from '../db/connection.js';

/** The day's three counters: as a row holds them, as a submission adds to them, as a plan caps them. */
export interface UsageCounts {
  submissions: number;
  batches: number;
  /**
   * GPU time in whole ms; a row's is the reserved estimates of unfinished work plus the measured time of
   * finished work.
   */
  gpuMs: number;
}

export interface DailyUsage extends UsageCounts {
  orgId: string;
  /** The UTC day, YYYY-MM-DD. */
  day: string;
}

/** The UTC day of an instant, YYYY-MM-DD. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** Whole seconds from `at` to the next 00:00 UTC, at least 1 (the Retry-After of a daily ceiling). */
export function secondsToNextUtcDay(at: Date): number {
  const next = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - at.getTime()) / 1000));
}

export function gpuSecondsToMs(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new RangeError(`GPU-seconds must be >= 0, got ${seconds}`);
  return Math.ceil(seconds * 1000);
}

/**
 * The organisation's row for the day, created on first use and locked until the caller's transaction
 * ends: admissions of one organisation are decided one at a time.
 */
export async function lockDailyUsage(tx: TransactionSql, orgId: string, day: string): Promise<DailyUsage> {
  // Sent together (one round trip): the server runs them in order, so the row exists when it is locked.
  const [, [row]] = await Promise.all([
    tx`INSERT INTO usage_days (org_id, day) VALUES (${orgId}, ${day}) ON CONFLICT DO NOTHING`,
    tx<DailyUsage[]>`
      SELECT org_id, to_char(day, 'YYYY-MM-DD') AS day, submissions, batches, gpu_ms
      FROM usage_days WHERE org_id = ${orgId} AND day = ${day}
      FOR UPDATE`,
  ]);
  return row!;
}

/** Adds to the day's counters only while every ceiling still holds; null when one would be passed. */
export async function addDailyUsage(
  tx: TransactionSql,
  orgId: string,
  day: string,
  add: UsageCounts,
  ceilings: UsageCounts,
): Promise<DailyUsage | null> {
  const [row] = await tx<DailyUsage[]>`
    UPDATE usage_days
    SET submissions = submissions + ${add.submissions}, batches = batches + ${add.batches},
        gpu_ms = gpu_ms + ${add.gpuMs}
    WHERE org_id = ${orgId} AND day = ${day}
      AND submissions + ${add.submissions} <= ${ceilings.submissions}
      AND batches + ${add.batches} <= ${ceilings.batches}
      AND gpu_ms + ${add.gpuMs} <= ${ceilings.gpuMs}
    RETURNING org_id, to_char(day, 'YYYY-MM-DD') AS day, submissions, batches, gpu_ms`;
  return row ?? null;
}

/**
 * Adds a submission that queues nothing (a cache hit: no GPU time, no open job) in one statement: the
 * day's row is created or locked and moved by the same guarded upsert, so a cache hit's admission is one
 * round trip. Null when a ceiling would be passed; the caller then takes the locked path, which names it.
 */
export async function addSubmissionWithoutWork(
  tx: TransactionSql,
  orgId: string,
  day: string,
  ceilings: Pick<UsageCounts, 'submissions'>,
): Promise<DailyUsage | null> {
  const [row] = await tx<DailyUsage[]>`
    INSERT INTO usage_days AS u (org_id, day, submissions)
    SELECT ${orgId}::text, ${day}::date, 1 WHERE 1 <= ${ceilings.submissions}::integer
    ON CONFLICT (org_id, day) DO UPDATE SET submissions = u.submissions + 1
      WHERE u.submissions + 1 <= ${ceilings.submissions}::integer
    RETURNING org_id, to_char(day, 'YYYY-MM-DD') AS day, submissions, batches, gpu_ms`;
  return row ?? null;
}

/**
 * Replaces a job's reserved GPU estimate with its measured time on the day it was reserved from. The
 * measured time is the truth, so it may take the day past its ceiling; it only refuses later admissions.
 */
export async function settleGpuUsage(
  tx: TransactionSql,
  orgId: string,
  day: string,
  reservedMs: number,
  usedMs: number,
): Promise<void> {
  if (reservedMs === usedMs) return;
  await tx`
    UPDATE usage_days SET gpu_ms = GREATEST(0, gpu_ms - ${reservedMs} + ${usedMs})
    WHERE org_id = ${orgId} AND day = ${day}`;
}

/** A job's GPU time on the day it was reserved from: what it reserved and what it measured. */
export interface GpuUsageSettlement {
  orgId: string;
  day: string;
  reservedMs: number;
  usedMs: number;
}

/**
 * settleGpuUsage for jobs that ended together (a worker's pack of completions) in one statement: the
 * differences summed by organisation and day first, so each day's row is updated once.
 */
export async function settleGpuUsages(
  tx: TransactionSql,
  settlements: readonly GpuUsageSettlement[],
): Promise<void> {
  const usage = settlements
    .map((s) => ({ org_id: s.orgId, day: s.day, delta: s.usedMs - s.reservedMs }))
    .filter((row) => row.delta !== 0);
  if (usage.length === 0) return;
  await tx`
    UPDATE usage_days u SET gpu_ms = GREATEST(0, u.gpu_ms + d.delta)
    FROM (SELECT org_id, day, sum(delta) AS delta
          FROM json_to_recordset(${JSON.stringify(usage)}::text::json) AS r(org_id text, day date, delta bigint)
          GROUP BY org_id, day) d
    WHERE u.org_id = d.org_id AND u.day = d.day`;
}

export async function readDailyUsage(
  db: Sql | TransactionSql,
  orgId: string,
  day: string,
): Promise<DailyUsage> {
  const [row] = await db<DailyUsage[]>`
    SELECT org_id, to_char(day, 'YYYY-MM-DD') AS day, submissions, batches, gpu_ms
    FROM usage_days WHERE org_id = ${orgId} AND day = ${day}`;
  return row ?? { orgId, day, submissions: 0, batches: 0, gpuMs: 0 };
}
