// Usage limits (docs/decisions.md §3, docs/api.md §8): every 429 with its rule and Retry-After, GPU-second
// reservation and settlement, and admissions that stay exact when many run at once.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedDocument } from '../../src/engine/stored-document.js';
import { ApiError } from '../../src/errors.js';
import { newId } from '../../src/ids.js';
import { countOpenJobGroups } from '../../src/jobs/job-store.js';
import { makeUsageLimits, type UsageLimits, type UsageOrg } from '../../src/limits/usage.js';
import { makeMemoryWindowCounter } from '../../src/limits/window-counter.js';
import { storeResult } from '../../src/results/result-store.js';
import { insertOrg, manualClock } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase, usingServer } from '../helpers/database.js';
import { countingRoundTrips } from '../helpers/statements.js';
import { makeSimParts, newJob, type SimParts } from '../jobs/setup.js';

let db: TestDatabase;
let parts: SimParts;
let usage: UsageLimits;
// One minute before midnight UTC: a daily ceiling answers Retry-After 60.
const clock = manualClock('2026-03-10T23:59:00Z');
const counters = makeMemoryWindowCounter(() => clock().getTime());

beforeAll(async () => {
  db = await createTestDatabase({ max: 8 });
  parts = makeSimParts(db, clock);
  usage = makeUsageLimits({ sql: db.sql, counters, clock });
});

afterAll(async () => {
  await counters.close();
  await parts.queue.close();
  await db.close();
});

async function newOrg(limitOverrides: Record<string, number> = {}): Promise<UsageOrg> {
  const id = await insertOrg(db.sql, { plan: 'pro' });
  return { id, plan: 'pro', limitOverrides };
}

/** A submission as the route makes it: admission, holds and jobs in one transaction. */
async function submit(
  org: UsageOrg,
  options: { kind?: 'simulation' | 'batch'; estimates?: number[]; items?: number; cached?: boolean } = {},
) {
  const kind = options.kind ?? 'simulation';
  const items = options.items ?? 1;
  const estimates = options.cached ? [] : (options.estimates ?? Array.from({ length: items }, () => 1));
  return db.sql.begin(async (tx) => {
    const admission = await usage.admitSubmission(tx, {
      org,
      kind,
      gpuSecondsEstimates: estimates,
      countOpenJobGroups: options.cached ? undefined : (tx) => countOpenJobGroups(tx, org.id),
    });
    if (options.cached) return { admission, jobs: [] };
    const jobs = [];
    for (let index = 0; index < items; index++) {
      const reservationId = newId('res');
      await parts.ledger.reserve(org.id, 100, { holdId: reservationId, requestId: 'req_usage', tx });
      jobs.push({
        ...newJob(org.id, { reservationId, draws: 100, mode: 'live', inputs: { n: newId('req') } }),
        usageDay: admission.day,
        gpuSecondsReserved: admission.gpuSecondsReserved[index] ?? 0,
      });
    }
    if (kind === 'batch') {
      const created = await parts.queue.enqueueBatch(
        tx,
        { orgId: org.id, mode: 'live', draws: 100, requestId: 'r' },
        jobs,
      );
      return { admission, jobs: created.jobs };
    }
    return { admission, jobs: [await parts.queue.enqueue(tx, jobs[0]!)] };
  });
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

async function finishAll(orgId: string, gpuSecondsUsed = 0) {
  const claimed = await parts.queue.claim('w', 1000, 60_000);
  for (const job of claimed.filter((row) => row.orgId === orgId)) {
    await parts.queue.complete(job.id, {
      resultId: await resultId(job.cacheKey),
      gpuSecondsUsed,
      engine: 'cpu',
    });
  }
  for (const job of claimed.filter((row) => row.orgId !== orgId))
    await parts.queue.fail(job.id, { code: 'x', message: 'x' });
}

async function resultId(cacheKey: string): Promise<number> {
  const stored = await db.sql.begin((tx) =>
    storeResult(
      tx,
      {
        cacheKey,
        scope: 'shared',
        orgId: null,
        fixtureId: 1,
        dataVersion: 'dv',
        draws: 100,
        summary: { homeWin: 0.5, draw: 0.3, awayWin: 0.2, expectedGoalsHome: 1.5, expectedGoalsAway: 1 },
        document: storedDocument('{}'),
        engine: 'cpu',
        runMs: 1,
        gpuMs: 1,
      },
      new Date(),
    ),
  );
  return stored.id;
}

describe('daily ceilings', () => {
  it('submissions per UTC day: 429 rate_limited, rule submissions_per_day, Retry-After to 00:00 UTC', async () => {
    const org = await newOrg({ submissions_per_day: 2, concurrent_simulations: 100 });
    await submit(org);
    await submit(org, { cached: true });
    const error = await refusal(submit(org));
    expect(error.code).toBe('rate_limited');
    expect(error.status).toBe(429);
    expect(error.options).toMatchObject({ rule: 'submissions_per_day', retryAfterSeconds: 60 });
    expect((await usage.usageToday(org.id)).submissions).toBe(2);

    clock.advance(60_000);
    await submit(org);
    expect((await usage.usageToday(org.id)).submissions).toBe(1);
    clock.set('2026-03-10T23:59:00Z');
  });

  it('refuses a cache hit past the submissions ceiling the same way, on a used day and on a new one', async () => {
    const org = await newOrg({ submissions_per_day: 1, concurrent_simulations: 100 });
    await submit(org, { cached: true });
    const error = await refusal(submit(org, { cached: true }));
    expect(error.options).toMatchObject({ rule: 'submissions_per_day', retryAfterSeconds: 60 });
    expect((await usage.usageToday(org.id)).submissions).toBe(1);

    const none = await newOrg({ submissions_per_day: 0, concurrent_simulations: 100 });
    const first = await refusal(submit(none, { cached: true }));
    expect(first.options).toMatchObject({ rule: 'submissions_per_day' });
    expect((await usage.usageToday(none.id)).submissions).toBe(0);
  });

  it('batches per UTC day: a batch is one submission and one batch', async () => {
    const org = await newOrg({ batches_per_day: 1, concurrent_simulations: 100 });
    const { jobs } = await submit(org, { kind: 'batch', items: 3 });
    expect(jobs).toHaveLength(3);
    expect(await usage.usageToday(org.id)).toMatchObject({ submissions: 1, batches: 1 });
    const error = await refusal(submit(org, { kind: 'batch', items: 2 }));
    expect(error.code).toBe('rate_limited');
    expect(error.options).toMatchObject({ rule: 'batches_per_day', retryAfterSeconds: 60 });
    await submit(org);
    expect(await usage.usageToday(org.id)).toMatchObject({ submissions: 2, batches: 1 });
  });

  it('GPU-seconds: estimates reserved, the measured time replaces them, a cache hit uses none', async () => {
    const org = await newOrg({ gpu_seconds_per_day: 10, concurrent_simulations: 100 });
    const first = await submit(org, { estimates: [6] });
    expect(first.admission.gpuSecondsReserved).toEqual([6]);
    expect(first.jobs[0]).toMatchObject({ gpuSecondsReserved: 6, usageDay: '2026-03-10' });
    const error = await refusal(submit(org, { estimates: [4.5] }));
    expect(error.code).toBe('rate_limited');
    expect(error.options).toMatchObject({ rule: 'gpu_seconds_per_day', retryAfterSeconds: 60 });
    expect(error.options.reason).toContain('10 GPU-seconds per UTC day');

    // The job measured 1.5 s: 4.5 s more now fit, exactly.
    await finishAll(org.id, 1.5);
    expect((await usage.usageToday(org.id)).gpuMs).toBe(1500);
    await submit(org, { estimates: [4.5, 4], kind: 'batch', items: 2 });
    expect((await usage.usageToday(org.id)).gpuMs).toBe(10_000);
    await submit(org, { cached: true });
    await refusal(submit(org, { estimates: [0.001] }));
  });

  it('a request may reserve the full daily budget, even when its estimate is larger', async () => {
    const org = await newOrg({ gpu_seconds_per_day: 10, concurrent_simulations: 100 });
    const big = await submit(org, { estimates: [30, 10], kind: 'batch', items: 2 });
    expect(big.admission.gpuSecondsReserved.reduce((sum, seconds) => sum + seconds, 0)).toBeLessThanOrEqual(
      10,
    );
    expect((await usage.usageToday(org.id)).gpuMs).toBe(10_000);
    const error = await refusal(submit(org, { estimates: [0.5] }));
    expect(error.options.rule).toBe('gpu_seconds_per_day');
    // The measured times replace the shares: 2 s used in all frees 8 s.
    await finishAll(org.id, 1);
    expect((await usage.usageToday(org.id)).gpuMs).toBe(2000);
  });

  it('a refused submission later in the transaction leaves the counters untouched', async () => {
    const org = await newOrg();
    await db.sql
      .begin(async (tx) => {
        await usage.admitSubmission(tx, { org, kind: 'batch', gpuSecondsEstimates: [5] });
        throw new ApiError('balance_too_low');
      })
      .catch(() => {});
    expect(await usage.usageToday(org.id)).toMatchObject({ submissions: 0, batches: 0, gpuMs: 0 });
  });
});

describe('open jobs', () => {
  it('429 concurrency_limited at the limit; a batch counts once; a finished job frees its slot', async () => {
    const org = await newOrg({ concurrent_simulations: 2 });
    await submit(org, { kind: 'batch', items: 3 });
    await submit(org);
    const error = await refusal(submit(org));
    expect(error.code).toBe('concurrency_limited');
    expect(error.options).toMatchObject({ rule: 'concurrent_simulations', retryAfterSeconds: 5 });
    expect(error.options.recovery).toMatchObject({ open_jobs: 2, limit: 2 });
    // A cache hit opens no job.
    await submit(org, { cached: true });
    await finishAll(org.id);
    await submit(org);
  });

  it('concurrent submissions never pass the open-job or daily limits', async () => {
    const org = await newOrg({ concurrent_simulations: 4 });
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => submit(org)));
    const admitted = outcomes.filter((outcome) => outcome.status === 'fulfilled').length;
    const refused = outcomes.filter(
      (outcome) =>
        outcome.status === 'rejected' && (outcome.reason as ApiError).code === 'concurrency_limited',
    ).length;
    expect([admitted, refused]).toEqual([4, 16]);
    expect(await parts.queue.openJobCount(org.id)).toBe(4);

    const daily = await newOrg({ submissions_per_day: 5, concurrent_simulations: 100 });
    const dailyOutcomes = await Promise.allSettled(Array.from({ length: 20 }, () => submit(daily)));
    expect(dailyOutcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(5);
    expect((await usage.usageToday(daily.id)).submissions).toBe(5);
    if (!usingServer)
      console.info('usage: concurrency checked on PGlite, where nothing contends; run with DATABASE_URL too');
  });

  it("counts the open jobs behind the day's lock, in its round trip", async () => {
    const org = await newOrg();
    await submit(org);
    const counted = { roundTrips: 0 };
    const admission = await db.sql.begin((tx) =>
      usage.admitSubmission(countingRoundTrips(tx, /INSERT INTO usage_days/, counted), {
        org,
        kind: 'simulation',
        gpuSecondsEstimates: [1],
        countOpenJobGroups: (counting) => countOpenJobGroups(counting, org.id),
      }),
    );
    // The day's row created and locked with the open jobs counted, then the guarded update: it was
    // four round trips one after another.
    expect(counted.roundTrips).toBe(2);
    expect(admission.usage.submissions).toBe(2);
  });
});

describe('loop guard and lineup cooldown', () => {
  const request = { method: 'POST', path: '/v1/simulations', bodyHash: 'abc' };

  it('the same request 8 times within 10 s: 429 loop_guard, Retry-After 10, until the burst stops', async () => {
    const org = await newOrg();
    for (let n = 1; n <= 7; n++) await usage.checkLoopGuard({ orgId: org.id, ...request });
    const error = await refusal(usage.checkLoopGuard({ orgId: org.id, ...request }));
    expect(error.code).toBe('loop_guard');
    expect(error.status).toBe(429);
    expect(error.options).toMatchObject({ rule: 'loop_guard', retryAfterSeconds: 10 });
    // Another body, path or organisation is another request.
    await usage.checkLoopGuard({ orgId: org.id, ...request, bodyHash: 'other' });
    await usage.checkLoopGuard({ orgId: (await newOrg()).id, ...request });
    // Still repeating: still refused, 9 s later too.
    clock.advance(9_000);
    await refusal(usage.checkLoopGuard({ orgId: org.id, ...request }));
    clock.advance(9_000);
    await refusal(usage.checkLoopGuard({ orgId: org.id, ...request }));
    // Quiet for 10 s: allowed again.
    clock.advance(10_000);
    await usage.checkLoopGuard({ orgId: org.id, ...request });
  });

  it('5 custom-lineup failures within 10 minutes: 429 lineup_cooldown for 10 minutes', async () => {
    const org = await newOrg();
    for (let n = 1; n <= 4; n++) {
      expect(await usage.recordLineupFailure(org.id)).toBe(false);
      clock.advance(60_000);
    }
    await usage.checkLineupCooldown(org.id);
    expect(await usage.recordLineupFailure(org.id)).toBe(true);
    const error = await refusal(usage.checkLineupCooldown(org.id));
    expect(error.code).toBe('lineup_cooldown');
    expect(error.status).toBe(429);
    expect(error.options).toMatchObject({ rule: 'lineup_cooldown', retryAfterSeconds: 600 });
    expect(error.options.recovery).toEqual({ retry_at: new Date(clock().getTime() + 600_000).toISOString() });
    // Another organisation is unaffected.
    await usage.checkLineupCooldown((await newOrg()).id);
    clock.advance(599_000);
    expect((await refusal(usage.checkLineupCooldown(org.id))).options.retryAfterSeconds).toBe(1);
    clock.advance(1_000);
    await usage.checkLineupCooldown(org.id);
  });

  it('failures spread over more than 10 minutes do not lock', async () => {
    const org = await newOrg();
    for (let n = 1; n <= 4; n++) await usage.recordLineupFailure(org.id);
    clock.advance(10 * 60_000);
    expect(await usage.recordLineupFailure(org.id)).toBe(false);
    await usage.checkLineupCooldown(org.id);
  });
});
