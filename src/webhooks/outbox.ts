// The outbox (docs/api.md §6): events are written in the transaction of the change they
// report, so an event exists exactly when its change committed, and a worker delivers it later (at least
// once: delivery.ts). The job statements call `jobsEnded` (src/jobs: JobEvents), the ledger calls
// `balanceLowered` (src/billing: BalanceWatch) and projections call `projectionSucceeded`, each with their
// transaction. `data.object` is the job, batch or projection as its GET shows it, rendered by the HTTP
// views the service graph hands in (src/wiring.ts), so the event and the API never disagree on a shape.
import { creditsNumber } from '../billing/amounts.js';
import type { BalanceLowered, BalanceWatch } from '../billing/types.js';
import { afterCommit } from '../db/commit-hooks.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { newId } from '../ids.js';
import type { Batch, Job, JobEvents } from '../jobs/types.js';
import type { BatchSummary } from '../simulations/batch-status.js';
import { batchesCompletedIn, type CompletedBatch, decideBatchChecks } from './batch-completions.js';
import { insertEvents } from './event-store.js';
import { creditsLowThreshold } from './settings-store.js';
import type { NewEvent, WebhookEvent } from './types.js';

/** The wire shapes of the objects events carry (src/http/views, through src/wiring.ts). */
export interface EventObjects {
  job(job: Job): unknown;
  batch(batch: Batch, summary: BatchSummary): unknown;
}

/** A projection as its GET shows it, with what the event needs to know of its owner. */
export interface SucceededProjection {
  id: string;
  orgId: string;
  livemode: boolean;
  object: unknown;
}

export interface WebhookOutbox extends JobEvents, BalanceWatch {
  /**
   * The one door into webhook_events: writes `events` in `tx` and schedules their deliveries. `wake`:
   * this process's deliverer is to run a round once `tx` commits even if no delivery was scheduled (a
   * batch check was left for it).
   */
  write(
    tx: TransactionSql,
    events: readonly NewEvent[],
    options?: { wake?: boolean },
  ): Promise<WebhookEvent[]>;
  /** Decides the batch checks left by transactions that ended jobs together (batch-completions.ts). */
  decideBatchChecks(sql: Sql): Promise<number>;
  /** Season projections (through src/wiring.ts): in the transaction that stores a succeeded projection job. */
  projectionSucceeded(tx: TransactionSql, projection: SucceededProjection): Promise<void>;
}

export interface OutboxDeps {
  clock: () => Date;
  objects: EventObjects;
  /**
   * Called once a transaction that scheduled deliveries or left a batch check has committed (this
   * process's deliverer wakes).
   */
  onCommitted?: (() => void) | undefined;
}

/** The event as every delivery sends it and every read shows it. */
function eventBody(id: string, event: NewEvent, created: Date): string {
  return JSON.stringify({
    id,
    object: 'event',
    type: event.type,
    created: Math.floor(created.getTime() / 1000),
    livemode: event.mode === 'live',
    data: { object: event.object },
  });
}

const SUCCEEDED: ReadonlySet<Job['status']> = new Set(['succeeded', 'delivered']);

/** The outbox's `write` (WebhookOutbox). */
async function writeEvents(
  deps: OutboxDeps,
  tx: TransactionSql,
  events: readonly NewEvent[],
  options: { wake?: boolean } = {},
): Promise<WebhookEvent[]> {
  const wakeOnCommit = () => {
    const woken = deps.onCommitted;
    if (woken) afterCommit(tx, woken);
  };
  if (events.length === 0) {
    if (options.wake) wakeOnCommit();
    return [];
  }
  const createdAt = deps.clock();
  const rows = events.map((event) => {
    const id = newId('evt', 24);
    return {
      id,
      orgId: event.orgId,
      mode: event.mode,
      type: event.type,
      objectId: event.objectId,
      body: eventBody(id, event, createdAt),
      createdAt,
    };
  });
  const { inserted, deliveries } = await insertEvents(tx, rows);
  // The deliverer has work only if a delivery was scheduled (or a check left): an event no endpoint
  // subscribes to is only read back. Woken for every event, a round after each lone job claimed
  // nothing and decided nothing, in four round trips (the due deliveries; the checks' BEGIN, DELETE,
  // COMMIT). The deliverer's poll still finds whatever is due later (a retry's backoff).
  if (deliveries > 0 || options.wake) wakeOnCommit();
  return inserted;
}

export function makeWebhookOutbox(deps: OutboxDeps): WebhookOutbox {
  const write = (tx: TransactionSql, events: readonly NewEvent[], options?: { wake?: boolean }) =>
    writeEvents(deps, tx, events, options);

  /** batch.completed events of batches found complete. */
  const completionEvents = (completed: readonly CompletedBatch[]): NewEvent[] =>
    completed.map(({ batch, summary }) => ({
      orgId: batch.orgId,
      mode: batch.mode,
      type: 'batch.completed',
      objectId: batch.id,
      object: deps.objects.batch(batch, summary),
    }));

  async function jobsEnded(tx: TransactionSql, jobs: readonly Job[]): Promise<void> {
    const events: NewEvent[] = [];
    for (const job of jobs) {
      const succeeded = SUCCEEDED.has(job.status);
      if (!succeeded && job.status !== 'failed') continue;
      events.push({
        orgId: job.orgId,
        mode: job.mode,
        type: succeeded ? 'simulation.succeeded' : 'simulation.failed',
        objectId: job.id,
        object: deps.objects.job(job),
      });
    }
    const batchIds = [...new Set(jobs.flatMap((job) => (job.batchId ? [job.batchId] : [])))];
    const { completed, checksLeft } = await batchesCompletedIn(tx, batchIds, deps.clock());
    events.push(...completionEvents(completed));
    await write(tx, events, { wake: checksLeft > 0 });
  }

  /** credits.low when a charge takes the balance from at or above the organisation's threshold to below it. */
  async function balanceLowered(tx: TransactionSql, change: BalanceLowered): Promise<void> {
    const threshold = await creditsLowThreshold(tx, change.orgId);
    if (threshold === null || change.beforeMilli < threshold || change.afterMilli >= threshold) return;
    await write(tx, [
      {
        orgId: change.orgId,
        mode: 'live',
        type: 'credits.low',
        objectId: change.orgId,
        object: {
          object: 'credits_low',
          balance: creditsNumber(change.afterMilli),
          threshold: creditsNumber(threshold),
        },
      },
    ]);
  }

  async function projectionSucceeded(tx: TransactionSql, projection: SucceededProjection): Promise<void> {
    await write(tx, [
      {
        orgId: projection.orgId,
        mode: projection.livemode ? 'live' : 'test',
        type: 'projection.succeeded',
        objectId: projection.id,
        object: projection.object,
      },
    ]);
  }

  return {
    write,
    jobsEnded,
    balanceLowered,
    projectionSucceeded,
    decideBatchChecks: (sql) =>
      decideBatchChecks(sql, (tx, completed) => write(tx, completionEvents(completed))),
  };
}
