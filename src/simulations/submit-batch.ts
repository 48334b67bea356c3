// POST /v1/simulations/batch (docs/api.md §4.5): 1 to 1,000 distinct selectors. Every item is checked
// before anything is reserved; an item that cannot run carries its error and the others go ahead. The
// runnable items are admitted as one submission, held together (all or nothing) and queued as jobs. A
// batch with no runnable item is refused whole (batch_rejected): no batch, no hold, nothing counted.
// The work is set-based, so its cost hardly grows with the items: their fixtures are read in one
// snapshot, their cached results in one statement, and the submitting transaction writes the holds,
// their ledger rows, the batch and its jobs in a fixed number of statements.
import { ownerOf } from '../accounts/caller.js';
import type { TransactionSql } from '../db/connection.js';
import { databaseRead, inTransaction } from '../db/transactions.js';
import { ApiError } from '../errors.js';
import { loadFixtures } from '../fixtures/fixture-record.js';
import type { CallContext } from '../jobs/call-context.js';
import type { Batch, Job, NewJob, RejectedBatchItem } from '../jobs/types.js';
import { usageOrg } from '../limits/usage.js';
import { findCachedResultIds } from '../results/result-store.js';
import { assertQueueHasRoom, newJobFor } from './admission.js';
import { type BatchStatus, type BatchSummary, batchStatus, summariseBatch, tallyOf } from './batch-status.js';
import { type PreparedRun, prepareRun, runDraws } from './prepare-run.js';
import {
  type BatchItemRequest,
  type BatchRequest,
  DEFAULT_DRAWS,
  type FixtureSelector,
  type SimulationDeps,
} from './types.js';

export type BatchItemSubmission =
  | { kind: 'rejected'; selector: BatchItemRequest; error: ApiError }
  | { kind: 'queued'; job: Job; run: PreparedRun };

export interface BatchSubmission {
  kind: 'submitted';
  batch: Batch;
  summary: BatchSummary;
  draws: number;
  livemode: boolean;
  /** In the order of the request. */
  items: BatchItemSubmission[];
}

/** Every item of a batch was rejected: a 400 that carries each item's error (docs/api.md §4.5). */
export class BatchRejectedError extends ApiError {
  constructor(readonly items: readonly { index: number; selector: FixtureSelector; error: ApiError }[]) {
    super('batch_rejected', {
      param: 'fixtures',
      message: `None of the ${items.length} items of the batch can run; nothing was reserved.`,
    });
  }
}

/** A new batch, or (a retry whose first attempt created one) that batch's status. */
export async function submitBatch(
  deps: SimulationDeps,
  ctx: CallContext,
  request: BatchRequest,
): Promise<BatchSubmission | BatchStatus> {
  // Every item makes the same draws: a test key's are capped alike (runDraws).
  const requestedDraws = request.draws ?? DEFAULT_DRAWS;
  const { draws } = runDraws(ctx.caller, requestedDraws);
  if (ctx.idempotency?.batchId) return batchStatus(deps, ctx, ctx.idempotency.batchId);
  refuseRepeatedSelectors(request.fixtures);
  refuseRepeatedCustomIds(request.fixtures);
  const prepared = await prepareItems(deps, ctx, request.fixtures, requestedDraws);
  refuseSameMatch(prepared);
  const runs = prepared.flatMap((item) => ('run' in item ? [item.run] : []));
  if (runs.length === 0) {
    throw new BatchRejectedError(
      prepared.map((item, index) => ({
        index,
        selector: request.fixtures[index]!,
        error: (item as { error: ApiError }).error,
      })),
    );
  }
  const cachedIds = await cachedResultIds(deps, ctx, runs);
  if (runs.some((run) => !cachedIds.has(run.cacheKey))) await assertQueueHasRoom(deps);
  const { batch, jobs } = await inTransaction(deps.sql, {}, (tx) =>
    reserveAndEnqueue(deps, ctx, tx, { request, prepared, cachedIds, draws }),
  );
  let jobIndex = 0;
  const items = prepared.map((item, index): BatchItemSubmission => {
    if ('error' in item) return { kind: 'rejected', selector: request.fixtures[index]!, error: item.error };
    return { kind: 'queued', job: jobs[jobIndex++]!, run: item.run };
  });
  const summary = summariseBatch(batch, tallyOf(jobs));
  return { kind: 'submitted', batch, summary, draws, livemode: ctx.caller.livemode, items };
}

type PreparedItem = { run: PreparedRun } | { error: ApiError };

/** The request positions of the runnable items, in the order their jobs were created. */
function runnablePositions(prepared: readonly PreparedItem[]): number[] {
  return prepared.flatMap((item, position) => ('run' in item ? [position] : []));
}

/** What a batch keeps of its rejected items (docs/api.md §4.5): they have no job. */
function rejectedItems(request: BatchRequest, prepared: readonly PreparedItem[]): RejectedBatchItem[] {
  return prepared.flatMap((item, position) => {
    if (!('error' in item)) return [];
    const selector = request.fixtures[position]!;
    const fixture = Number(selector.fixture_id ?? Number.NaN);
    const { code, message, options } = item.error;
    return [
      {
        position,
        fixture: Number.isSafeInteger(fixture) && fixture > 0 ? fixture : null,
        custom_id: selector.custom_id ?? null,
        error: { code, message, param: options.param ?? null, recovery: options.recovery ?? null },
      },
    ];
  });
}

/** custom_id is unique within a batch (docs/api.md §4.5). */
function refuseRepeatedCustomIds(items: readonly BatchItemRequest[]): void {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    if (item.custom_id === undefined) return;
    const first = seen.get(item.custom_id);
    if (first !== undefined) {
      throw new ApiError('parameter_invalid', {
        param: `fixtures.${index}.custom_id`,
        message: `fixtures.${index}.custom_id repeats fixtures.${first}.custom_id; custom ids must be unique within a batch.`,
      });
    }
    seen.set(item.custom_id, index);
  });
}

/** Batch selectors must be distinct (docs/api.md §4.5). */
function refuseRepeatedSelectors(selectors: readonly FixtureSelector[]): void {
  const seen = new Map<string, number>();
  selectors.forEach((selector, index) => {
    const key = JSON.stringify([
      selector.fixture_id === undefined ? null : String(selector.fixture_id).trim(),
      selector.home?.toLowerCase().trim() ?? null,
      selector.away?.toLowerCase().trim() ?? null,
      selector.date ?? null,
      selector.lineups ?? null,
      selector.market ?? null,
      selector.offered_odds ?? null,
      selector.from_state ?? null,
    ]);
    const first = seen.get(key);
    if (first !== undefined) {
      throw new ApiError('parameter_invalid', {
        param: `fixtures.${index}`,
        message: `fixtures.${index} repeats fixtures.${first}; batch selectors must be distinct.`,
      });
    }
    seen.set(key, index);
  });
}

/**
 * Selectors written differently can still name one match: `{home, away}` and the `fixture_id` of the same
 * fixture, or two lineup choices that resolve to the same players. Both would run and be charged for one
 * result, so the batch is refused before anything is held (docs/api.md §4.5). Same fixture and same
 * lineups is the same cache key: the key covers the fixture's inputs and the resolved lineups, and the
 * mode, owner and draws are the batch's own.
 */
function refuseSameMatch(prepared: readonly PreparedItem[]): void {
  const seen = new Map<string, number>();
  prepared.forEach((item, index) => {
    if (!('run' in item)) return;
    const first = seen.get(item.run.cacheKey);
    if (first !== undefined) {
      throw new ApiError('parameter_invalid', {
        param: `fixtures.${index}`,
        message:
          `fixtures.${index} resolves to the same fixture (${item.run.fixture.fixtureId}) and lineups as ` +
          `fixtures.${first}; batch selectors must name distinct matches. Nothing was reserved.`,
      });
    }
    seen.set(item.run.cacheKey, index);
  });
}

// An item that cannot run carries its error; a 429 or a 5xx refuses the whole batch. The fixtures named
// by id are read together first; an item that names its teams looks its fixture up on its own.
/** Items a batch's submission prepares at once (prepareItems). */
const PREPARED_AT_ONCE = 8;

async function prepareItems(
  deps: SimulationDeps,
  ctx: CallContext,
  selectors: readonly FixtureSelector[],
  requestedDraws: number,
): Promise<PreparedItem[]> {
  const ids = selectors.flatMap((selector) => {
    const id = Number(
      typeof selector.fixture_id === 'string' ? selector.fixture_id.trim() : selector.fixture_id,
    );
    return Number.isSafeInteger(id) && id > 0 ? [id] : [];
  });
  const stored = await loadFixtures(deps.sql, ids);
  const preloaded = new Map(ids.map((id) => [id, stored.get(id) ?? null]));
  const prepared: PreparedItem[] = new Array(selectors.length);
  const prepare = async (index: number) => {
    try {
      const prefix = `fixtures.${index}`;
      const run = await prepareRun(deps, ctx.caller, selectors[index]!, requestedDraws, prefix, preloaded);
      prepared[index] = { run };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500 || error.status === 429) throw error;
      prepared[index] = { error };
    }
  };
  // A few items at a time: a fitted item's market fit runs on a job thread (market-request.ts
  // marketFitFor, some 4 ms), and one at a time a batch of them would use one thread of the engine.
  // A failure that is not the item's own (prepare throws it) ends the batch: no other item starts after it.
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: Math.min(PREPARED_AT_ONCE, selectors.length) }, async () => {
      while (!failed && next < selectors.length) {
        try {
          await prepare(next++);
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    }),
  );
  return prepared;
}

/** Cache key → stored result id, for the runs whose result exists: one statement. */
async function cachedResultIds(
  deps: SimulationDeps,
  ctx: CallContext,
  runs: readonly PreparedRun[],
): Promise<Map<string, number>> {
  const lookups = runs.map((run) => ({ cacheKey: run.cacheKey, scope: run.resolved.scope }));
  return databaseRead(() => findCachedResultIds(deps.sql, ctx.caller.org.id, lookups));
}

/** What the submitting transaction writes from. */
interface BatchPlan {
  request: BatchRequest;
  prepared: readonly PreparedItem[];
  cachedIds: Map<string, number>;
  draws: number;
}

/**
 * The submitting transaction: admission, every hold (reserveMany: all or none), the batch with its
 * metadata and rejected items, and its jobs with their places and custom ids. Its statements do not
 * grow with the items.
 */
async function reserveAndEnqueue(
  deps: SimulationDeps,
  ctx: CallContext,
  tx: TransactionSql,
  plan: BatchPlan,
): Promise<{ batch: Batch; jobs: Job[] }> {
  const { caller } = ctx;
  const { request, prepared, cachedIds, draws } = plan;
  const positions = runnablePositions(prepared);
  const runs = positions.map((position) => (prepared[position] as { run: PreparedRun }).run);
  const toRun = runs.filter((run) => !cachedIds.has(run.cacheKey));
  const admission = await deps.usage.admitSubmission(tx, {
    org: usageOrg(caller),
    kind: 'batch',
    gpuSecondsEstimates: caller.livemode ? toRun.map(() => deps.engine.estimateSeconds(draws)) : [],
    countOpenJobGroups: toRun.length > 0 ? (tx) => deps.openJobGroups(tx, caller.org.id) : undefined,
  });
  const metadata = request.metadata ?? {};
  let reservedIndex = 0;
  const newJobs: NewJob[] = runs.map((run, i) => {
    const cachedResultId = cachedIds.get(run.cacheKey) ?? null;
    const reserved = cachedResultId === null && caller.livemode;
    return newJobFor(ctx, run, draws, {
      usageDay: admission.day,
      gpuSecondsReserved: reserved ? (admission.gpuSecondsReserved[reservedIndex++] ?? 0) : 0,
      cachedResultId,
      batchPosition: positions[i]!,
      customId: request.fixtures[positions[i]!]!.custom_id ?? null,
      metadata,
    });
  });
  if (caller.livemode) {
    await deps.ledger.reserveMany(
      caller.org.id,
      newJobs.map((job) => ({ holdId: job.reservationId, milli: job.priceMilli })),
      { requestId: ctx.requestId, idempotencyKey: ctx.idempotencyKey, tx },
    );
  }
  const created = await deps.queue.enqueueBatch(
    tx,
    {
      ...ownerOf(caller),
      draws,
      requestId: ctx.requestId,
      idempotencyKey: ctx.idempotencyKey,
      metadata,
      rejectedItems: rejectedItems(request, prepared),
    },
    newJobs,
  );
  if (ctx.idempotency) await deps.attachJob(tx, ctx.idempotency, { batchId: created.batch.id });
  return created;
}
