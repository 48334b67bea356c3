// Finished documents (the result cache) and their deliveries (decisions 2, 5, 6).
//
// A shared result (neither side custom) is reusable by every organisation; a private one only by the
// organisation that ran it. Every delivery gets its own `sim_…` id, receipt and charge, and keeps the
// exact body it answered so that the result path can give the same delivery again.
//
// Delivery is where money moves: the job's hold is settled, the delivery recorded and the job marked
// delivered in one transaction. When the database does not acknowledge that transaction the outcome is
// unknown to us too: settlement_unknown, and a retry (same job, same hold) gives the one true outcome.
import type { KeyMode } from '../accounts/keys.js';
import type { Charge, Ledger } from '../billing/ledger.js';
import { inTransaction } from '../billing/transactions.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { type Job, type JobRow, jobFromRow, type ResultScope } from './queue.js';

export interface NewResult {
  cacheKey: string;
  scope: ResultScope;
  /** The owner of a private result; ignored (stored as NULL) for a shared one. */
  orgId: string | null;
  fixtureId: number;
  dataVersion: string;
  draws: number;
  document: unknown;
  engine: string;
  runMs: number;
  gpuMs: number;
}

export interface SimulationResult extends NewResult {
  id: number;
  createdAt: Date;
}

export interface Delivery {
  id: string;
  orgId: string;
  jobId: string | null;
  resultId: number;
  mode: KeyMode;
  creditsChargedMilli: number;
  /** The body as it was delivered. */
  response: unknown;
  requestId: string | null;
  idempotencyKey: string | null;
  createdAt: Date;
}

export interface NewDelivery {
  id?: string | undefined;
  orgId: string;
  jobId: string | null;
  resultId: number;
  mode: KeyMode;
  creditsChargedMilli: number;
  response: unknown;
  requestId?: string | null | undefined;
  idempotencyKey?: string | null | undefined;
  createdAt?: Date | undefined;
}

export interface DeliveryContext {
  tx: TransactionSql;
  job: Job;
  result: SimulationResult;
  deliveryId: string;
  createdAt: Date;
  /** The settlement of a live job's hold; null for test keys. */
  charge: Charge | null;
  creditsChargedMilli: number;
}

export interface DeliverJobRequest {
  orgId: string;
  jobId: string;
  reservationId: string;
  requestId: string;
  idempotencyKey?: string | null | undefined;
  /** Builds the delivered body (the `simulation` object); it is stored as sent. */
  buildResponse(context: DeliveryContext): unknown;
}

export type DeliveryOutcome =
  | { status: 'pending'; job: Job }
  /** replayed: the job was delivered before; the stored delivery is given again and nothing is charged. */
  | { status: 'delivered'; job: Job; delivery: Delivery; replayed: boolean };

export interface ResultStore {
  findCached(lookup: {
    cacheKey: string;
    scope: ResultScope;
    orgId: string;
  }): Promise<SimulationResult | null>;
  getResult(
    resultId: number,
    options?: { tx?: TransactionSql | undefined },
  ): Promise<SimulationResult | null>;
  storeResult(tx: TransactionSql, result: NewResult): Promise<SimulationResult>;
  recordDelivery(tx: TransactionSql, delivery: NewDelivery): Promise<Delivery>;
  findDeliveryForJob(jobId: string, options?: { tx?: TransactionSql | undefined }): Promise<Delivery | null>;
  getDelivery(deliveryId: string): Promise<Delivery | null>;
  /**
   * The result path: settles and delivers a succeeded job, gives a delivered one again, reports a
   * pending one. Throws resource_missing (unknown job, another organisation's, wrong reservation),
   * simulation_failed, reservation_expired, settlement_unknown.
   */
  deliverJob(request: DeliverJobRequest): Promise<DeliveryOutcome>;
}

export interface ResultStoreDeps {
  sql: Sql;
  ledger: Ledger;
  clock?: () => Date;
}

interface ResultRow {
  id: number;
  cache_key: string;
  scope: ResultScope;
  org_id: string | null;
  fixture_id: number;
  data_version: string;
  draws: number;
  document: unknown;
  engine: string;
  run_ms: number;
  gpu_ms: number;
  created_at: Date;
}

interface DeliveryRow {
  id: string;
  org_id: string;
  job_id: string | null;
  result_id: number;
  mode: KeyMode;
  credits_charged_milli: number;
  response: unknown;
  request_id: string | null;
  idempotency_key: string | null;
  created_at: Date;
}

/** Stores a finished document; when one with the same cache key and owner exists, returns that one. */
export async function storeResult(
  tx: TransactionSql,
  result: NewResult,
  now: Date,
): Promise<SimulationResult> {
  const owner = result.scope === 'private' ? result.orgId : null;
  if (result.scope === 'private' && !owner) throw new Error('a private result needs its organisation');
  // json, not jsonb: the document keeps its key order, so every delivery of it reads the same.
  const [inserted] = await tx<ResultRow[]>`
    INSERT INTO results (cache_key, scope, org_id, fixture_id, data_version, draws, document, engine, run_ms,
                         gpu_ms, created_at)
    VALUES (${result.cacheKey}, ${result.scope}, ${owner}, ${result.fixtureId}, ${result.dataVersion},
            ${result.draws}, ${JSON.stringify(result.document)}::text::json, ${result.engine}, ${result.runMs},
            ${result.gpuMs}, ${now})
    ON CONFLICT DO NOTHING
    RETURNING *`;
  if (inserted) return resultFromRow(inserted);
  const existing = await findCachedResult(tx, {
    cacheKey: result.cacheKey,
    scope: result.scope,
    orgId: owner,
  });
  if (!existing) throw new Error(`result ${result.cacheKey} conflicted but cannot be found`);
  return existing;
}

export async function findCachedResult(
  db: Sql | TransactionSql,
  lookup: { cacheKey: string; scope: ResultScope; orgId: string | null },
): Promise<SimulationResult | null> {
  const [row] =
    lookup.scope === 'shared'
      ? await db<ResultRow[]>`
          SELECT * FROM results WHERE scope = 'shared' AND cache_key = ${lookup.cacheKey}`
      : await db<ResultRow[]>`
          SELECT * FROM results
          WHERE scope = 'private' AND org_id = ${lookup.orgId} AND cache_key = ${lookup.cacheKey}`;
  return row ? resultFromRow(row) : null;
}

export function makeResultStore(deps: ResultStoreDeps): ResultStore {
  const { sql, ledger } = deps;
  const clock = deps.clock ?? (() => new Date());

  async function getResult(resultId: number, options: { tx?: TransactionSql | undefined } = {}) {
    const db = options.tx ?? sql;
    const [row] = await db<ResultRow[]>`SELECT * FROM results WHERE id = ${resultId}`;
    return row ? resultFromRow(row) : null;
  }

  async function recordDelivery(tx: TransactionSql, delivery: NewDelivery): Promise<Delivery> {
    const [row] = await tx<DeliveryRow[]>`
      INSERT INTO deliveries (id, org_id, job_id, result_id, mode, credits_charged_milli, response, request_id,
                              idempotency_key, created_at)
      VALUES (${delivery.id ?? newId('sim')}, ${delivery.orgId}, ${delivery.jobId}, ${delivery.resultId},
              ${delivery.mode}, ${delivery.creditsChargedMilli}, ${JSON.stringify(delivery.response)}::text::json,
              ${delivery.requestId ?? null}, ${delivery.idempotencyKey ?? null}, ${delivery.createdAt ?? clock()})
      RETURNING *`;
    return deliveryFromRow(row!);
  }

  async function findDeliveryForJob(jobId: string, options: { tx?: TransactionSql | undefined } = {}) {
    const db = options.tx ?? sql;
    const [row] = await db<DeliveryRow[]>`SELECT * FROM deliveries WHERE job_id = ${jobId}`;
    return row ? deliveryFromRow(row) : null;
  }

  async function getDelivery(deliveryId: string) {
    const [row] = await sql<DeliveryRow[]>`SELECT * FROM deliveries WHERE id = ${deliveryId}`;
    return row ? deliveryFromRow(row) : null;
  }

  async function deliverJob(request: DeliverJobRequest): Promise<DeliveryOutcome> {
    const outcome = await inTransaction(
      sql,
      { onConnectionLost: 'settlement_unknown' },
      async (tx): Promise<DeliveryOutcome | { status: 'expired'; job: Job }> => {
        const [row] = await tx<JobRow[]>`SELECT * FROM jobs WHERE id = ${request.jobId} FOR NO KEY UPDATE`;
        const job = row ? jobFromRow(row) : null;
        if (!job || job.orgId !== request.orgId || job.reservationId !== request.reservationId) {
          throw new ApiError('resource_missing', {
            message: `No simulation job ${request.jobId} with reservation ${request.reservationId}.`,
          });
        }
        switch (job.status) {
          case 'queued':
          case 'running':
            return { status: 'pending', job };
          case 'failed':
            throw new ApiError('simulation_failed', {
              message: job.error?.message ?? 'The simulation job failed.',
              recovery: { job_id: job.id, reservation_id: job.reservationId },
            });
          case 'expired':
            return { status: 'expired', job };
          case 'delivered': {
            const delivery = await findDeliveryForJob(job.id, { tx });
            if (!delivery) throw new Error(`job ${job.id} is delivered but has no delivery`);
            return { status: 'delivered', job, delivery, replayed: true };
          }
          case 'succeeded':
            break;
        }
        const result = await getResult(job.resultId!, { tx });
        if (!result)
          throw new ApiError('payload_missing', { message: `The result of ${job.id} is missing.` });
        let charge: Charge | null = null;
        if (job.mode === 'live') {
          try {
            charge = await ledger.settle(job.reservationId, {
              tx,
              requestId: request.requestId,
              idempotencyKey: request.idempotencyKey ?? null,
            });
          } catch (error) {
            if (!(error instanceof ApiError) || error.code !== 'reservation_expired') throw error;
            // The hold ended before this delivery (the ledger released it if the sweeper had not yet).
            const [expired] = await tx<JobRow[]>`
              UPDATE jobs SET status = 'expired' WHERE id = ${job.id} AND status = 'succeeded' RETURNING *`;
            return { status: 'expired', job: jobFromRow(expired!) };
          }
        }
        const deliveryId = newId('sim');
        const createdAt = clock();
        const creditsChargedMilli = charge?.amount ?? 0;
        const response = await request.buildResponse({
          tx,
          job,
          result,
          deliveryId,
          createdAt,
          charge,
          creditsChargedMilli,
        });
        const delivery = await recordDelivery(tx, {
          id: deliveryId,
          orgId: job.orgId,
          jobId: job.id,
          resultId: result.id,
          mode: job.mode,
          creditsChargedMilli,
          response,
          requestId: request.requestId,
          idempotencyKey: request.idempotencyKey ?? null,
          createdAt,
        });
        const [delivered] = await tx<JobRow[]>`
          UPDATE jobs SET status = 'delivered' WHERE id = ${job.id} AND status = 'succeeded' RETURNING *`;
        return { status: 'delivered', job: jobFromRow(delivered!), delivery, replayed: false };
      },
    );
    if (outcome.status === 'expired') {
      throw new ApiError('reservation_expired', {
        message: `The credit hold ${outcome.job.reservationId} ended without delivery.`,
        recovery: { job_id: outcome.job.id, reservation_id: outcome.job.reservationId },
      });
    }
    return outcome;
  }

  return {
    findCached: (lookup) => findCachedResult(sql, lookup),
    getResult,
    storeResult: (tx, result) => storeResult(tx, result, clock()),
    recordDelivery,
    findDeliveryForJob,
    getDelivery,
    deliverJob,
  };
}

function resultFromRow(row: ResultRow): SimulationResult {
  return {
    id: row.id,
    cacheKey: row.cache_key,
    scope: row.scope,
    orgId: row.org_id,
    fixtureId: row.fixture_id,
    dataVersion: row.data_version,
    draws: row.draws,
    document: row.document,
    engine: row.engine,
    runMs: row.run_ms,
    gpuMs: row.gpu_ms,
    createdAt: row.created_at,
  };
}

function deliveryFromRow(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    orgId: row.org_id,
    jobId: row.job_id,
    resultId: row.result_id,
    mode: row.mode,
    creditsChargedMilli: row.credits_charged_milli,
    response: row.response,
    requestId: row.request_id,
    idempotencyKey: row.idempotency_key,
    createdAt: row.created_at,
  };
}
