// A page of a batch's results stream delivered set-based (docs/decisions.md §6): the page's jobs, locked
// by the caller in id order, are settled and delivered with one statement per table, not a delivery
// each. The outcome of every job is the one its result path would give (deliver.ts): a finished job is
// charged once and delivered, a delivered one is given again free, a job whose hold ended is
// reservation_expired; locks are taken in the order every delivery takes them (jobs, the account, the
// holds, the fixture summaries), so a page never waits in a circle with a single delivery.
import type { ManySettled } from '../billing/holds.js';
import type { Sql, TransactionSql } from '../db/connection.js';
import { ApiError } from '../errors.js';
import { recordFixtureSummaries } from '../fixtures/fixture-list.js';
import { newId } from '../ids.js';
import type { DeliveryRequest } from '../jobs/call-context.js';
import { deliveryFacts, holdsCredits } from '../jobs/delivery-core.js';
import type { Job } from '../jobs/types.js';
import {
  type Delivery,
  findDeliveriesForJobs,
  getResults,
  insertDeliveries,
  type NewDelivery,
  type SimulationResult,
} from '../results/result-store.js';
import {
  type DeliveredSimulation,
  type DeliveryDeps,
  type LockedOutcome,
  type StatusOutcome,
  statusOutcome,
  summaryOf,
} from './deliver.js';

/** A job's outcome on the page: as deliverLockedJob's, or the error of a job that ended without a document. */
export type PageOutcome = LockedOutcome | StatusOutcome;

/**
 * The page's locked jobs delivered in the caller's transaction, in statements whose number does not grow
 * with the page: deliveries read again and results not in memory (one each, when there are any), the
 * account and the holds locked, the pending holds charged (and the credits.low threshold read), then the
 * deliveries, the jobs' new statuses (delivered, expired) and the summaries sent together.
 */
export async function deliverLockedPage(
  deps: DeliveryDeps,
  request: DeliveryRequest,
  tx: TransactionSql,
  jobs: readonly Job[],
): Promise<PageOutcome[]> {
  const succeeded = jobs.filter((job) => job.status === 'succeeded');
  const outcomes = await pageAsRead(
    deps,
    tx,
    jobs.filter((job) => job.status !== 'succeeded'),
  );
  const results = await getResults(
    tx,
    succeeded.map((job) => job.resultId!),
    deps.knownResults,
  );
  const charges = await settlePage(deps, request, tx, succeeded);
  outcomes.push(...(await recordPage(deps, request, tx, { succeeded, results, charges })));
  return outcomes;
}

/**
 * The outcomes of a page's jobs that are not succeeded, whose delivery changes nothing (deliver.ts
 * `outcomeAsRead`, one job's): an open job pending, an ended one its error, a delivered one its delivery
 * again (the deliveries and the results not in memory read in one statement each). The rows as read give
 * them, locked or not. A succeeded job is the caller's to deliver.
 */
export async function pageAsRead(
  deps: DeliveryDeps,
  db: Sql | TransactionSql,
  jobs: readonly Job[],
): Promise<PageOutcome[]> {
  const outcomes: PageOutcome[] = [];
  const delivered: Job[] = [];
  for (const job of jobs) {
    if (job.status === 'succeeded') throw new Error(`job ${job.id} is succeeded: it is delivered, not read`);
    if (job.status === 'delivered') delivered.push(job);
    else outcomes.push(statusOutcome(job)!);
  }
  const previous = await findDeliveriesForJobs(
    db,
    delivered.map((job) => job.id),
  );
  const results = await getResults(
    db,
    [...previous.values()].map((d) => d.resultId),
    deps.knownResults,
  );
  for (const job of delivered) outcomes.push(givenAgain(job, previous, results));
  return outcomes;
}

function resultOf(results: Map<number, SimulationResult>, job: Job, resultId: number): SimulationResult {
  const result = results.get(resultId);
  if (!result) throw new ApiError('payload_missing', { message: `The result of ${job.id} is missing.` });
  return result;
}

function givenAgain(
  job: Job,
  previous: Map<string, Delivery>,
  results: Map<number, SimulationResult>,
): PageOutcome {
  const delivery = previous.get(job.id);
  if (!delivery) throw new Error(`job ${job.id} is delivered but has no delivery`);
  return {
    status: 'delivered',
    delivered: { job, result: resultOf(results, job, delivery.resultId), delivery, replayed: true },
  };
}

/**
 * The holds settled, by organisation (a batch's jobs have one), by the delivery core's rule
 * (src/jobs/delivery-core.ts `holdsCredits`: test keys' jobs charge nothing).
 */
async function settlePage(
  deps: DeliveryDeps,
  request: DeliveryRequest,
  tx: TransactionSql,
  jobs: readonly Job[],
): Promise<Map<string, ManySettled>> {
  const byOrg = new Map<string, string[]>();
  for (const job of jobs) {
    if (!holdsCredits(job)) continue;
    byOrg.set(job.orgId, [...(byOrg.get(job.orgId) ?? []), job.reservationId]);
  }
  const settled = new Map<string, ManySettled>();
  for (const orgId of [...byOrg.keys()].sort()) {
    const charges = await deps.ledger.settleMany(orgId, byOrg.get(orgId)!, {
      tx,
      orgId,
      requestId: request.requestId,
      idempotencyKey: request.idempotencyKey,
    });
    for (const [holdId, charge] of charges) settled.set(holdId, charge);
  }
  return settled;
}

/** The deliveries, the jobs' new statuses and the fixture summaries, sent together (one round trip). */
async function recordPage(
  deps: DeliveryDeps,
  request: DeliveryRequest,
  tx: TransactionSql,
  page: { succeeded: Job[]; results: Map<number, SimulationResult>; charges: Map<string, ManySettled> },
): Promise<PageOutcome[]> {
  const now = deps.clock();
  const expired: Job[] = [];
  const deliveries: Array<{ job: Job; result: SimulationResult; delivery: NewDelivery }> = [];
  for (const job of page.succeeded) {
    const result = resultOf(page.results, job, job.resultId!);
    const charge = holdsCredits(job) ? page.charges.get(job.reservationId) : null;
    if (charge === undefined) throw new Error(`the hold of ${job.id} was not settled`);
    if (charge === 'expired') {
      expired.push(job);
      continue;
    }
    const delivery: NewDelivery = {
      ...deliveryFacts(job, request, charge, now),
      id: newId('sim'),
      resultId: result.id,
    };
    deliveries.push({ job, result, delivery });
  }
  const summaries = deliveries.flatMap((item) => summaryOf(item) ?? []);
  const [stored, deliveredJobs, expiredJobs] = await Promise.all([
    insertDeliveries(
      tx,
      deliveries.map((item) => item.delivery),
    ),
    deps.queue.markDeliveryOutcomes(
      tx,
      deliveries.map((item) => item.job),
      'delivered',
    ),
    deps.queue.markDeliveryOutcomes(tx, expired, 'expired'),
    recordFixtureSummaries(tx, summaries),
  ]);
  const outcomes: PageOutcome[] = expiredJobs.map((job) => ({ status: 'expired', job }));
  deliveries.forEach((item, i) => {
    const delivered: DeliveredSimulation = {
      job: deliveredJobs[i]!,
      result: item.result,
      delivery: stored[i]!,
      replayed: false,
    };
    outcomes.push({ status: 'delivered', delivered });
  });
  return outcomes;
}
