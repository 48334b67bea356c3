// Usage limits of simulation submissions (docs/decisions.md §3, docs/api.md §8): open jobs, daily submissions and
// batches, the daily GPU-second budget, the loop guard and the custom-lineup cooldown.
//
// Admission runs inside the transaction that reserves the credits and writes the jobs. It first locks
// the organisation's usage row for the day, so two submissions of one organisation are decided one
// after the other, and the open-job count it reads cannot change under it before the new job commits.
// The counters then move by a guarded UPDATE that refuses on its own if a ceiling would be passed.

import type { Caller } from '../accounts/caller.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { ApiError } from '../errors.js';
import {
  addDailyUsage,
  addSubmissionWithoutWork,
  type DailyUsage,
  gpuSecondsToMs,
  lockDailyUsage,
  readDailyUsage,
  secondsToNextUtcDay,
  utcDay,
} from './daily-usage.js';
import type { PlanHolder } from './plans.js';
import { limitsFor } from './plans.js';
import type { WindowCounter } from './window-counter.js';

/** How long a client refused for concurrency waits before trying again: jobs take seconds. */
const CONCURRENCY_RETRY_AFTER_SECONDS = 5;

/** docs/decisions.md §3: the same method, path and body this many times within the window is a loop. */
const LOOP_GUARD_REPEATS = 8;
const LOOP_GUARD_WINDOW_MS = 10_000;

/** docs/decisions.md §3: this many custom-lineup failures within the window lock custom lineups for LOCK_MS. */
const LINEUP_FAILURES_BEFORE_COOLDOWN = 5;
const LINEUP_FAILURE_WINDOW_MS = 10 * 60_000;
const LINEUP_COOLDOWN_MS = 10 * 60_000;

export interface UsageOrg extends PlanHolder {
  id: string;
}

/** The organisation as admission sees it (plan, overrides). */
export function usageOrg(caller: Caller): UsageOrg {
  return { id: caller.org.id, plan: caller.org.plan, limitOverrides: caller.org.limitOverrides };
}

export interface SubmissionRequest {
  org: UsageOrg;
  /** A batch counts as one submission, one batch and one open job group (docs/api.md §8.1). */
  kind: 'simulation' | 'batch';
  /**
   * Estimated GPU-seconds of each job that will run (draws x seconds per draw of the engine in use);
   * a cache hit runs nothing and has no entry.
   */
  gpuSecondsEstimates: readonly number[];
  /**
   * Counts the organisation's open job groups (queued or running; a batch counts once) in this
   * transaction; its statements are sent right behind the usage row's lock, which the server takes
   * first, so no other admission of the organisation can add a job before the new one commits. Omitted
   * when nothing will be queued (every item a cache hit): no open job is added.
   */
  countOpenJobGroups?: ((tx: TransactionSql) => Promise<number>) | undefined;
}

export interface Admission {
  orgId: string;
  /** The UTC day whose budget was used: store it on the jobs (NewJob.usageDay). */
  day: string;
  /** Reserved GPU-seconds per entry of gpuSecondsEstimates (NewJob.gpuSecondsReserved). */
  gpuSecondsReserved: number[];
  usage: DailyUsage;
}

export interface LoopGuardRequest {
  orgId: string;
  method: string;
  path: string;
  /** A hash of the request body as received (the HTTP layer hashes the raw bytes). */
  bodyHash: string;
}

export interface UsageLimits {
  /** Throws 429 rate_limited or concurrency_limited; call inside the submission's transaction. */
  admitSubmission(tx: TransactionSql, request: SubmissionRequest): Promise<Admission>;
  usageToday(orgId: string): Promise<DailyUsage>;
  /** Throws 429 loop_guard while the same request repeats too often. */
  checkLoopGuard(request: LoopGuardRequest): Promise<void>;
  /** Throws 429 lineup_cooldown while the organisation's custom lineups are locked. */
  checkLineupCooldown(orgId: string): Promise<void>;
  /** Count a lineup_invalid or player_not_in_squad answer; true when it started a cooldown. */
  recordLineupFailure(orgId: string): Promise<boolean>;
}

export interface UsageLimitsDeps {
  sql: Sql;
  counters: WindowCounter;
  clock?: () => Date;
}

interface UsageDeps {
  sql: Sql;
  counters: WindowCounter;
  clock: () => Date;
}

export function makeUsageLimits(options: UsageLimitsDeps): UsageLimits {
  const deps: UsageDeps = { ...options, clock: options.clock ?? (() => new Date()) };
  return {
    admitSubmission: (tx, request) => admitSubmission(deps, tx, request),
    usageToday: (orgId) => usageToday(deps, orgId),
    checkLoopGuard: (request) => checkLoopGuard(deps, request),
    checkLineupCooldown: (orgId) => checkLineupCooldown(deps, orgId),
    recordLineupFailure: (orgId) => recordLineupFailure(deps, orgId),
  };
}

async function admitSubmission(
  { clock }: UsageDeps,
  tx: TransactionSql,
  request: SubmissionRequest,
): Promise<Admission> {
  const now = clock();
  const day = utcDay(now);
  const orgId = request.org.id;
  const limits = limitsFor(request.org);
  if (
    request.kind === 'simulation' &&
    request.gpuSecondsEstimates.length === 0 &&
    !request.countOpenJobGroups
  ) {
    // A cache hit: only the daily submissions ceiling applies, checked by one guarded upsert (a cache
    // hit commits once and briefly, docs/decisions.md §6); a refusal is named by the locked path below.
    const usage = await addSubmissionWithoutWork(tx, orgId, day, { submissions: limits.submissions_per_day });
    if (usage) return { orgId, day, gpuSecondsReserved: [], usage };
  }
  // The open jobs are counted behind the day's lock in the same round trip (the server runs the
  // statements in order, so the count is still made under the lock), before the ceilings are checked:
  // a refused request counted them for nothing, an admitted one waits one round trip less.
  const [usage, open] = await Promise.all([lockDailyUsage(tx, orgId, day), request.countOpenJobGroups?.(tx)]);
  const batches = request.kind === 'batch' ? 1 : 0;
  const untilTomorrow = secondsToNextUtcDay(now);

  if (usage.submissions + 1 > limits.submissions_per_day) {
    throw dailyCeiling(
      'submissions_per_day',
      `${limits.submissions_per_day} submissions per UTC day`,
      untilTomorrow,
    );
  }
  if (usage.batches + batches > limits.batches_per_day) {
    throw dailyCeiling('batches_per_day', `${limits.batches_per_day} batches per UTC day`, untilTomorrow);
  }

  const budgetMs = limits.gpu_seconds_per_day * 1000;
  const estimatesMs = request.gpuSecondsEstimates.map(gpuSecondsToMs);
  const estimateMs = estimatesMs.reduce((sum, ms) => sum + ms, 0);
  // docs/api.md §8.3: a request may reserve the full daily budget, so one larger than the whole budget
  // reserves all of it (on an untouched day) rather than never fitting.
  const reservedMs = Math.min(estimateMs, budgetMs);
  if (estimateMs > 0 && (usage.gpuMs >= budgetMs || usage.gpuMs + reservedMs > budgetMs)) {
    throw dailyCeiling(
      'gpu_seconds_per_day',
      `${limits.gpu_seconds_per_day} GPU-seconds per UTC day; ${formatSeconds(usage.gpuMs)} used or reserved, ${formatSeconds(estimateMs)} estimated for this request`,
      untilTomorrow,
    );
  }

  if (open !== undefined) {
    if (open + 1 > limits.concurrent_simulations) {
      throw new ApiError('concurrency_limited', {
        message: `The organisation has ${open} open simulation jobs; its limit is ${limits.concurrent_simulations}.`,
        rule: 'concurrent_simulations',
        reason: `${limits.concurrent_simulations} open jobs (a batch counts once)`,
        retryAfterSeconds: CONCURRENCY_RETRY_AFTER_SECONDS,
        recovery: { open_jobs: open, limit: limits.concurrent_simulations },
      });
    }
  }

  const updated = await addDailyUsage(
    tx,
    orgId,
    day,
    { submissions: 1, batches, gpuMs: reservedMs },
    {
      submissions: limits.submissions_per_day,
      batches: limits.batches_per_day,
      // Measured times may have taken the day past its budget; a request that reserves nothing still fits.
      gpuMs: reservedMs === 0 ? Number.MAX_SAFE_INTEGER : budgetMs,
    },
  );
  // The row is locked by this transaction since lockDailyUsage: the guard cannot refuse now.
  if (!updated) throw new Error(`usage of ${orgId} on ${day} changed under its lock`);
  return { orgId, day, gpuSecondsReserved: splitReservation(estimatesMs, reservedMs), usage: updated };
}

async function usageToday({ sql, clock }: UsageDeps, orgId: string): Promise<DailyUsage> {
  return readDailyUsage(sql, orgId, utcDay(clock()));
}

async function checkLoopGuard({ counters }: UsageDeps, request: LoopGuardRequest): Promise<void> {
  const key = `loop_guard:${request.orgId}:${request.method}:${request.path}:${request.bodyHash}`;
  const refuse = async () => {
    // "Until the burst stops": every repeat while locked starts the lock again.
    await counters.lock(key, LOOP_GUARD_WINDOW_MS);
    return new ApiError('loop_guard', {
      message: `The same request was sent ${LOOP_GUARD_REPEATS} or more times within ${LOOP_GUARD_WINDOW_MS / 1000} seconds.`,
      rule: 'loop_guard',
      reason: `${LOOP_GUARD_REPEATS} identical requests within ${LOOP_GUARD_WINDOW_MS / 1000} seconds`,
      retryAfterSeconds: LOOP_GUARD_WINDOW_MS / 1000,
    });
  };
  if ((await counters.lockedFor(key)) > 0) throw await refuse();
  const { count } = await counters.hit(key, LOOP_GUARD_WINDOW_MS);
  if (count >= LOOP_GUARD_REPEATS) throw await refuse();
}

async function checkLineupCooldown({ counters, clock }: UsageDeps, orgId: string): Promise<void> {
  const lockedMs = await counters.lockedFor(`lineup_cooldown:${orgId}`);
  if (lockedMs <= 0) return;
  const seconds = Math.max(1, Math.ceil(lockedMs / 1000));
  throw new ApiError('lineup_cooldown', {
    message: 'Custom lineups are locked after repeated invalid lineups.',
    rule: 'lineup_cooldown',
    reason: `${LINEUP_FAILURES_BEFORE_COOLDOWN} invalid custom lineups within ${LINEUP_FAILURE_WINDOW_MS / 60_000} minutes`,
    retryAfterSeconds: seconds,
    recovery: { retry_at: new Date(clock().getTime() + seconds * 1000).toISOString() },
  });
}

async function recordLineupFailure({ counters }: UsageDeps, orgId: string): Promise<boolean> {
  const { count } = await counters.hit(`lineup_failures:${orgId}`, LINEUP_FAILURE_WINDOW_MS);
  if (count < LINEUP_FAILURES_BEFORE_COOLDOWN) return false;
  await counters.lock(`lineup_cooldown:${orgId}`, LINEUP_COOLDOWN_MS);
  return true;
}

function dailyCeiling(rule: string, ceiling: string, retryAfterSeconds: number): ApiError {
  return new ApiError('rate_limited', {
    message: `Daily limit reached: ${ceiling}. It resets at 00:00 UTC.`,
    rule,
    reason: ceiling,
    retryAfterSeconds,
  });
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(3)} s`;
}

/**
 * Each job's share of the reservation, in GPU-seconds; when the whole was cut to the daily budget,
 * shares shrink in proportion (rounded down, so their sum never passes what was reserved).
 */
function splitReservation(estimatesMs: readonly number[], reservedMs: number): number[] {
  const totalMs = estimatesMs.reduce((sum, ms) => sum + ms, 0);
  if (totalMs === reservedMs) return estimatesMs.map((ms) => ms / 1000);
  return estimatesMs.map((ms) => Math.floor((ms * reservedMs) / totalMs) / 1000);
}
